"""The layer's router weight on the device: bfloat16 when the layer's `gate.weight` holds bfloat16 values
(a checkpoint's, and the random layers' in every dtype), float32 otherwise; the routing is the fp32
reference gate's either way."""

import pytest
import torch
from loguru import logger
from ttnn_moe.testing import assert_equal_exact, assert_pcc, max_abs_error

from models.deepseek_v3.config import DeepseekV3MoEConfig
from models.deepseek_v3.reference import moe_gate
from models.deepseek_v3.tt import TtMoE, device_values, input_to_mesh
from models.deepseek_v3.tt.moe_weights import gate_weight_dtype
from models.deepseek_v3.weights import RandomMoELayer, random_moe_state_dict
from ttnn_moe import emu

CONFIG = DeepseekV3MoEConfig.mini()
MESH = (2, 2)
TOKENS_PER_ROW = 80  # three row tiles per device, the last one partial: the gate's resident split


def logged_lines(run):
    lines = []
    sink = logger.add(lines.append, format="{message}")
    try:
        result = run()
    finally:
        logger.remove(sink)
    return result, lines


def test_random_layers_hold_bf16_router_weights_in_every_dtype():
    fp32_layer, bf16_layer = RandomMoELayer(CONFIG, seed=3, dtype=torch.float32), RandomMoELayer(CONFIG, seed=3)
    gate = fp32_layer["gate.weight"]
    assert gate.dtype == torch.float32
    assert torch.equal(gate.bfloat16().float(), gate)  # every value a bfloat16 value
    assert torch.equal(gate, bf16_layer["gate.weight"].float())
    assert gate.std() == pytest.approx(CONFIG.hidden_size**-0.5, rel=0.02)
    # The other matrices of a float32 layer keep their float32 values.
    up = fp32_layer["experts.0.up_proj.weight"]
    assert not torch.equal(up.bfloat16().float(), up)


def test_gate_weight_dtype_is_bf16_only_for_bf16_values():
    values = torch.randn(8, 64, generator=torch.Generator().manual_seed(0)).bfloat16()
    (dtype, lines) = logged_lines(lambda: gate_weight_dtype(values))
    assert (dtype, lines) == (emu.bfloat16, [])
    assert gate_weight_dtype(values.float()) == emu.bfloat16
    with_nan = values.float()
    with_nan[3, 5] = float("nan")
    assert gate_weight_dtype(with_nan) == emu.bfloat16  # a NaN is a bfloat16 value too

    off_grid = values.float()
    off_grid[2, 7] = 1.0 + 2.0**-12  # between two bfloat16 values
    off_grid[6, 1] = -(2.0**-20) * 3.0009765625
    dtype, lines = logged_lines(lambda: gate_weight_dtype(off_grid))
    assert dtype == emu.float32
    assert len(lines) == 1
    assert "float32" in lines[0] and "2 of its 512 values" in lines[0]


def run_layer_gate(state_dict, x):
    """The layer on a 2x2 mesh: its router weight's dtype and each device's (B, K) ids and weights."""
    mesh_device = emu.open_mesh_device(emu.MeshShape(*MESH))
    try:
        moe, lines = logged_lines(lambda: TtMoE(state_dict, CONFIG, mesh_device))
        seen = {}
        moe(input_to_mesh(x, mesh_device), observer=lambda stage, tensor: seen.setdefault(stage, tensor))
        ids = [t.reshape(TOKENS_PER_ROW, -1) for t in device_values(seen["gate.topk_indices"])]
        weights = [t.reshape(TOKENS_PER_ROW, -1) for t in device_values(seen["gate.topk_weights"])]
        return moe.weights.gate_weight.dtype, lines, ids, weights
    finally:
        emu.close_mesh_device(mesh_device)


@pytest.mark.parametrize("router", ["checkpoint-bf16", "off-bf16-grid"])
def test_layer_routes_exactly_as_the_reference_gate(router):
    state = random_moe_state_dict(CONFIG, seed=11)
    if router == "off-bf16-grid":  # values a bfloat16 weight would round: the layer keeps float32
        nudge = torch.randn(state["gate.weight"].shape, generator=torch.Generator().manual_seed(12)) * 2.0**-12
        state["gate.weight"] = state["gate.weight"].float() * (1 + nudge)
    rows = MESH[0]
    x = torch.randn(rows * TOKENS_PER_ROW, CONFIG.hidden_size, generator=torch.Generator().manual_seed(13))
    x = x.bfloat16().float()

    dtype, lines, ids, weights = run_layer_gate(state, x)

    assert dtype == (emu.bfloat16 if router == "checkpoint-bf16" else emu.float32)
    assert sum("gate weight kept in float32" in line for line in lines) == (router == "off-bf16-grid")
    for device, (device_ids, device_weights) in enumerate(zip(ids, weights)):
        row = device // MESH[1]
        tokens = x[row * TOKENS_PER_ROW : (row + 1) * TOKENS_PER_ROW]
        want_ids, want_weights = moe_gate(
            tokens, state["gate.weight"].float(), state["gate.e_score_correction_bias"], CONFIG
        )
        # SPEC's gate bar: the same experts (ids equal after a stable sort; the device's fp32 sums may
        # order a near-tie of two chosen experts differently), their weights (the reference's rounded to
        # bfloat16, as the device writes them) PCC >= 0.999 and at most one bfloat16 step apart.
        want_sorted, want_order = want_ids.to(torch.int64).sort(dim=1, stable=True)
        got_sorted, got_order = device_ids.to(torch.int64).sort(dim=1, stable=True)
        assert_equal_exact(want_sorted, got_sorted, f"device {device} ids")
        want_w = want_weights.bfloat16().float().gather(1, want_order)
        got_w = device_weights.float().gather(1, got_order)
        assert_pcc(want_w, got_w, 0.999, f"device {device} weights")
        assert max_abs_error(want_w, got_w) <= 2.0**-7 * float(want_w.abs().max())
