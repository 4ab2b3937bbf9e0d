"""local_reduce_moe_output on the emulator vs ttnn_moe.golden: PCC, determinism, errors, cache.

The numeric cases need the emulator's compute kernels (emu stage 3).
"""

import pytest
import torch
from emu_fixtures import emu_device_per_grid_fixture
from routing_cases import expert_ids, identity_mapping, rm

import ttnn_moe
from ttnn_moe import emu, golden
from ttnn_moe.testing import assert_pcc


device = emu_device_per_grid_fixture([(1, 1), (2, 3), (8, 8)])


def _padded_case(kind, num_tokens, hidden, num_local, top_k, seed):
    ids = expert_ids(kind, num_tokens, top_k, num_local, seed=seed)
    g = torch.Generator().manual_seed(seed)
    weights = torch.rand(num_tokens, top_k, generator=g).bfloat16()
    tables = golden.prepare_moe_routing_tensors(ids, weights, identity_mapping(num_local), num_local)
    y = torch.randn(num_local, num_tokens, hidden, generator=g).bfloat16()
    return y, tables


def _run(device, y, tables, num_out_rows, **kwargs):
    counts, _, token_weights, idx_map = tables
    return ttnn_moe.local_reduce_moe_output(
        rm(device, y, emu.bfloat16), rm(device, idx_map, emu.uint32), rm(device, token_weights, emu.bfloat16),
        rm(device, counts, emu.uint32), num_out_rows, **kwargs,
    )


# (T, H, E_l, K)
SHAPES = [(1, 32, 1, 1), (31, 256, 2, 2), (32, 1024, 8, 4), (100, 256, 8, 4), (256, 32, 32, 8)]


@pytest.mark.parametrize("kind", ["uniform", "skewed", "one_expert", "sparse"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "T{}_H{}_El{}_K{}".format(*s))
def test_matches_golden(device, shape, kind):
    num_tokens, hidden, num_local, top_k = shape
    top_k = max(1, min(top_k, num_local // 2 if kind == "sparse" else num_local))
    y, tables = _padded_case(kind, num_tokens, hidden, num_local, top_k, seed=num_tokens + num_local)
    got = emu.to_torch(_run(device, y, tables, num_tokens))
    want = golden.local_reduce_moe_output(y, tables[3], tables[2], tables[0], num_tokens)
    assert_pcc(want, got.float(), pcc=0.9999, name="reduced")


def test_rows_without_assignments_are_zero(device):
    y, tables = _padded_case("uniform", 8, 64, 2, 1, seed=1)
    got = emu.to_torch(_run(device, y, tables, 12))  # rows 8..11 receive nothing
    assert not got[8:].any()


def test_grouped_mode(device):
    # Two experts packed at tile-aligned offsets 0 and 32 of an (M=64, H) buffer.
    counts = torch.tensor([[3], [2]], dtype=torch.int32)
    offsets = torch.tensor([[0], [32]], dtype=torch.int32)
    idx_map = torch.zeros(64, dtype=torch.int32)
    idx_map[[0, 1, 2, 32, 33]] = torch.tensor([4, 0, 2, 0, 4], dtype=torch.int32)
    weights = torch.zeros(64).bfloat16()
    weights[[0, 1, 2, 32, 33]] = torch.tensor([0.5, 1.0, 2.0, 0.25, 4.0]).bfloat16()
    y = torch.randn(64, 96).bfloat16()
    got = ttnn_moe.local_reduce_moe_output(
        rm(device, y, emu.bfloat16), rm(device, idx_map, emu.uint32), rm(device, weights, emu.bfloat16),
        rm(device, counts, emu.uint32), 6, expert_offsets=rm(device, offsets, emu.uint32),
    )
    want = golden.local_reduce_moe_output(y, idx_map, weights, counts, 6, expert_offsets=offsets)
    assert_pcc(want, emu.to_torch(got).float(), pcc=0.9999, name="grouped")


def test_bitwise_deterministic_and_cached(device):
    y, tables = _padded_case("skewed", 64, 256, 8, 4, seed=11)
    first = emu.to_torch(_run(device, y, tables, 64))
    before = ttnn_moe._C.ops.local_reduce_moe_output_cache_stats()
    second = emu.to_torch(_run(device, y, tables, 64))
    after = ttnn_moe._C.ops.local_reduce_moe_output_cache_stats()
    assert torch.equal(first, second)
    assert after["hits"] == before["hits"] + 1 and after["misses"] == before["misses"]


def test_bad_inputs_raise_naming_the_value(device):
    y, tables = _padded_case("uniform", 8, 32, 2, 1, seed=2)
    counts, _, token_weights, idx_map = tables
    with pytest.raises(ValueError, match="num_out_rows must be a positive int, got 0"):
        _run(device, y, tables, 0)
    with pytest.raises(ValueError, match=r"token_idx_map \(2, 7\) must match y's leading dims \(2, 8\)"):
        ttnn_moe.local_reduce_moe_output(
            rm(device, y, emu.bfloat16), rm(device, idx_map[:, :7], emu.uint32),
            rm(device, token_weights, emu.bfloat16), rm(device, counts, emu.uint32), 8,
        )
    with pytest.raises(ValueError, match="routed_token_weights must be bfloat16, got float32"):
        ttnn_moe.local_reduce_moe_output(
            rm(device, y, emu.bfloat16), rm(device, idx_map, emu.uint32), rm(device, token_weights.float(), emu.float32),
            rm(device, counts, emu.uint32), 8,
        )
    with pytest.raises(ValueError, match="math_fidelity must be one of .*, got 'Medium'"):
        _run(device, y, tables, 8, compute_kernel_config=type("Cfg", (), {"math_fidelity": "Medium", "fp32_dest_acc_en": True, "math_approx_mode": False})())
