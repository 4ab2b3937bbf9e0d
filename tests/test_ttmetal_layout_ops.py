"""Fidelity: tt-metal 0.81.1's layout glue of the classic MoE flow (ttnn.repeat, ttnn.permute, ttnn.sum) as the
programs its factories build, their kernels unmodified from the wheel, on the emulator, against torch.

repeat and permute move values: compared exactly. sum adds bf16 tiles in an fp32 DST (HiFi3) and rounds once:
PCC and a bound of one bf16 step of the largest sum against torch's fp32 sum.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import ttnn_moe.emu as ttnn
from ttnn_moe.emu.ttmetal.permute import permute
from ttnn_moe.emu.ttmetal.reduce_nc import input_granularity, reduce_sum
from ttnn_moe.emu.ttmetal.repeat import leg_repeats, repeat


def pcc(got: torch.Tensor, want: torch.Tensor) -> float:
    return float(np.corrcoef(got.flatten().double().numpy(), want.flatten().double().numpy())[0, 1])


@pytest.fixture
def device(wheel):
    dev = ttnn.open_device(grid=(8, 8))
    yield dev
    ttnn.close_device(dev)


def values(shape, seed: int) -> torch.Tensor:
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).bfloat16()


def upload(t: torch.Tensor, device, layout) -> ttnn.Tensor:
    return ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=layout, device=device)


# ---- repeat (ROW_MAJOR, dims above the last)


@pytest.mark.parametrize(
    ("shape", "reps"),
    [
        ((1, 1, 32, 8), (96, 1, 1, 1)),  # the flow's top-k weights: (1, 1, B, K) -> (H, 1, B, K)
        ((1, 4, 1, 256), (1, 32, 1, 1)),  # the flow's remap mask: (1, R, 1, E) -> (1, R * B, 1, E)
        ((2, 3, 5, 24), (1, 2, 3, 1)),  # two legs, a 48-byte row (DRAM rows padded to 64)
        ((3, 40), (4, 1)),  # rank 2, 80-byte rows
    ],
)
def test_repeat_matches_torch_exactly(device, shape, reps):
    x = values(shape, 1)
    got = repeat(upload(x, device, ttnn.ROW_MAJOR_LAYOUT), reps)
    assert list(got.shape) == list(x.repeat(*reps).shape)
    assert torch.equal(ttnn.to_torch(got), x.repeat(*reps))


def test_repeat_runs_one_leg_per_repeated_dim_innermost_first_folding_size_one_dims():
    assert leg_repeats([2, 3, 5, 24], [1, 2, 3, 1]) == [(2, 3), (1, 2)]
    # dim 0 has size 1 and dim 1 repeats too: its repeats fold into dim 1 (plan_codegen_legs)
    assert leg_repeats([1, 4, 1, 256], [2, 32, 1, 1]) == [(1, 64)]
    assert leg_repeats([1, 1, 32, 8], [7168, 1, 1, 1]) == [(0, 7168)]


def test_repeat_rejects_what_it_does_not_describe(device):
    x = upload(values((1, 1, 32, 64), 2), device, ttnn.ROW_MAJOR_LAYOUT)
    with pytest.raises(ValueError, match="last dim"):
        repeat(x, (1, 1, 1, 2))
    with pytest.raises(ValueError, match="positive"):
        repeat(x, (0, 1, 1, 1))
    with pytest.raises(ValueError, match="ROW_MAJOR"):
        repeat(upload(values((1, 1, 32, 64), 2), device, ttnn.TILE_LAYOUT), (2, 1, 1, 1))


# ---- permute


@pytest.mark.parametrize(
    ("shape", "dims", "layout"),
    [
        ((3, 5, 64, 96), (1, 0, 2, 3), ttnn.TILE_LAYOUT),  # the flow's expert outputs (T/32, E_l, 32, H) -> CN
        ((2, 3, 32, 64), (1, 0, 2, 3), ttnn.ROW_MAJOR_LAYOUT),  # CN of rows
        ((96, 1, 32, 8), (3, 1, 2, 0), ttnn.ROW_MAJOR_LAYOUT),  # the flow's top-k weights (H, 1, B, K) -> (K, 1, B, H)
        ((40, 2, 3, 50), (3, 1, 2, 0), ttnn.ROW_MAJOR_LAYOUT),  # partial blocks along X and W
        ((5, 70, 36), (2, 0, 1), ttnn.ROW_MAJOR_LAYOUT),  # rank 3
    ],
)
def test_permute_matches_torch_exactly(device, shape, dims, layout):
    x = values(shape, 3)
    got = permute(upload(x, device, layout), dims)
    want = x.permute(*dims).contiguous()
    assert list(got.shape) == list(want.shape)
    assert got.layout == layout
    assert torch.equal(ttnn.to_torch(got), want)


def test_permute_that_moves_only_unit_dims_moves_no_data(device):
    # ttnn's is_permute_nop: the shape stays and only dims of size 1 move
    x = values((1, 1, 32, 64), 4)
    t = upload(x, device, ttnn.TILE_LAYOUT)
    got = permute(t, (1, 0, 2, 3))
    assert got.buffer_address() == t.buffer_address()
    assert torch.equal(ttnn.to_torch(got), x)
    # a unit dim swapped with a larger one changes the shape: the CN program runs
    y = values((1, 4, 32, 64), 4)
    u = upload(y, device, ttnn.TILE_LAYOUT)
    moved = permute(u, (1, 0, 2, 3))
    assert moved.buffer_address() != u.buffer_address()
    assert torch.equal(ttnn.to_torch(moved), y.permute(1, 0, 2, 3))


def test_permute_rejects_what_it_does_not_describe(device):
    x = upload(values((2, 3, 32, 64), 5), device, ttnn.TILE_LAYOUT)
    with pytest.raises(NotImplementedError, match="not described"):
        permute(x, (0, 1, 3, 2))
    with pytest.raises(ValueError, match="permutation"):
        permute(x, (0, 0, 2, 3))
    with pytest.raises(ValueError, match="rank"):
        permute(x, (1, 0, 2))


# ---- sum over a dim above the tile dims (fast_reduce_nc)


@pytest.mark.parametrize(
    ("shape", "dim", "keepdim"),
    [
        ((8, 1, 32, 96), 0, True),  # the flow's weighted choices (K, 1, B, H) -> (1, 1, B, H)
        ((5, 3, 64, 32), 1, False),  # an inner dim, granularity 3 (split work: 10 output tiles)
        ((12, 2, 32, 2112), 0, True),  # granularity 6; 132 output tiles: two core groups on the 8x8 grid
    ],
)
def test_sum_matches_torch(device, shape, dim, keepdim):
    x = values(shape, 6)
    got = ttnn.to_torch(reduce_sum(upload(x, device, ttnn.TILE_LAYOUT), dim=dim, keepdim=keepdim)).float()
    want = x.float().sum(dim=dim, keepdim=keepdim)
    assert list(got.shape) == list(want.shape)
    assert pcc(got, want) > 0.9999
    assert float((got - want).abs().max()) <= float(want.abs().max()) * 2**-8


def test_sum_reads_every_input_tile_once_and_writes_each_output_tile_once(device):
    x = values((8, 1, 32, 96), 7)
    reduce_sum(upload(x, device, ttnn.TILE_LAYOUT), dim=0, keepdim=True)
    counters = ttnn.last_run_counters()
    assert counters["noc_bytes_read_dram"] == 8 * 3 * 2048
    assert counters["noc_bytes_written_dram"] == 3 * 2048


def test_sum_input_granularity_is_the_largest_divisor_up_to_eight():
    assert [input_granularity(n) for n in (1, 7, 8, 12, 16, 9, 11)] == [1, 7, 8, 6, 8, 3, 1]


def test_sum_rejects_tile_dims_and_other_formats(device):
    x = upload(values((2, 1, 32, 64), 8), device, ttnn.TILE_LAYOUT)
    with pytest.raises(ValueError, match="tile dim"):
        reduce_sum(x, dim=2)
    with pytest.raises(ValueError, match="out of range"):
        reduce_sum(x, dim=4)
    with pytest.raises(ValueError, match="TILE_LAYOUT"):
        reduce_sum(upload(values((2, 1, 32, 64), 8), device, ttnn.ROW_MAJOR_LAYOUT), dim=0)
