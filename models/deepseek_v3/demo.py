"""DeepSeek-V3 MoE layer on a simulated mesh, checked against the single-device reference.

    python -m models.deepseek_v3.demo --mesh tg --config mini --tokens 32 --seed 0

Builds random weights, splits the tokens over the mesh (rows: data parallel,
columns: tensor parallel), runs the mesh flow on an op backend, logs what every
stage holds per device and how the tokens spread over the experts, and compares
the result with `reference_moe`. Exits non-zero if the PCC is below the bar.
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
from models.deepseek_v3.weights import random_moe_state_dict
from ttnn_moe.testing import comp_pcc

PCC_BAR = 0.999  # SPEC section 6: whole MoE layer on every mesh vs the fp32 golden
CONFIGS = {"mini": DeepseekV3MoEConfig.mini, "full": DeepseekV3MoEConfig}
LARGE_WEIGHT_BYTES = 4 << 30  # refuse to build more than this without --allow-large


@dataclass
class DemoResult:
    pcc: float
    passed: bool
    expert_load: torch.Tensor                 # (E,) assignments each expert received
    stage_shapes: dict[str, list[tuple[int, ...]]] = field(default_factory=dict)  # stage -> per-device shape


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


def run_demo(mesh: str = "tg", config_name: str = "mini", tokens: int = 32, seed: int = 0,
             backend_name: str = "golden", allow_large: bool = False) -> DemoResult:
    rows, cols = mesh_shape(mesh)
    if config_name not in CONFIGS:
        raise ValueError(f"unknown config {config_name!r}; known configs: {sorted(CONFIGS)}")
    config = CONFIGS[config_name]()
    if tokens <= 0 or tokens % rows != 0:
        raise ValueError(f"--tokens {tokens} must be a positive multiple of the {rows} mesh rows of {mesh}")
    size = weight_bytes(config)
    if size > LARGE_WEIGHT_BYTES and not allow_large:
        raise ValueError(f"config {config_name!r} needs ~{size / 2**30:.0f} GiB of bf16 weights (plus fp32 "
                         f"working copies); pass --allow-large to build them anyway")
    backend = get_backend(backend_name)
    logger.info(f"mesh {mesh} {rows}x{cols}, config {config_name} (H={config.hidden_size}, "
                f"I={config.moe_intermediate_size}, E={config.n_routed_experts}, K={config.num_experts_per_tok}), "
                f"{tokens} tokens ({tokens // rows} per row), seed {seed}, backend {backend.name}")

    state_dict = random_moe_state_dict(config, seed)
    x = torch.randn(tokens, config.hidden_size, generator=torch.Generator().manual_seed(seed + 1))  # (T, H)

    stage_shapes: dict[str, list[tuple[int, ...]]] = {}
    stage_tensors: dict[str, Sequence[torch.Tensor]] = {}

    def observe(stage: str, tensors: Sequence[torch.Tensor]) -> None:
        stage_shapes[stage] = [tuple(t.shape) for t in tensors]
        stage_tensors[stage] = tensors
        _log_stage(stage, tensors)

    y_mesh = assemble_mesh_output(
        reference_moe_mesh(split_input_for_mesh(x, (rows, cols)), state_dict, config, (rows, cols),
                           backend=backend, observer=observe), (rows, cols))              # (T, H)

    counts = stage_tensors["dispatch.num_routed_tokens"]                                  # per device (E_l, 1)
    load = expert_load_from_dispatch(backend, counts, config.n_routed_experts)
    _log_expert_load(load, [int(c.sum()) for c in counts])

    passed, pcc = comp_pcc(reference_moe(x, state_dict, config), y_mesh, PCC_BAR)
    logger.info(f"PCC mesh vs reference_moe: {pcc:.7f} ({'PASS' if passed else 'FAIL'}, bar {PCC_BAR})")
    return DemoResult(pcc=pcc, passed=passed, expert_load=load, stage_shapes=stage_shapes)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mesh", choices=sorted(MESH_PRESETS), default="tg")
    parser.add_argument("--config", choices=sorted(CONFIGS), default="mini")
    parser.add_argument("--tokens", type=int, default=32, help="total tokens, split evenly over the mesh rows")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backend", choices=sorted(BACKENDS), default="golden")
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
        result = run_demo(args.mesh, args.config, args.tokens, args.seed, args.backend, args.allow_large)
    except ValueError as error:
        logger.error(str(error))
        return 2
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(main())
