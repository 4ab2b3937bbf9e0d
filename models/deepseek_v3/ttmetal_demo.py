"""The demo's `--path ttmetal-classic` and `--path ttmetal-optimized`: tt-metal's classic MoE flow or its optimized
decode flow (`tt_baseline.TtMoEBaseline(path=...)`) on the emulated mesh instead of ours, with the same random
weights, tokens and reference check. The optimized flow runs with the full Wormhole grid and a ring fabric,
bfloat4_b experts and an intermediate size of at least 384 (`--config mini-ring`); elsewhere its refusal says
why.

Logs the flow as a list of ops (device programs, tile matmuls, NOC and fabric bytes, modeled time),
which of tt-metal's ops ran as host stand-ins (their work is not in the modeled time) and the host
computations and device reads the emulator counted, then the PCC against `reference_moe` with
tt-metal's own bar for the layer (0.97).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from loguru import logger
from ttnn_moe.testing import comp_pcc

from models.deepseek_v3.config import mesh_shape
from models.deepseek_v3.demo import CONFIGS
from models.deepseek_v3.reference import reference_moe
from models.deepseek_v3.tt import input_to_mesh, output_to_torch
from models.deepseek_v3.tt.moe_weights import EXPERT_DTYPES
from models.deepseek_v3.tt.op_flow import OpFlowRecorder, format_op_flow
from models.deepseek_v3.tt.preset_mesh import open_preset_mesh
from models.deepseek_v3.tt.ttnn_api import emulator, ttnn
from models.deepseek_v3.tt_baseline import TtMoEBaseline
from models.deepseek_v3.tt_baseline.optimized import open_mesh
from models.deepseek_v3.weights import RandomMoELayer

TTMETAL_LAYER_PCC = 0.97  # tt-metal's models/demos/deepseek_v3/tests/test_moe.py, test_forward_pass


@dataclass(frozen=True)
class TtMetalDemoResult:
    pcc: float
    passed: bool
    host_steps: tuple[str, ...]


def run_ttmetal_demo(
    mesh: str, config_name: str, tokens: int, seed: int, expert_dtype: str, flow: str = "classic"
) -> TtMetalDemoResult:
    rows, cols = mesh_shape(mesh)
    if config_name not in CONFIGS:
        raise ValueError(f"unknown config {config_name!r}; known configs: {sorted(CONFIGS)}")
    if expert_dtype not in EXPERT_DTYPES:
        raise ValueError(f"unknown expert dtype {expert_dtype!r}; known: {sorted(EXPERT_DTYPES)}")
    if tokens <= 0 or tokens % rows != 0:
        raise ValueError(f"--tokens {tokens} must be a positive multiple of the {rows} mesh rows of {mesh}")
    config = CONFIGS[config_name]()
    logger.info(f"tt-metal {flow} MoE flow on {mesh} {rows}x{cols}, config {config_name}, {tokens} tokens")
    state_dict = RandomMoELayer(config, seed)
    x = torch.randn(tokens, config.hidden_size, generator=torch.Generator().manual_seed(seed + 1)).bfloat16().float()
    optimized = flow == "optimized"
    mesh_device = open_mesh(rows, cols) if optimized else open_preset_mesh(mesh)
    try:
        layer = TtMoEBaseline(
            state_dict,
            config,
            mesh_device,
            path=flow,
            expert_dtype=EXPERT_DTYPES[expert_dtype],
            tokens_per_row=tokens // rows,
        )
        x_mesh = input_to_mesh(x, mesh_device)
        before = emulator.host_traffic()
        with emulator.record_runs() as runs:
            recorder = OpFlowRecorder(runs)
            y = layer(x_mesh, observer=recorder)
        host = emulator.host_traffic() - before
        y = output_to_torch(y)
    finally:
        ttnn.close_mesh_device(mesh_device)
    logger.info("the flow's device ops:\n" + "\n".join(format_op_flow(recorder.ops)))
    logger.info(f"tt-metal ops as device programs here: {', '.join(sorted(layer.ops.on_device)) or 'none'}")
    logger.info(
        f"tt-metal ops as host stand-ins (NOT in modeled device time, which flatters tt-metal): "
        f"{', '.join(layer.ops.host_steps)}"
    )
    logger.info(f"host work inside forward: {host.host_computations} computations, {host.device_reads} device reads")
    passed, pcc = comp_pcc(reference_moe(x, state_dict, config), y, TTMETAL_LAYER_PCC)
    logger.info(f"PCC tt-metal {flow} flow vs reference_moe: {pcc:.7f} ({'PASS' if passed else 'FAIL'}, bar 0.97)")
    return TtMetalDemoResult(pcc=pcc, passed=passed, host_steps=tuple(layer.ops.host_steps))
