"""DeepSeek-V3 MoE layer on a simulated mesh, checked against the single-device reference.

    python -m models.deepseek_v3.demo --mesh tg --config mini --tokens 32 --seed 0 --backend emulator

Builds random weights, splits the tokens over the mesh (rows: data parallel,
columns: tensor parallel), runs the mesh flow, logs what every stage holds per
device and how the tokens spread over the experts, and compares the result with
`reference_moe`. Exits non-zero if the PCC is below the bar.

Backends: `emulator` runs `tt.TtMoE` on an emulated mesh (our kernels in the
Tensix emulator, host built-ins around them) and logs the emulator's counters;
`golden` runs `reference_moe_mesh` on the torch goldens of the ops.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

import torch
from loguru import logger

from models.deepseek_v3.backends import BACKENDS, MeshOpBackend, get_backend
from models.deepseek_v3.config import MESH_PRESETS, DeepseekV3MoEConfig, mesh_shape
from models.deepseek_v3.reference import (
    assemble_mesh_output,
    reference_moe,
    reference_moe_mesh,
    split_input_for_mesh,
)
from models.deepseek_v3.tt import TtMoE, device_values, input_to_mesh, output_to_torch
from models.deepseek_v3.tt.emulator_counters import (
    MeshCounters,
    needed_expert_tile_matmuls,
    process_jit_stats,
    remote_token_rows,
)
from models.deepseek_v3.weights import random_moe_state_dict
from ttnn_moe import emu
from ttnn_moe.testing import comp_pcc

PCC_BAR = 0.999  # SPEC section 6: whole MoE layer on every mesh vs the fp32 golden
CONFIGS = {"mini": DeepseekV3MoEConfig.mini, "full": DeepseekV3MoEConfig}
LARGE_WEIGHT_BYTES = 4 << 30  # refuse to build more than this without --allow-large
EMULATOR = "emulator"
DEMO_BACKENDS = (EMULATOR, *BACKENDS)
EXPERT_DTYPES = {"bfloat16": emu.bfloat16, "bfloat8_b": emu.bfloat8_b}


@dataclass
class DemoResult:
    pcc: float
    passed: bool
    expert_load: torch.Tensor                 # (E,) assignments each expert received
    stage_shapes: dict[str, list[tuple[int, ...]]] = field(default_factory=dict)  # stage -> per-device shape
    counters: MeshCounters | None = None      # emulator backend only


def weight_bytes(config: DeepseekV3MoEConfig, dtype: torch.dtype = torch.bfloat16) -> int:
    """Size of the layer's weights: gate, routed experts and shared experts."""
    E, H, I = config.n_routed_experts, config.hidden_size, config.moe_intermediate_size
    elements = E * H + E * 3 * H * I + 3 * H * config.shared_intermediate_size
    return elements * dtype.itemsize


def _log_stage(stage: str, tensors: Sequence[torch.Tensor]) -> None:
    shapes = Counter((tuple(t.shape), str(t.dtype).removeprefix("torch.")) for t in tensors)
    summary = ", ".join(f"{shape} {dtype} x{count}" for (shape, dtype), count in sorted(shapes.items()))
    logger.info(f"{stage:<26} device 0: {tuple(tensors[0].shape)} {str(tensors[0].dtype).removeprefix('torch.')}"
                f" | all {len(tensors)} devices: {summary}")


def expert_load_from_dispatch(backend: MeshOpBackend, counts_per_device: Sequence[torch.Tensor],
                              num_experts: int) -> torch.Tensor:
    """Per-device dispatch counts (E_l, 1) in local-slot order -> (E,) assignments per global expert."""
    mapping = backend.expert_mapping_for_mesh(num_experts, len(counts_per_device))
    load = torch.zeros(num_experts, dtype=torch.int64)
    for device, counts in enumerate(counts_per_device):
        slots = backend.local_expert_slots(mapping, device)                  # (E,)
        owned = slots >= 0
        load[owned] = counts.reshape(-1).to(torch.int64)[slots[owned].long()]
    return load


def _log_expert_load(load: torch.Tensor, rows_per_device: Sequence[int]) -> None:
    loads = load.float()
    logger.info(f"tokens per expert: min {int(load.min())}, max {int(load.max())}, mean {loads.mean():.2f}, "
                f"idle experts {int((load == 0).sum())} of {load.numel()}, total assignments {int(load.sum())}")
    histogram = torch.bincount(load)
    width = 40 / max(int(histogram.max()), 1)
    for value, experts in enumerate(histogram.tolist()):
        if experts:
            logger.info(f"  {value:>4} tokens: {experts:>4} experts {'#' * max(1, round(experts * width))}")
    logger.info(f"dispatched rows per device: min {min(rows_per_device)}, max {max(rows_per_device)}")


@dataclass
class _MeshRun:
    y: torch.Tensor                                   # (T, H)
    counts_per_device: list[torch.Tensor]            # (E_l, 1) dispatch counts per device
    stage_shapes: dict[str, list[tuple[int, ...]]]
    counters: MeshCounters | None = None


def _run_golden(x: torch.Tensor, state_dict, config: DeepseekV3MoEConfig, mesh: tuple[int, int],
                backend: MeshOpBackend) -> _MeshRun:
    stage_shapes: dict[str, list[tuple[int, ...]]] = {}
    stage_tensors: dict[str, Sequence[torch.Tensor]] = {}

    def observe(stage: str, tensors: Sequence[torch.Tensor]) -> None:
        stage_shapes[stage] = [tuple(t.shape) for t in tensors]
        stage_tensors[stage] = tensors
        _log_stage(stage, tensors)

    y = assemble_mesh_output(
        reference_moe_mesh(split_input_for_mesh(x, mesh), state_dict, config, mesh, backend=backend,
                           observer=observe), mesh)                                        # (T, H)
    return _MeshRun(y, list(stage_tensors["dispatch.num_routed_tokens"]), stage_shapes)


def _log_counters(counters: MeshCounters, counts: list[torch.Tensor], topk_indices: torch.Tensor,
                  config: DeepseekV3MoEConfig, mesh: tuple[int, int], experts_per_device: int) -> None:
    H, I = config.hidden_size, config.moe_intermediate_size
    needed = needed_expert_tile_matmuls(counts, H, I)
    logger.info(f"emulator: tile matmuls {counters.tile_matmuls} (routed experts need {needed}: "
                f"ratio {counters.tile_matmuls / max(needed, 1):.2f})")
    jit = process_jit_stats()
    logger.info(f"emulator: kernel builds this forward {counters.kernel_builds}, cache hits "
                f"{counters.kernel_cache_hits}; process total builds {jit['builds']}, cache hits {jit['cache_hits']}")
    # Each remote (token, destination) row crosses the fabric twice: out in dispatch, back in combine.
    row_bytes = 2 * remote_token_rows(topk_indices, mesh, experts_per_device) * H * 2
    logger.info(f"emulator: fabric {counters.fabric_packets} packets, {counters.fabric_bytes} bytes: remote token "
                f"rows out and back {row_bytes}, other (routing metadata and control) "
                f"{counters.fabric_bytes - row_bytes}")
    logger.info(f"emulator: DRAM bytes read by kernels {counters.noc_bytes_read_dram}")


def _run_emulator(x: torch.Tensor, state_dict, config: DeepseekV3MoEConfig, mesh: tuple[int, int],
                  expert_dtype: str) -> _MeshRun:
    rows, cols = mesh
    mesh_device = emu.open_mesh_device(emu.MeshShape(rows, cols))
    try:
        moe = TtMoE(state_dict, config, mesh_device, expert_dtype=EXPERT_DTYPES[expert_dtype])
        stage_shapes: dict[str, list[tuple[int, ...]]] = {}
        kept: dict[str, emu.Tensor] = {}

        def observe(stage: str, t: emu.Tensor) -> None:
            shape = tuple(t.shape)
            stage_shapes[stage] = [shape] * mesh_device.get_num_devices()
            kept[stage] = t
            logger.info(f"{stage:<26} per device {shape} {t.dtype.name} {t.layout.name} "
                        f"on all {rows}x{cols} devices")

        x_mesh = input_to_mesh(x, mesh_device)                                              # (B, H/C)
        mesh_device.reset_counters()
        y = output_to_torch(moe(x_mesh, observer=observe))                                  # (T, H)
        counters = MeshCounters.since_reset(mesh_device)
        counts = device_values(kept["dispatch.num_routed_tokens"])                            # (E_l, 1) each
        topk_indices = torch.stack(device_values(kept["gate.topk_indices"])).reshape(
            rows * cols, -1, config.num_experts_per_tok)                                    # (R*C, B, K)
        _log_counters(counters, counts, topk_indices, config, mesh, moe.weights.experts_per_device)
    finally:
        emu.close_mesh_device(mesh_device)
    return _MeshRun(y, counts, stage_shapes, counters)


def run_demo(mesh: str = "tg", config_name: str = "mini", tokens: int = 32, seed: int = 0,
             backend_name: str = EMULATOR, allow_large: bool = False,
             expert_dtype: str = "bfloat16") -> DemoResult:
    """expert_dtype: the routed experts' weight dtype on the emulated devices (emulator backend)."""
    rows, cols = mesh_shape(mesh)
    if config_name not in CONFIGS:
        raise ValueError(f"unknown config {config_name!r}; known configs: {sorted(CONFIGS)}")
    if backend_name not in DEMO_BACKENDS:
        raise ValueError(f"unknown backend {backend_name!r}; known backends: {sorted(DEMO_BACKENDS)}")
    if expert_dtype not in EXPERT_DTYPES:
        raise ValueError(f"unknown expert dtype {expert_dtype!r}; known: {sorted(EXPERT_DTYPES)}")
    if expert_dtype != "bfloat16" and backend_name != EMULATOR:
        raise ValueError(f"--expert-dtype {expert_dtype} needs --backend {EMULATOR}")
    config = CONFIGS[config_name]()
    if tokens <= 0 or tokens % rows != 0:
        raise ValueError(f"--tokens {tokens} must be a positive multiple of the {rows} mesh rows of {mesh}")
    size = weight_bytes(config)
    if size > LARGE_WEIGHT_BYTES and not allow_large:
        raise ValueError(f"config {config_name!r} needs ~{size / 2**30:.0f} GiB of bf16 weights (plus fp32 "
                         f"working copies); pass --allow-large to build them anyway")
    logger.info(f"mesh {mesh} {rows}x{cols}, config {config_name} (H={config.hidden_size}, "
                f"I={config.moe_intermediate_size}, E={config.n_routed_experts}, K={config.num_experts_per_tok}), "
                f"{tokens} tokens ({tokens // rows} per row), seed {seed}, backend {backend_name}, experts {expert_dtype}")

    state_dict = random_moe_state_dict(config, seed)
    # Activations enter the mesh in bf16; the reference gets the same bf16 values (in fp32).
    x = torch.randn(tokens, config.hidden_size, generator=torch.Generator().manual_seed(seed + 1))
    x = x.bfloat16().float()                                                                # (T, H)

    if backend_name == EMULATOR:
        run = _run_emulator(x, state_dict, config, (rows, cols), expert_dtype)
    else:
        run = _run_golden(x, state_dict, config, (rows, cols), get_backend(backend_name))

    # Both paths place expert e on device e // (E / devices): the golden mapping reads the counts.
    load = expert_load_from_dispatch(get_backend("golden"), run.counts_per_device, config.n_routed_experts)
    _log_expert_load(load, [int(c.to(torch.int64).sum()) for c in run.counts_per_device])

    passed, pcc = comp_pcc(reference_moe(x, state_dict, config), run.y, PCC_BAR)
    logger.info(f"PCC mesh vs reference_moe: {pcc:.7f} ({'PASS' if passed else 'FAIL'}, bar {PCC_BAR})")
    return DemoResult(pcc=pcc, passed=passed, expert_load=load, stage_shapes=run.stage_shapes,
                      counters=run.counters)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mesh", choices=sorted(MESH_PRESETS), default="tg")
    parser.add_argument("--config", choices=sorted(CONFIGS), default="mini")
    parser.add_argument("--tokens", type=int, default=32, help="total tokens, split evenly over the mesh rows")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backend", choices=sorted(DEMO_BACKENDS), default=EMULATOR)
    parser.add_argument("--expert-dtype", choices=sorted(EXPERT_DTYPES), default="bfloat16",
                        help="routed experts' weight dtype on the devices (emulator backend)")
    parser.add_argument("--allow-large", action="store_true", help="allow building weights over 4 GiB")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    # The mini layer's tensors are small: extra torch threads only spin on shared cores.
    torch.set_num_threads(1)
    logger.remove()
    # Look sys.stderr up per message: callers (tests) may swap it after main() configured the logger.
    logger.add(lambda message: sys.stderr.write(message), format="{time:HH:mm:ss} {message}", level="INFO")
    try:
        result = run_demo(args.mesh, args.config, args.tokens, args.seed, args.backend, args.allow_large,
                          args.expert_dtype)
    except ValueError as error:
        logger.error(str(error))
        return 2
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(main())
