"""prepare_moe_routing_tensors on the emulator vs ttnn_moe.golden: exact tables per device, errors, cache."""

import pytest
import torch
from emu_fixtures import emu_device_per_grid_fixture, emu_mesh_fixture
from routing_cases import expert_ids, placement_mapping, rm, shuffled_placement, single_device_mapping
from ttnn_moe.emu.tensor import device_shards
from ttnn_moe.testing import assert_equal_exact

import ttnn_moe
from ttnn_moe import emu, golden

NAMES = ("num_routed_tokens", "routed_tokens", "routed_token_weights", "token_idx_map")
WORD = ttnn_moe._C.ops.prepare_moe_routing_tensors.StatusWord
NONE = 0xFFFFFFFF

device = emu_device_per_grid_fixture([(1, 1), (2, 3), (8, 8)])
mesh_2x2 = emu_mesh_fixture(2, 2, grid=(2, 3))


def _run(device, ids, weights, mapping, mapping_dtype=emu.int32, **kwargs):
    return ttnn_moe.prepare_moe_routing_tensors(
        rm(device, ids, emu.uint32), rm(device, weights, emu.bfloat16), rm(device, mapping, mapping_dtype), **kwargs
    )


def _status(record) -> list[list[int]]:
    return [[int(v) & 0xFFFFFFFF for v in shard.reshape(-1).tolist()] for shard in device_shards(record)]


# (T, K, E) points; the full routing set runs on the small shapes.
SHAPES = [(1, 1, 1), (31, 2, 2), (32, 4, 8), (100, 8, 32), (256, 8, 32)]


@pytest.mark.parametrize("kind", ["uniform", "skewed", "one_expert", "sparse"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "T{}_K{}_E{}".format(*s))
def test_tables_exact(device, shape, kind):
    num_tokens, top_k, num_experts = shape
    usable = num_experts // 2 if kind == "sparse" else num_experts
    top_k = max(1, min(top_k, usable))
    ids = expert_ids(kind, num_tokens, top_k, num_experts, seed=num_tokens * 7 + top_k)
    weights = torch.rand(num_tokens, top_k, generator=torch.Generator().manual_seed(3)).bfloat16()
    mapping = single_device_mapping(num_experts)
    got = _run(device, ids, weights, mapping)
    for name, g, w in zip(NAMES, got, golden.prepare_moe_routing_tensors(ids, weights, mapping)):
        assert_equal_exact(w, emu.to_torch(g), name=name)
    assert _status(got.routing_status) == [[0, NONE, NONE, NONE, 0, NONE, 0, NONE]]


@pytest.mark.parametrize("mapping_dtype", [emu.int32, emu.uint32, emu.uint16])
@pytest.mark.parametrize("num_tokens, top_k, num_experts", [(37, 4, 16), (256, 8, 32)])
def test_each_device_builds_the_tables_of_its_mapping_column(mesh_2x2, num_tokens, top_k, num_experts, mapping_dtype):
    """A shuffled placement on a 2x2 mesh: device d's local experts are the ones in column d
    (row-major mesh order), by ascending id."""
    ids = expert_ids("skewed", num_tokens, top_k, num_experts, seed=num_tokens)
    weights = torch.rand(num_tokens, top_k, generator=torch.Generator().manual_seed(5)).bfloat16()
    mapping = placement_mapping(shuffled_placement(num_experts, 4, seed=num_experts), 4)
    got = _run(mesh_2x2, ids, weights, mapping, mapping_dtype)
    for d in range(4):
        want = golden.prepare_moe_routing_tensors(ids, weights, mapping, device_index=d)
        for name, g, w in zip(NAMES, got, want):
            assert_equal_exact(w, device_shards(g)[d], name=f"device {d} {name}")
    assert all(words[WORD.mapping_errors] == 0 for words in _status(got.routing_status))


def test_duplicate_ids_keep_ascending_k(device):
    ids = torch.tensor([[3, 3], [1, 3], [3, 1], [0, 2]], dtype=torch.int32)
    weights = torch.tensor([[0.5, 0.25], [1.0, 2.0], [4.0, 8.0], [1.0, 1.0]]).bfloat16()
    _, tokens, token_weights, _, _ = _run(device, ids, weights, single_device_mapping(4))
    # expert 3 gets (t0,k0) (t0,k1) (t1,k1) (t2,k0): tokens 0, 0, 1, 2 in that order
    want = golden.prepare_moe_routing_tensors(ids, weights, single_device_mapping(4))
    assert_equal_exact(want[1], emu.to_torch(tokens), name="routed_tokens")
    assert emu.to_torch(tokens)[3].tolist() == [0, 0, 1, 2]
    assert emu.to_torch(token_weights)[3].float().tolist() == [0.5, 0.25, 2.0, 4.0]


def test_invalid_id_raises_naming_first_bad_assignment(device):
    ids = torch.tensor([[0, 1], [1, 9], [7, 2]], dtype=torch.int32)
    weights = torch.ones(3, 2).bfloat16()
    with pytest.raises(ValueError, match=r"expert id 9 at \(t, k\) = \(1, 1\) is outside \[0, 4\).*2 invalid"):
        _run(device, ids, weights, single_device_mapping(4))


def test_non_strict_counts_invalid_ids_on_device(device):
    ids = torch.tensor([[0, 5], [6, 2]], dtype=torch.int32)
    weights = torch.ones(2, 2).bfloat16()
    *tables, status = _run(device, ids, weights, single_device_mapping(4), strict=False)
    words = _status(status)[0]
    assert [
        words[WORD.num_invalid_ids],
        words[WORD.first_invalid_t],
        words[WORD.first_invalid_k],
        words[WORD.first_invalid_id],
    ] == [2, 0, 1, 5]
    assert emu.to_torch(tables[0]).reshape(-1).tolist() == [1, 0, 1, 0]


def test_overflowing_expert_raises(device):
    ids = torch.zeros(2, 3, dtype=torch.int32)  # 6 assignments to expert 0, 2 columns
    with pytest.raises(ValueError, match="local expert 0 receives more assignments.*4 dropped"):
        _run(device, ids, torch.ones(2, 3).bfloat16(), single_device_mapping(2))


def test_mapping_rows_that_are_not_one_hot_are_reported(mesh_2x2):
    ids = torch.tensor([[0, 5], [6, 7]], dtype=torch.int32)
    weights = torch.ones(2, 2).bfloat16()
    mapping = placement_mapping([0, 0, 1, 1, 2, 2, 3, 3], 4)
    mapping[0, 0, 5, 3] = 1  # expert 5 on devices 2 and 3
    mapping[0, 0, 6, 3] = 2  # not 0 or 1
    with pytest.raises(ValueError, match=r"device 0: expert_mapping is not one-hot.*expert 5, 2 errors"):
        _run(mesh_2x2, ids, weights, mapping)
    got = _run(mesh_2x2, ids, weights, mapping, strict=False)
    per_device = _status(got.routing_status)
    # Rows 5 and 6 route nowhere; device 3 then holds one expert (7) instead of 2: one more error.
    assert [w[WORD.mapping_errors] for w in per_device] == [2, 2, 3, 3]
    assert [w[WORD.first_bad_expert] for w in per_device] == [5, 5, 5, 5]
    assert device_shards(got.num_routed_tokens)[3].reshape(-1).tolist() == [1, 0]  # expert 7 only


def test_device_holding_the_wrong_number_of_experts_is_reported(mesh_2x2):
    ids = torch.tensor([[0, 1]], dtype=torch.int32)
    mapping = placement_mapping([0, 0, 0, 1, 2, 2, 3, 3], 4)  # device 0 holds 3, device 1 holds 1
    with pytest.raises(
        ValueError,
        match=r"device 0: expert_mapping is not one-hot with E/num_devices experts per "
        r"device \(first row that is not one-hot: none",
    ):
        _run(mesh_2x2, ids, torch.ones(1, 2).bfloat16(), mapping)


@pytest.mark.parametrize(
    "change, message",
    [
        (
            dict(mapping=torch.ones(1, 1, 4, 2, dtype=torch.int32)),
            r"expert_mapping \(1, 1, 4, 2\) covers 2 devices, the 1x1 mesh has 1",
        ),
        (
            dict(mapping=torch.ones(1, 2, 4, 1, dtype=torch.int32)),
            r"expert_mapping \(1, 1, E, num_devices\) must "
            r"have rank 2 \(leading 1s allowed\)",
        ),
        (dict(mapping_dtype=emu.bfloat16), "expert_mapping must be uint16, uint32 or int32, got bfloat16"),
        (dict(weights=torch.ones(3, 3).bfloat16()), r"routing_weights \(3, 3\)"),
        (dict(ids_dtype=emu.int32), "selected_experts must be uint32, got int32"),
    ],
)
def test_bad_inputs_raise_naming_the_value(device, change, message):
    ids = torch.zeros(3, 2, dtype=torch.int32)
    weights = change.get("weights", torch.ones(3, 2).bfloat16())
    mapping = change.get("mapping", single_device_mapping(4))
    with pytest.raises(ValueError, match=message):
        ttnn_moe.prepare_moe_routing_tensors(
            rm(device, ids, change.get("ids_dtype", emu.uint32)),
            rm(device, weights, emu.bfloat16),
            rm(device, mapping, change.get("mapping_dtype", emu.int32)),
        )


def test_preallocated_outputs_are_written_in_place(device):
    ids = expert_ids("uniform", 40, 4, 8, seed=2)
    weights = torch.rand(40, 4, generator=torch.Generator().manual_seed(2)).bfloat16()
    want = golden.prepare_moe_routing_tensors(ids, weights, single_device_mapping(8))
    preallocated = rm(device, torch.full((8, 40), 77, dtype=torch.int32), emu.uint32)
    got = _run(device, ids, weights, single_device_mapping(8), output_tensors=[None, preallocated, None, None, None])
    assert got.routed_tokens is preallocated
    assert_equal_exact(want[1], emu.to_torch(preallocated), name="routed_tokens")
    wrong = rm(device, torch.zeros(8, 41, dtype=torch.int32), emu.uint32)
    with pytest.raises(ValueError, match=r"output_tensors\[1\] is \[8, 41\] uint32 ROW_MAJOR, the op writes \[8, 40\]"):
        _run(device, ids, weights, single_device_mapping(8), output_tensors=[None, wrong, None, None, None])


def test_deterministic_and_cached(device):
    ids = expert_ids("skewed", 100, 4, 8, seed=1)
    weights = torch.rand(100, 4).bfloat16()
    first = [emu.to_torch(t) for t in _run(device, ids, weights, single_device_mapping(8))]
    before = ttnn_moe._C.ops.prepare_moe_routing_tensors.program_cache_info()
    second = [emu.to_torch(t) for t in _run(device, ids, weights, single_device_mapping(8))]
    after = ttnn_moe._C.ops.prepare_moe_routing_tensors.program_cache_info()
    for a, b in zip(first, second):
        assert torch.equal(a, b)
    assert after["hits"] == before["hits"] + 1 and after["misses"] == before["misses"]
