"""prepare_moe_routing_tensors on the emulator vs ttnn_moe.golden: exact tables, errors, cache."""

import pytest
import torch
from emu_fixtures import emu_device_per_grid_fixture
from routing_cases import expert_ids, identity_mapping, rm

import ttnn_moe
from ttnn_moe import emu, golden
from ttnn_moe.testing import assert_equal_exact

NAMES = ("num_routed_tokens", "routed_tokens", "routed_token_weights", "token_idx_map")


device = emu_device_per_grid_fixture([(1, 1), (2, 3), (8, 8)])


def _run(device, ids, weights, mapping, num_experts, **kwargs):
    return ttnn_moe.prepare_moe_routing_tensors(
        rm(device, ids, emu.uint32), rm(device, weights, emu.bfloat16), rm(device, mapping, emu.int32),
        num_experts=num_experts, **kwargs,
    )


def _check_against_golden(device, ids, weights, mapping, num_experts):
    got = _run(device, ids, weights, mapping, num_experts)
    want = golden.prepare_moe_routing_tensors(ids, weights, mapping, num_experts)
    for name, g, w in zip(NAMES, got, want):
        assert_equal_exact(w, emu.to_torch(g), name=name)


# (T, K, E, E_l) points; the full routing set runs on the small shapes.
SHAPES = [(1, 1, 1, 1), (31, 2, 2, 2), (32, 4, 8, 8), (100, 8, 32, 32), (256, 8, 32, 8)]


@pytest.mark.parametrize("kind", ["uniform", "skewed", "one_expert", "sparse"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "T{}_K{}_E{}_El{}".format(*s))
def test_tables_exact(device, shape, kind):
    num_tokens, top_k, num_experts, num_local = shape
    usable = num_experts // 2 if kind == "sparse" else num_experts
    top_k = max(1, min(top_k, usable))
    ids = expert_ids(kind, num_tokens, top_k, num_experts, seed=num_tokens * 7 + top_k)
    weights = torch.rand(num_tokens, top_k, generator=torch.Generator().manual_seed(3)).bfloat16()
    # E_l < E: this device holds every (E / E_l)-th expert; the others map to -1.
    mapping = torch.full((num_experts,), -1, dtype=torch.int32)
    stride = num_experts // num_local
    mapping[::stride] = torch.arange(num_local, dtype=torch.int32)
    _check_against_golden(device, ids, weights, mapping, num_experts)


def test_duplicate_ids_keep_ascending_k(device):
    ids = torch.tensor([[3, 3], [1, 3], [3, 1], [0, 2]], dtype=torch.int32)
    weights = torch.tensor([[0.5, 0.25], [1.0, 2.0], [4.0, 8.0], [1.0, 1.0]]).bfloat16()
    _, tokens, token_weights, _, _ = _run(device, ids, weights, identity_mapping(4), 4)
    # expert 3 gets (t0,k0) (t0,k1) (t1,k1) (t2,k0): tokens 0, 0, 1, 2 in that order
    want = golden.prepare_moe_routing_tensors(ids, weights, identity_mapping(4), 4)
    assert_equal_exact(want[1], emu.to_torch(tokens), name="routed_tokens")
    assert emu.to_torch(tokens)[3].tolist() == [0, 0, 1, 2]
    assert emu.to_torch(token_weights)[3].float().tolist() == [0.5, 0.25, 2.0, 4.0]


def test_invalid_id_raises_naming_first_bad_assignment(device):
    ids = torch.tensor([[0, 1], [1, 9], [7, 2]], dtype=torch.int32)
    weights = torch.ones(3, 2).bfloat16()
    with pytest.raises(ValueError, match=r"expert id 9 at \(t, k\) = \(1, 1\).*2 invalid"):
        _run(device, ids, weights, identity_mapping(4), 4)


def test_non_strict_counts_invalid_ids_on_device(device):
    ids = torch.tensor([[0, 5], [6, 2]], dtype=torch.int32)
    weights = torch.ones(2, 2).bfloat16()
    *tables, errors = _run(device, ids, weights, identity_mapping(4), 4, strict=False)
    record = emu.to_torch(errors).reshape(-1).tolist()
    assert record[:4] == [2, 0, 1, 5]
    assert emu.to_torch(tables[0]).reshape(-1).tolist() == [1, 0, 1, 0]


def test_overflowing_expert_raises(device):
    ids = torch.zeros(2, 3, dtype=torch.int32)  # 6 assignments to expert 0, 2 columns
    with pytest.raises(ValueError, match="local expert 0 receives more assignments"):
        _run(device, ids, torch.ones(2, 3).bfloat16(), identity_mapping(2), 2)


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(num_experts=5), r"expert_mapping \(4,\) must have 5 entries"),
        (dict(weights=torch.ones(3, 3).bfloat16()), r"routing_weights \(3, 3\)"),
        (dict(num_local_experts=7), r"num_local_experts must be in \[1, 4\], got 7"),
        (dict(ids_dtype=emu.int32), "selected_experts must be uint32, got int32"),
        (dict(num_experts=0), r"num_experts must be in \[1, 4294967295\], got 0"),
    ],
)
def test_bad_inputs_raise_naming_the_value(device, change, message):
    ids = torch.zeros(3, 2, dtype=torch.int32)
    weights = change.get("weights", torch.ones(3, 2).bfloat16())
    with pytest.raises(ValueError, match=message):
        ttnn_moe.prepare_moe_routing_tensors(
            rm(device, ids, change.get("ids_dtype", emu.uint32)), rm(device, weights, emu.bfloat16),
            rm(device, identity_mapping(4), emu.int32), num_experts=change.get("num_experts", 4),
            num_local_experts=change.get("num_local_experts", 4),
        )


def test_deterministic_and_cached(device):
    ids = expert_ids("skewed", 100, 4, 8, seed=1)
    weights = torch.rand(100, 4).bfloat16()
    first = [emu.to_torch(t) for t in _run(device, ids, weights, identity_mapping(8), 8)]
    before = ttnn_moe._C.ops.prepare_moe_routing_tensors.program_cache_info()
    second = [emu.to_torch(t) for t in _run(device, ids, weights, identity_mapping(8), 8)]
    after = ttnn_moe._C.ops.prepare_moe_routing_tensors.program_cache_info()
    for a, b in zip(first, second):
        assert torch.equal(a, b)
    assert after["hits"] == before["hits"] + 1 and after["misses"] == before["misses"]
