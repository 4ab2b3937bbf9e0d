"""reference_moe_mesh (the SPEC section 5 flow on the golden ops) against the single-device reference."""

import pytest
import torch

from models.deepseek_v3.backends import get_backend
from models.deepseek_v3.config import DeepseekV3MoEConfig
from models.deepseek_v3.reference import (
    assemble_mesh_output,
    moe_gate,
    reference_moe,
    reference_moe_mesh,
    split_input_for_mesh,
)
from models.deepseek_v3.weights import random_moe_state_dict
from ttnn_moe.testing import assert_equal_exact, assert_pcc

CONFIG = DeepseekV3MoEConfig.mini()


@pytest.fixture(scope="module")
def weights():
    return random_moe_state_dict(CONFIG, seed=5)


def tokens(count, seed=0):
    return torch.randn(count, CONFIG.hidden_size, generator=torch.Generator().manual_seed(seed))


def run_mesh(x, weights, mesh, **kwargs):
    return assemble_mesh_output(reference_moe_mesh(split_input_for_mesh(x, mesh), weights, CONFIG, mesh, **kwargs),
                                mesh)


@pytest.mark.parametrize("mesh", [(1, 8), (4, 8), (8, 8), (16, 8), (2, 4)],
                         ids=["t3k", "tg", "dual", "quad", "2x4"])
def test_mesh_matches_reference(weights, mesh):
    x = tokens(mesh[0] * 6, seed=mesh[0])  # 6 tokens per row: never a multiple of a tile
    assert_pcc(reference_moe(x, weights, CONFIG), run_mesh(x, weights, mesh), 0.99999, f"mesh {mesh}")


def test_split_and_assemble_place_blocks_by_row_and_column():
    x = torch.arange(8 * 256, dtype=torch.float32).view(8, 256)
    parts = split_input_for_mesh(x, (4, 8))
    assert len(parts) == 32
    for r in range(4):
        for c in range(8):
            assert torch.equal(parts[r * 8 + c], x[2 * r:2 * r + 2, 32 * c:32 * c + 32])
    assert torch.equal(assemble_mesh_output(parts, (4, 8)), x)
    with pytest.raises(ValueError, match="10 tokens"):
        split_input_for_mesh(torch.zeros(10, 256), (4, 8))
    with pytest.raises(ValueError, match="hidden size 100"):
        split_input_for_mesh(torch.zeros(8, 100), (4, 8))


def test_every_assignment_is_computed_once_by_its_owner(weights):
    """The dispatch counts of all devices, mapped to global experts, equal the gate's choices:
    each column handles only its own experts, so nothing is dropped or duplicated."""
    mesh, x = (4, 8), tokens(32, seed=9)
    seen = {}
    run_mesh(x, weights, mesh, observer=lambda stage, tensors: seen.setdefault(stage, tensors))
    indices, _ = moe_gate(x, weights["gate.weight"], weights["gate.e_score_correction_bias"], CONFIG)
    expected = torch.bincount(indices.reshape(-1), minlength=CONFIG.n_routed_experts)     # (E,)
    got = torch.cat([counts.reshape(-1) for counts in seen["dispatch.num_routed_tokens"]])  # expert e on device e // 8: device-major = expert order
    assert got.numel() == CONFIG.n_routed_experts
    assert_equal_exact(expected, got, "assignments per expert")
    assert int(got.sum()) == 32 * CONFIG.num_experts_per_tok


def test_observer_sees_every_stage_with_per_device_shapes(weights):
    mesh, x = (4, 8), tokens(16)
    shapes = {}
    run_mesh(x, weights, mesh, observer=lambda stage, tensors: shapes.update({stage: [tuple(t.shape) for t in tensors]}))
    assert list(shapes) == ["input", "all_gather", "gate.topk_indices", "dispatch.tokens",
                            "dispatch.num_routed_tokens", "local_reduce", "combine", "shared_expert_partial",
                            "reduce_scatter"]
    assert all(len(per_device) == 32 for per_device in shapes.values())
    assert shapes["input"][0] == shapes["reduce_scatter"][0] == (4, 32)
    assert shapes["all_gather"][0] == shapes["shared_expert_partial"][0] == (4, 256)
    assert shapes["dispatch.num_routed_tokens"][0] == (8, 1)


def test_two_runs_are_bitwise_equal(weights):
    x = tokens(32, seed=2)
    assert torch.equal(run_mesh(x, weights, (4, 8)), run_mesh(x, weights, (4, 8)))


def test_bad_inputs_raise(weights):
    parts = split_input_for_mesh(tokens(8), (4, 8))
    with pytest.raises(ValueError, match="expected 32 device tensors"):
        reference_moe_mesh(parts[:31], weights, CONFIG, (4, 8))
    parts[3] = torch.zeros(2, 16)
    with pytest.raises(ValueError, match=r"device 3.*\(2, 16\)"):
        reference_moe_mesh(parts, weights, CONFIG, (4, 8))
    with pytest.raises(ValueError, match="hidden_size=256"):
        reference_moe_mesh([torch.zeros(1, 85)] * 3, weights, CONFIG, (1, 3))
    with pytest.raises(ValueError, match="unknown backend 'npu'"):
        get_backend("npu")
