"""TtMoEBaseline (tt-metal's classic MoE flow written against ttnn) against the fp32 reference.

The acceptance is tt-metal's own for the layer: PCC 0.97 over the hidden dim
(models/demos/deepseek_v3/tests/test_moe.py, test_forward_pass). The ops the emulator has no device
program for would run as host stand-ins; the tests pin that none does.
"""

import pytest
import torch
from ttnn_moe.testing import assert_pcc

from models.deepseek_v3.config import DeepseekV3MoEConfig
from models.deepseek_v3.reference import reference_moe
from models.deepseek_v3.tt import TtMoE, input_to_mesh, output_to_torch
from models.deepseek_v3.tt_baseline import TtMoEBaseline
from models.deepseek_v3.weights import random_moe_state_dict
from ttnn_moe import emu

CONFIG = DeepseekV3MoEConfig.mini()
TTMETAL_LAYER_PCC = 0.97
# The ops of the flow the emulator runs as device programs from the 0.81.1 wheel: all of them.
ON_DEVICE = {
    "mul",
    "add",
    "all_to_all_dispatch",
    "moe_expert_token_remap",
    "sparse_matmul",
    "linear",
    "all_to_all_combine",
    "repeat",
    "permute",
    "sum",
}


@pytest.fixture(scope="module")
def weights():
    return random_moe_state_dict(CONFIG, seed=5)


def tokens(count: int, seed: int) -> torch.Tensor:
    return torch.randn(count, CONFIG.hidden_size, generator=torch.Generator().manual_seed(seed)).bfloat16().float()


def forward_on(mesh_shape, x, state_dict):
    mesh = emu.open_mesh_device(emu.MeshShape(*mesh_shape))
    try:
        layer = TtMoEBaseline(state_dict, CONFIG, mesh)
        with emu.record_runs() as runs:
            y = output_to_torch(layer(input_to_mesh(x, mesh)))
        return y, layer.ops, runs
    finally:
        emu.close_mesh_device(mesh)


@pytest.mark.parametrize("mesh_shape, rows_tokens", [((2, 4), 16), ((4, 8), 32)])
def test_classic_flow_matches_reference(weights, mesh_shape, rows_tokens):
    x = tokens(rows_tokens * mesh_shape[0], seed=rows_tokens)
    y, ops, runs = forward_on(mesh_shape, x, weights)
    golden = reference_moe(x, weights, CONFIG)
    assert y.shape == golden.shape
    assert_pcc(golden, y, TTMETAL_LAYER_PCC, f"tt-metal classic flow on {mesh_shape}")
    assert (y - golden).abs().max() <= 0.05 * golden.abs().max()
    assert ops.on_device == ON_DEVICE
    # No step ran as a host stand-in.
    assert ops.host_steps == []
    # all_gather, gate, 5 to_layouts, 2 repeats, 2 permutes, dispatch, remap, 3 sparse_matmuls with their zero
    # fills, 3 ttnn.mul, combine, sum, 3 linears, ttnn.add, reduce_scatter
    assert len(runs) >= 29


def test_classic_flow_routes_like_ours(weights):
    """Same gate, same weights: the baseline and TtMoE agree far more closely than either with fp32."""
    x = tokens(32, seed=9)
    y, _, _ = forward_on((2, 4), x, weights)
    mesh = emu.open_mesh_device(emu.MeshShape(2, 4))
    try:
        ours = output_to_torch(TtMoE(weights, CONFIG, mesh)(input_to_mesh(x, mesh)))
    finally:
        emu.close_mesh_device(mesh)
    assert_pcc(ours, y, 0.999, "baseline vs TtMoE")


def test_an_unknown_path_is_refused(weights):
    mesh = emu.open_mesh_device(emu.MeshShape(1, 8))
    try:
        with pytest.raises(ValueError, match="'fast'"):
            TtMoEBaseline(weights, CONFIG, mesh, path="fast")
    finally:
        emu.close_mesh_device(mesh)
