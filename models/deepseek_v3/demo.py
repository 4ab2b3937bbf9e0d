"""DeepSeek-V3 MoE layer on a simulated mesh, checked against the single-device reference.

    python -m models.deepseek_v3.demo --mesh tg --config mini --tokens 32 --seed 0

Builds random weights, splits the tokens over the mesh (rows: data parallel,
columns: tensor parallel), runs `tt.TtMoE` on an emulated mesh (our kernels in
the Tensix emulator, ttnn's collectives and layout conversions as device programs
too), logs what every stage holds per device, the layer as a list of device ops
(programs, tile matmuls, NOC and fabric bytes, modeled time), what was computed on
or read back to the host during the forward pass (nothing), how the tokens spread
over the experts and what the emulator counted, and compares the result with
`reference_moe`. Exits non-zero if the PCC is below the bar.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from functools import partial
from typing import Sequence

import torch
from loguru import logger
from ttnn_moe.testing import comp_pcc

try:  # the backend is chosen here, first: TTNN_MOE_BACKEND=hardware needs the real ttnn
    import models.deepseek_v3.tt.ttnn_api  # noqa: F401
except RuntimeError as unavailable:
    sys.exit(f"demo: {unavailable}")

from models.deepseek_v3.config import MESH_PRESETS, DeepseekV3MoEConfig, mesh_shape
from models.deepseek_v3.device_time_report import device_time_profile
from models.deepseek_v3.pcc_floors import LAYER_PCC_FLOOR
from models.deepseek_v3.reference import reference_moe
from models.deepseek_v3.tt import TtMoE, device_values, input_to_mesh, output_to_torch
from models.deepseek_v3.tt.emulator_counters import (
    MeshCounters,
    needed_expert_tile_matmuls,
    needed_gate_tile_matmuls,
    needed_shared_expert_tile_matmuls,
    process_jit_stats,
    remote_token_rows,
)
from models.deepseek_v3.tt.moe_weights import EXPERT_DTYPES, expert_shard_from_state_dict, load_tt_moe_weights
from models.deepseek_v3.tt.op_flow import DeviceOp, OpFlowRecorder, format_op_flow
from models.deepseek_v3.tt.preset_mesh import open_preset_mesh
from models.deepseek_v3.tt.ttnn_api import emulator, ttnn, ttnn_moe
from models.deepseek_v3.tt.weight_cache import ExpertWeightCache, cache_key, weight_cache_dir
from models.deepseek_v3.weights import RandomMoELayer

# mini-ring: the mini config with intermediate 384, the smallest one moe_compute's 12-core ring runs
# (`--path ttmetal-optimized`).
CONFIGS = {
    "mini": DeepseekV3MoEConfig.mini,
    "mini-ring": partial(DeepseekV3MoEConfig.mini, moe_intermediate_size=384),
    "full": DeepseekV3MoEConfig,
}
LARGE_WEIGHT_BYTES = 4 << 30  # refuse to emulate more than this without --allow-large


@dataclass
class DemoResult:
    pcc: float
    passed: bool
    expert_load: torch.Tensor  # (E,) assignments each expert received
    stage_shapes: dict[str, list[tuple[int, ...]]]  # stage -> per-device shape
    counters: MeshCounters
    device_ops: list[DeviceOp]  # the forward pass as device ops, in order (emulator only)


def weight_bytes(config: DeepseekV3MoEConfig, dtype: torch.dtype = torch.bfloat16) -> int:
    """Size of the layer's weights: gate, routed experts and shared experts."""
    E, H, I = config.n_routed_experts, config.hidden_size, config.moe_intermediate_size
    elements = E * H + E * 3 * H * I + 3 * H * config.shared_intermediate_size
    return elements * dtype.itemsize


def expert_load_from_dispatch(counts_per_device: Sequence[torch.Tensor], num_experts: int) -> torch.Tensor:
    """Per-device dispatch counts (E_l, 1), local experts in ascending id -> (E,) assignments per
    global expert, under the placement TtMoE uses (`ttnn_moe.expert_mapping`)."""
    owner = ttnn_moe.expert_mapping(num_experts, len(counts_per_device))[0, 0].argmax(dim=1)  # (E,)
    load = torch.zeros(num_experts, dtype=torch.int64)
    for device, counts in enumerate(counts_per_device):
        load[owner == device] = counts.reshape(-1).to(torch.int64)
    return load


def _log_expert_load(load: torch.Tensor, rows_per_device: Sequence[int]) -> None:
    loads = load.float()
    logger.info(
        f"tokens per expert: min {int(load.min())}, max {int(load.max())}, mean {loads.mean():.2f}, "
        f"idle experts {int((load == 0).sum())} of {load.numel()}, total assignments {int(load.sum())}"
    )
    histogram = torch.bincount(load)
    width = 40 / max(int(histogram.max()), 1)
    for value, experts in enumerate(histogram.tolist()):
        if experts:
            logger.info(f"  {value:>4} tokens: {experts:>4} experts {'#' * max(1, round(experts * width))}")
    logger.info(f"dispatched rows per device: min {min(rows_per_device)}, max {max(rows_per_device)}")


@dataclass
class _MeshRun:
    y: torch.Tensor  # (T, H)
    counts_per_device: list[torch.Tensor]  # (E_l, 1) dispatch counts per device
    stage_shapes: dict[str, list[tuple[int, ...]]]
    counters: MeshCounters
    device_ops: list[DeviceOp]


def _forward_recording_ops(moe: TtMoE, x_mesh, observe) -> tuple[object, list[DeviceOp]]:
    """moe(x_mesh) with `observe` as its observer; with the emulator, also the device ops it ran and
    a log of the host work it did (host computations, device reads: none expected)."""
    if emulator is None:  # the real ttnn: no emulator counters
        return moe(x_mesh, observer=observe), []
    before = emulator.host_traffic()
    with emulator.record_runs() as runs:
        recorder = OpFlowRecorder(runs)

        def both(stage: str, t) -> None:
            recorder(stage, t)
            observe(stage, t)

        y = moe(x_mesh, observer=both)
    traffic = emulator.host_traffic() - before
    logger.info(f"the layer as device ops ({len(recorder.ops)} ops, {len(runs)} mesh program launches):")
    for line in format_op_flow(recorder.ops):
        logger.info(line)
    logger.info(
        f"host work inside forward: {traffic.host_computations} host computations, "
        f"{traffic.device_reads} device-to-host reads"
    )
    return y, recorder.ops


def _log_counters(
    counters: MeshCounters,
    counts: list[torch.Tensor],
    topk_indices: torch.Tensor,
    config: DeepseekV3MoEConfig,
    mesh: tuple[int, int],
    experts_per_device: int,
    device_ops: list[DeviceOp],
) -> None:
    H, I = config.hidden_size, config.moe_intermediate_size
    devices, tokens_per_device = topk_indices.shape[:2]
    needed = (
        needed_expert_tile_matmuls(counts, H, I)
        + needed_gate_tile_matmuls(devices, tokens_per_device, config.n_routed_experts, H)
        + needed_shared_expert_tile_matmuls(devices, tokens_per_device, H, config.shared_intermediate_size // mesh[1])
    )
    logger.info(
        f"emulator: tile matmuls {counters.tile_matmuls} (gate, routed and shared experts need {needed}: "
        f"ratio {counters.tile_matmuls / max(needed, 1):.2f})"
    )
    jit = process_jit_stats()
    logger.info(
        f"emulator: kernel builds this forward {counters.kernel_builds}, cache hits "
        f"{counters.kernel_cache_hits}; process total builds {jit['builds']}, cache hits {jit['cache_hits']}"
    )
    # Each remote (token, destination) row crosses the fabric twice: out in dispatch, back in combine.
    row_bytes = 2 * remote_token_rows(topk_indices, mesh, experts_per_device) * H * 2
    collective_bytes = sum(op.fabric_bytes for op in device_ops if op.name.startswith("ttnn."))
    logger.info(
        f"emulator: fabric {counters.fabric_packets} packets, {counters.fabric_bytes} bytes: remote token "
        f"rows out and back {row_bytes}, all_gather and reduce_scatter {collective_bytes}, other (routing "
        f"metadata and control) {counters.fabric_bytes - row_bytes - collective_bytes}"
    )
    logger.info(f"emulator: DRAM bytes read by kernels {counters.noc_bytes_read_dram}")


def _run_on_mesh(
    x: torch.Tensor, state_dict, config: DeepseekV3MoEConfig, mesh_name: str, expert_dtype: str
) -> _MeshRun:
    rows, cols = mesh = mesh_shape(mesh_name)
    mesh_device = open_preset_mesh(mesh_name)
    try:
        # Expert by expert from the lazy layer: the host never holds the whole layer. A large layer's
        # converted experts go to the converted-weight cache, so the next run of it loads them.
        dtype = EXPERT_DTYPES[expert_dtype]
        source = expert_shard_from_state_dict(state_dict, dtype)
        if weight_bytes(config) > LARGE_WEIGHT_BYTES:
            store = ExpertWeightCache(weight_cache_dir() / cache_key(state_dict.fingerprint(), mesh, dtype))
            logger.info(f"converted expert weights cached in {store.directory}")
            source = store.wrap(source)
        weights = load_tt_moe_weights(state_dict, config, mesh_device, expert_dtype=dtype, expert_source=source)
        moe = TtMoE.from_weights(weights, config, mesh_device)
        stage_shapes: dict[str, list[tuple[int, ...]]] = {}
        kept: dict[str, ttnn.Tensor] = {}

        def observe(stage: str, t: ttnn.Tensor) -> None:
            shape = tuple(t.shape)
            stage_shapes[stage] = [shape] * mesh_device.get_num_devices()
            kept[stage] = t
            logger.info(f"{stage:<26} per device {shape} {t.dtype.name} {t.layout.name} on all {rows}x{cols} devices")

        x_mesh = input_to_mesh(x, mesh_device)  # (B, H/C)
        mesh_device.reset_counters()
        y_mesh, device_ops = _forward_recording_ops(moe, x_mesh, observe)
        y = output_to_torch(y_mesh)  # (T, H)
        counters = MeshCounters.since_reset(mesh_device)
        counts = device_values(kept["dispatch.num_routed_tokens"])  # (E_l, 1) each
        topk_indices = torch.stack(device_values(kept["gate.topk_indices"])).reshape(
            rows * cols, -1, config.num_experts_per_tok
        )  # (R*C, B, K)
        _log_counters(counters, counts, topk_indices, config, mesh, moe.weights.experts_per_device, device_ops)
    finally:
        ttnn.close_mesh_device(mesh_device)
    return _MeshRun(y, counts, stage_shapes, counters, device_ops)


def run_demo(
    mesh: str = "tg",
    config_name: str = "mini",
    tokens: int = 32,
    seed: int = 0,
    allow_large: bool = False,
    expert_dtype: str = "bfloat16",
) -> DemoResult:
    """expert_dtype: the routed experts' weight dtype on the emulated devices."""
    rows, cols = mesh_shape(mesh)
    if config_name not in CONFIGS:
        raise ValueError(f"unknown config {config_name!r}; known configs: {sorted(CONFIGS)}")
    if expert_dtype not in EXPERT_DTYPES:
        raise ValueError(f"unknown expert dtype {expert_dtype!r}; known: {sorted(EXPERT_DTYPES)}")
    config = CONFIGS[config_name]()
    if tokens <= 0 or tokens % rows != 0:
        raise ValueError(f"--tokens {tokens} must be a positive multiple of the {rows} mesh rows of {mesh}")
    size = weight_bytes(config)
    if size > LARGE_WEIGHT_BYTES and not allow_large:
        raise ValueError(
            f"config {config_name!r} puts ~{size / 2**30:.0f} GiB of bf16 weights in the emulated devices' "
            f"memory (the host generates them one expert at a time); pass --allow-large to run it anyway"
        )
    logger.info(
        f"mesh {mesh} {rows}x{cols}, config {config_name} (H={config.hidden_size}, "
        f"I={config.moe_intermediate_size}, E={config.n_routed_experts}, K={config.num_experts_per_tok}), "
        f"{tokens} tokens ({tokens // rows} per row), seed {seed}, experts {expert_dtype}"
    )

    state_dict = RandomMoELayer(config, seed)  # generated tensor by tensor as the upload and reference read
    # Activations enter the mesh in bf16; the reference gets the same bf16 values (in fp32).
    x = torch.randn(tokens, config.hidden_size, generator=torch.Generator().manual_seed(seed + 1))
    x = x.bfloat16().float()  # (T, H)

    run = _run_on_mesh(x, state_dict, config, mesh, expert_dtype)
    load = expert_load_from_dispatch(run.counts_per_device, config.n_routed_experts)
    _log_expert_load(load, [int(c.to(torch.int64).sum()) for c in run.counts_per_device])

    bar = LAYER_PCC_FLOOR[expert_dtype]
    passed, pcc = comp_pcc(reference_moe(x, state_dict, config), run.y, bar)
    logger.info(f"PCC mesh vs reference_moe: {pcc:.7f} ({'PASS' if passed else 'FAIL'}, bar {bar})")
    return DemoResult(
        pcc=pcc,
        passed=passed,
        expert_load=load,
        stage_shapes=run.stage_shapes,
        counters=run.counters,
        device_ops=run.device_ops,
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mesh", choices=sorted(MESH_PRESETS), default="tg")
    parser.add_argument("--config", choices=sorted(CONFIGS), default="mini")
    parser.add_argument("--tokens", type=int, default=32, help="total tokens, split evenly over the mesh rows")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--expert-dtype",
        choices=sorted(EXPERT_DTYPES),
        default="bfloat16",
        help="routed experts' weight dtype on the devices",
    )
    parser.add_argument("--allow-large", action="store_true", help="allow building weights over 4 GiB")
    parser.add_argument(
        "--path",
        choices=["ours", "ttmetal-classic", "ttmetal-optimized"],
        default="ours",
        help="our layer, tt-metal's classic flow or its optimized decode flow (with --config mini-ring or full)",
    )
    # A checkpoint's layer instead of random weights (dimensions from its config.json).
    parser.add_argument("--checkpoint", help="safetensors checkpoint directory (official fp8 or transformers layout)")
    parser.add_argument("--layer", type=int, help="with --checkpoint: the MoE layer to run")
    # Modeled device time of the layer's ops (models/deepseek_v3/device_time_report.py).
    parser.add_argument(
        "--profile",
        metavar="DIR",
        help="write ops_perf_results.csv, trace.json and tt-metal's raw logs (.logs/) to DIR",
    )
    return parser.parse_args(argv)


def _run_checkpoint(args: argparse.Namespace) -> DemoResult:
    """--checkpoint PATH --layer N (models/deepseek_v3/checkpoint_demo.py)."""
    from models.deepseek_v3.checkpoint_demo import run_checkpoint_demo  # noqa: PLC0415 (imports this module)

    if args.layer is None:
        raise ValueError("--checkpoint needs --layer N, the MoE layer to run")
    return run_checkpoint_demo(args.checkpoint, args.layer, args.mesh, args.tokens, args.seed, args.expert_dtype)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    # The mini layer's tensors are small: extra torch threads only spin on shared cores.
    torch.set_num_threads(1)
    logger.remove()
    # Look sys.stderr up per message: callers (tests) may swap it after main() configured the logger.
    logger.add(lambda message: sys.stderr.write(message), format="{time:HH:mm:ss} {message}", level="INFO")
    try:
        with device_time_profile(args.profile):
            if args.checkpoint is not None or args.layer is not None:
                if args.checkpoint is None:
                    raise ValueError(f"--layer {args.layer} needs --checkpoint PATH")
                result = _run_checkpoint(args)
            elif args.path.startswith("ttmetal-"):
                from models.deepseek_v3.ttmetal_demo import run_ttmetal_demo  # noqa: PLC0415

                flow = args.path.removeprefix("ttmetal-")
                result = run_ttmetal_demo(args.mesh, args.config, args.tokens, args.seed, args.expert_dtype, flow)
            else:
                result = run_demo(args.mesh, args.config, args.tokens, args.seed, args.allow_large, args.expert_dtype)
    except (ValueError, NotImplementedError) as error:  # bad arguments, or a flow this mesh cannot run
        logger.error(str(error))
        return 2
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(main())
