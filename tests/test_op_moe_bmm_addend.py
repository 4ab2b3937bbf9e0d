"""moe_bmm with an addend on the emulator: out = x @ w + addend, the sum starting from the addend in DST.

Checked against golden.moe_bmm + the addend in fp32, padded mode (inactive row tiles get the addend)
and grouped mode (inactive rows stay unwritten), with bfloat16 and bfloat8_b weights; counters show
the addend read once per output tile and no extra tile matmul.
"""

from __future__ import annotations

import pytest
import torch
import ttnn_moe.emu as ttnn
from emu_fixtures import emu_devices_by_name_fixture
from test_op_moe_bmm import GRIDS, counts_column, make_grouped, make_padded, row_tiles
from ttnn_moe.testing import assert_pcc

import ttnn_moe
from ttnn_moe import _C, golden

PCC = 0.9999


devices = emu_devices_by_name_fixture(GRIDS)


def random_addend(shape, seed):
    return (torch.randn(shape, generator=torch.Generator().manual_seed(seed)) * 2).bfloat16()


@pytest.mark.parametrize("w_dtype", [ttnn.bfloat16, ttnn.bfloat8_b], ids=["bf16", "bfp8"])
def test_padded_addend_is_added_everywhere(devices, w_dtype):
    """Active tiles get x @ w + addend; rows past a count and inactive row tiles get the addend alone."""
    device = devices["2x3"]
    counts = [70, 0, 5]
    x, w, (x_d, w_d, counts_d, _) = make_padded(3, 100, 128, 64, counts, seed=1, w_dtype=w_dtype, device=device)
    addend = random_addend((3, 100, 64), seed=2)
    addend_d = ttnn.from_torch(addend, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    got = ttnn.to_torch(ttnn_moe.moe_bmm(x_d, w_d, counts_d, addend=addend_d)).float()
    w_stored = ttnn.to_torch(w_d).float()  # bfloat8_b: the weights as the device holds them
    expected = golden.moe_bmm(x, w_stored, counts_column(counts)) + addend.float()
    assert_pcc(expected, got, PCC, name="moe_bmm + addend, padded")
    for l, count in enumerate(counts):
        assert torch.equal(got[l, count:], addend[l, count:].float()), (
            f"expert {l}: rows past {count} are not the addend"
        )
    counters = ttnn.last_run_counters()
    active_tiles = sum(row_tiles(c) for c in counts) * 2
    assert counters["tile_matmuls"] == active_tiles * 4
    assert counters["dram_buffers"][addend_d.to_arg().address]["page_reads"] == 3 * row_tiles(100) * 2


def one_expert_on_every_row(rows, kd, n, seed, device):
    """The shared expert's shape: x (rows, Kd) with one expert taking every row at offset 0."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, kd, generator=gen).bfloat16()
    w = (torch.randn(1, kd, n, generator=gen) / kd**0.5).bfloat16()
    column = lambda v: ttnn.from_torch(  # noqa: E731
        counts_column([v]), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device
    )
    tile = lambda t: ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)  # noqa: E731
    return x, w, [0], (tile(x), tile(w), column(rows), column(0))


@pytest.mark.parametrize("case", ["one-expert-every-row", "skewed"])
def test_grouped_addend_covers_the_active_rows(devices, case):
    device = devices["8x8"]
    if case == "skewed":
        counts = [3, 40, 0]
        x, w, offsets, (x_d, w_d, counts_d, offsets_d) = make_grouped(96, 64, counts, seed=11, device=device)
    else:
        counts = [45]  # T not a multiple of 32
        x, w, offsets, (x_d, w_d, counts_d, offsets_d) = one_expert_on_every_row(45, 96, 64, 12, device)
    addend = random_addend((x.shape[0], 64), seed=13)
    addend_d = ttnn.from_torch(addend, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    got = ttnn.to_torch(ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d, addend=addend_d)).float()
    expected = golden.moe_bmm(x, w, counts_column(counts), expert_offsets=counts_column(offsets))
    rows = torch.cat([torch.arange(o, min(o + 32 * row_tiles(c), x.shape[0])) for o, c in zip(offsets, counts)])
    assert_pcc(expected[rows] + addend[rows].float(), got[rows], PCC, name=f"grouped + addend, {case}")


def test_addend_is_part_of_the_program_cache_key(devices):
    device = devices["1x1"]
    _, _, (x_d, w_d, counts_d, _) = make_padded(1, 32, 64, 32, [32], seed=21, device=device)
    addend_d = ttnn.from_torch(random_addend((1, 32, 32), 22), layout=ttnn.TILE_LAYOUT, device=device)
    plain = ttnn.to_torch(ttnn_moe.moe_bmm(x_d, w_d, counts_d)).float()
    before = _C.ops.moe_bmm.program_cache_info()
    summed = ttnn.to_torch(ttnn_moe.moe_bmm(x_d, w_d, counts_d, addend=addend_d)).float()
    assert _C.ops.moe_bmm.program_cache_info()["misses"] == before["misses"] + 1
    assert_pcc(plain + ttnn.to_torch(addend_d).float(), summed, PCC, name="addend vs plain + addend")


def test_bad_addend_raises_naming_the_value(devices):
    device = devices["1x1"]
    _, _, (x_d, w_d, counts_d, _) = make_padded(2, 32, 64, 64, [5, 32], seed=31, device=device)
    tile = lambda t, dtype=ttnn.bfloat16: ttnn.from_torch(t, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device)  # noqa: E731
    with pytest.raises(ValueError, match=r"addend must be shaped like the output \(2, 32, 64\), got \(2, 32, 32\)"):
        ttnn_moe.moe_bmm(x_d, w_d, counts_d, addend=tile(torch.zeros(2, 32, 32)))
    with pytest.raises(ValueError, match="addend must be bfloat16, got float32"):
        ttnn_moe.moe_bmm(x_d, w_d, counts_d, addend=tile(torch.zeros(2, 32, 64), ttnn.float32))
    with pytest.raises(ValueError, match="addend is supported with activation None only"):
        ttnn_moe.moe_bmm(x_d, w_d, counts_d, activation="swiglu", addend=tile(torch.zeros(2, 32, 32)))
