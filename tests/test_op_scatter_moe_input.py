"""scatter_moe_input on the emulator vs ttnn_moe.golden: exact rows, zero padding, errors, cache."""

import pytest
import torch
from emu_fixtures import emu_device_per_grid_fixture
from routing_cases import expert_ids, rm, single_device_mapping
from ttnn_moe.testing import assert_equal_exact

import ttnn_moe
from ttnn_moe import emu, golden

device = emu_device_per_grid_fixture([(1, 1), (2, 3), (8, 8)])
NONE = ttnn_moe._C.ops.scatter_moe_input.NONE


def _tables(ids, num_experts):
    weights = torch.ones(ids.shape).bfloat16()
    counts, tokens, _, _ = golden.prepare_moe_routing_tensors(ids, weights, single_device_mapping(num_experts))
    return counts, tokens


# (T, H, E_l, K)
SHAPES = [(1, 32, 1, 1), (31, 256, 2, 2), (32, 32, 8, 2), (100, 1024, 8, 4), (256, 256, 32, 8)]


@pytest.mark.parametrize("kind", ["uniform", "skewed", "one_expert", "sparse"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "T{}_H{}_El{}_K{}".format(*s))
def test_rows_exact(device, shape, kind):
    num_tokens, hidden, num_local, top_k = shape
    top_k = max(1, min(top_k, num_local // 2 if kind == "sparse" else num_local))
    ids = expert_ids(kind, num_tokens, top_k, num_local, seed=num_tokens + hidden)
    counts, tokens = _tables(ids, num_local)
    x = torch.randn(num_tokens, hidden, generator=torch.Generator().manual_seed(5)).bfloat16()
    got = ttnn_moe.scatter_moe_input(
        rm(device, x, emu.bfloat16), rm(device, counts, emu.uint32), rm(device, tokens, emu.uint32)
    )
    assert_equal_exact(golden.scatter_moe_input(x, counts, tokens), emu.to_torch(got.output), name="scattered")
    assert emu.to_torch(got.scatter_status).reshape(-1).tolist() == [0, NONE, NONE, NONE, 0, NONE, NONE]


def test_padding_rows_are_zero_even_over_garbage(device):
    # routed_tokens holds nonsense past the counts: those rows must come out zero, not gathered.
    x = torch.randn(4, 32).bfloat16()
    counts = torch.tensor([[2], [0]], dtype=torch.int32)
    tokens = torch.tensor([[3, 1, 2, 0], [1, 2, 3, 0]], dtype=torch.int32)
    got = emu.to_torch(
        ttnn_moe.scatter_moe_input(
            rm(device, x, emu.bfloat16), rm(device, counts, emu.uint32), rm(device, tokens, emu.uint32)
        ).output
    )
    assert torch.equal(got[0, 0], x[3]) and torch.equal(got[0, 1], x[1])
    assert not got[0, 2:].any() and not got[1].any()


@pytest.mark.parametrize(
    "x_shape, counts_shape, tokens_shape, x_dtype, message",
    [
        ((4, 32), (2, 1), (2, 5), emu.bfloat16, r"routed_tokens \(2, 5\) must be \(E_l, T\) = \(2, 4\)"),
        ((4, 32), (2, 2), (2, 4), emu.bfloat16, r"num_routed_tokens must be \(E_l, 1\), got \(2, 2\)"),
        ((4, 32), (2, 1), (2, 4), emu.float32, "x must be bfloat16, got float32"),
        ((2, 4, 32), (2, 1), (2, 4), emu.bfloat16, r"x must have rank 2 .* got shape \(2, 4, 32\)"),
    ],
)
def test_bad_inputs_raise_naming_the_value(device, x_shape, counts_shape, tokens_shape, x_dtype, message):
    with pytest.raises(ValueError, match=message):
        ttnn_moe.scatter_moe_input(
            rm(device, torch.zeros(x_shape), x_dtype),
            rm(device, torch.zeros(counts_shape, dtype=torch.int32), emu.uint32),
            rm(device, torch.zeros(tokens_shape, dtype=torch.int32), emu.uint32),
        )


def test_wrong_tensor_type_raises_type_error(device):
    with pytest.raises(TypeError, match="x is a torch.Tensor"):
        ttnn_moe.scatter_moe_input(torch.zeros(4, 32), None, None)


def test_deterministic_and_cached(device):
    ids = expert_ids("uniform", 64, 2, 4, seed=9)
    counts, tokens = _tables(ids, 4)
    x = torch.randn(64, 256).bfloat16()
    runs = []
    for _ in range(2):
        before = ttnn_moe._C.ops.scatter_moe_input.program_cache_info()
        out = ttnn_moe.scatter_moe_input(
            rm(device, x, emu.bfloat16), rm(device, counts, emu.uint32), rm(device, tokens, emu.uint32)
        ).output
        runs.append((emu.to_torch(out), ttnn_moe._C.ops.scatter_moe_input.program_cache_info(), before))
    assert torch.equal(runs[0][0], runs[1][0])
    assert runs[1][1]["hits"] == runs[1][2]["hits"] + 1 and runs[1][1]["misses"] == runs[1][2]["misses"]
