"""The demo on a checkpoint's layer: `demo.sh --checkpoint PATH --layer N [--mesh ...]`.

Dimensions come from the checkpoint's config.json. The layer's weights stream onto the emulated
mesh (`tt.checkpoint_moe`: expert by expert, through the converted-weight cache), the layer runs
on seeded random tokens, and its output is compared with the fp32 reference, which reads from
the checkpoint only the experts the tokens chose, one at a time.
"""

from __future__ import annotations

import resource
from pathlib import Path

import torch
from loguru import logger
from ttnn_moe.testing import comp_pcc

from models.deepseek_v3.config import mesh_shape
from models.deepseek_v3.demo import (
    EXPERT_DTYPES,
    DemoResult,
    _forward_recording_ops,
    _log_counters,
    _log_expert_load,
    expert_load_from_dispatch,
)
from models.deepseek_v3.pcc_floors import LAYER_PCC_FLOOR
from models.deepseek_v3.reference import reference_moe
from models.deepseek_v3.tt import device_values, input_to_mesh, output_to_torch
from models.deepseek_v3.tt.checkpoint_moe import load_checkpoint_moe
from models.deepseek_v3.tt.emulator_counters import MeshCounters
from models.deepseek_v3.tt.preset_mesh import open_preset_mesh
from models.deepseek_v3.tt.ttnn_api import ttnn


def peak_rss_bytes() -> int:
    """This process's peak resident memory so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run_checkpoint_demo(
    checkpoint: str | Path,
    layer: int,
    mesh: str = "tg",
    tokens: int = 32,
    seed: int = 0,
    expert_dtype: str = "bfloat16",
) -> DemoResult:
    rows, cols = mesh_shape(mesh)
    if expert_dtype not in EXPERT_DTYPES:
        raise ValueError(f"unknown expert dtype {expert_dtype!r}; known: {sorted(EXPERT_DTYPES)}")
    if tokens <= 0 or tokens % rows != 0:
        raise ValueError(f"--tokens {tokens} must be a positive multiple of the {rows} mesh rows of {mesh}")
    mesh_device = open_preset_mesh(mesh)
    try:
        load = load_checkpoint_moe(checkpoint, layer, mesh_device, expert_dtype=EXPERT_DTYPES[expert_dtype])
        config = load.layer.config
        logger.info(
            f"checkpoint {checkpoint} layer {layer} on mesh {mesh} {rows}x{cols}: H={config.hidden_size}, "
            f"I={config.moe_intermediate_size}, E={config.n_routed_experts}, K={config.num_experts_per_tok}, "
            f"{tokens} tokens, seed {seed}, experts {expert_dtype}"
        )
        logger.info(
            f"weights: {load.shards_converted} device expert shards converted, {load.shards_from_cache} from the "
            f"cache {load.cache_directory}, in {load.seconds:.2f} s; peak RSS {peak_rss_bytes() / 2**20:.0f} MiB"
        )
        x = torch.randn(tokens, config.hidden_size, generator=torch.Generator().manual_seed(seed + 1))
        x = x.bfloat16().float()  # (T, H): the mesh's bf16 activations, in fp32 for the reference
        kept: dict[str, ttnn.Tensor] = {}
        stage_shapes: dict[str, list[tuple[int, ...]]] = {}

        def observe(stage: str, t: ttnn.Tensor) -> None:
            kept[stage] = t
            stage_shapes[stage] = [tuple(t.shape)] * mesh_device.get_num_devices()

        x_mesh = input_to_mesh(x, mesh_device)
        mesh_device.reset_counters()
        y_mesh, device_ops = _forward_recording_ops(load.moe, x_mesh, observe)
        y = output_to_torch(y_mesh)  # (T, H)
        counters = MeshCounters.since_reset(mesh_device)
        counts = device_values(kept["dispatch.num_routed_tokens"])  # (E_l, 1) per device
        topk_indices = torch.stack(device_values(kept["gate.topk_indices"])).reshape(
            rows * cols, -1, config.num_experts_per_tok
        )  # (R*C, B, K)
        _log_counters(
            counters, counts, topk_indices, config, (rows, cols), load.moe.weights.experts_per_device, device_ops
        )
    finally:
        ttnn.close_mesh_device(mesh_device)
    expert_load = expert_load_from_dispatch(counts, config.n_routed_experts)
    _log_expert_load(expert_load, [int(c.to(torch.int64).sum()) for c in counts])

    bar = LAYER_PCC_FLOOR[expert_dtype]
    passed, pcc = comp_pcc(reference_moe(x, load.layer, config), y, bar)
    logger.info(f"PCC mesh vs reference_moe: {pcc:.7f} ({'PASS' if passed else 'FAIL'}, bar {bar})")
    logger.info(f"peak RSS {peak_rss_bytes() / 2**20:.0f} MiB")
    return DemoResult(
        pcc=pcc,
        passed=passed,
        expert_load=expert_load,
        stage_shapes=stage_shapes,
        counters=counters,
        device_ops=device_ops,
    )
