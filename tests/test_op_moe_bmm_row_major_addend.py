"""moe_bmm with a ROW_MAJOR addend on the emulator: rows read as strips, tilized in the op.

Tilizing bfloat16 changes no bit, so the op with a ROW_MAJOR addend must give bit for bit what it
gives with the same addend converted by ttnn.to_layout to TILE, on every row the output defines, and
match golden.moe_bmm + the addend in fp32. Shapes cover counts and M off the tile grid, segments
wider than one strip of the addend, the DeepSeek layer's (1, B, H) addend, fp32 accumulation, and
padded mode with a ROW_MAJOR output; counters show each addend row read once per strip of columns.
"""

from __future__ import annotations

import pytest
import torch
import ttnn_moe.emu as ttnn
from emu_fixtures import emu_devices_by_name_fixture
from test_op_moe_bmm import GRIDS, counts_column, make_grouped, make_padded, row_tiles
from test_op_moe_bmm_addend import one_expert_on_every_row, random_addend
from ttnn_moe.ops.compute_kernel_config import WormholeComputeKernelConfig
from ttnn_moe.testing import assert_pcc

import ttnn_moe
from ttnn_moe import _C, golden

PCC = 0.9999
STRIP_TILES = 16  # the strip width the op documents (docs/ops/moe_bmm.md, Addend)

devices = emu_devices_by_name_fixture(GRIDS)


def row_major(t, device):
    return ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)


def active_rows(counts, offsets, rows):
    """Rows of the active row tiles [off_l, off_l + 32 ceil(count_l / 32)), below M."""
    return torch.cat(
        [torch.arange(o, min(o + 32 * row_tiles(c), rows)) for o, c in zip(offsets, counts)] + [torch.zeros(0)]
    ).long()


def same_bits(a, b):
    return torch.equal(a.contiguous().view(torch.int16), b.contiguous().view(torch.int16))


GROUPED = {
    "skewed": ([3, 40, 0], 96, 64),  # counts off the tile grid, an expert without tokens
    "one-expert-M-45": ([45], 96, 64),  # M not a multiple of 32: the addend ends inside a row tile
    "wide-segment": ([70, 33], 64, 32 * 20),  # 20 columns: strips of 16 and 4 tiles
}


@pytest.mark.parametrize("grid", ["1x1", "8x8"])
@pytest.mark.parametrize("case", list(GROUPED))
def test_grouped_row_major_addend_equals_the_tile_addend(devices, case, grid):
    counts, kd, n = GROUPED[case]
    device = devices[grid]
    if case.startswith("one-expert"):
        x, w, offsets, (x_d, w_d, counts_d, offsets_d) = one_expert_on_every_row(counts[0], kd, n, 12, device)
    else:
        x, w, offsets, (x_d, w_d, counts_d, offsets_d) = make_grouped(kd, n, counts, seed=11, device=device)
    rows = x.shape[0]
    addend = random_addend((rows, n), seed=13)
    tile_addend = ttnn.to_layout(row_major(addend, device), ttnn.TILE_LAYOUT)
    tile_path = ttnn.to_torch(ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d, addend=tile_addend))
    got = ttnn.to_torch(
        ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d, addend=row_major(addend, device))
    )
    defined = active_rows(counts, offsets, rows)
    assert same_bits(got[defined], tile_path[defined]), f"{case}: RM addend differs from the TILE addend"
    expected = golden.moe_bmm(x, w, counts_column(counts), expert_offsets=counts_column(offsets)) + addend.float()
    assert_pcc(expected[defined], got[defined].float(), PCC, name=f"grouped + RM addend, {case}")
    for o, c in zip(offsets, counts):  # rows past a count in an active tile: the addend alone
        past = torch.arange(o + c, min(o + 32 * row_tiles(c), rows))
        assert torch.equal(got[past].float(), addend[past].float()), f"{case}: rows past {c} are not the addend"


def test_row_major_output_with_row_major_addend(devices):
    """Both row-major: the counted rows equal the TILE addend's result + to_layout; padded mode too."""
    device = devices["2x3"]
    counts, tokens, n = [70, 0, 5], 100, 64
    x, w, (x_d, w_d, counts_d, _) = make_padded(3, tokens, 128, n, counts, seed=1, device=device)
    addend = random_addend((3, tokens, n), seed=2)
    tile_addend = ttnn.from_torch(addend, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    reference = ttnn.to_torch(ttnn_moe.moe_bmm(x_d, w_d, counts_d, addend=tile_addend))
    got = ttnn.to_torch(
        ttnn_moe.moe_bmm(x_d, w_d, counts_d, addend=row_major(addend, device), output_layout=ttnn.ROW_MAJOR_LAYOUT)
    )
    expected = golden.moe_bmm(x, w, counts_column(counts)) + addend.float()
    for l, count in enumerate(counts):
        assert same_bits(got[l, :count], reference[l, :count]), f"expert {l}: RM addend + RM output differ"
        if count:
            assert_pcc(expected[l, :count], got[l, :count].float(), PCC, name=f"padded RM, expert {l}")


def test_the_layers_shared_down_projection_shape(devices):
    """(1, B, H) addend as the combine returns it, B = 200 rows, one expert at offset 0 taking them all;
    fp32 accumulation (a smaller output block, so more segments) gives the TILE addend's bits too."""
    device = devices["8x8"]
    batch, kd, n = 200, 64, 256
    x, w, _, (x_d, w_d, counts_d, offsets_d) = one_expert_on_every_row(batch, kd, n, 21, device)
    addend = random_addend((1, batch, n), seed=22)
    config = WormholeComputeKernelConfig(math_fidelity="HiFi4", fp32_dest_acc_en=True)
    tile_addend = ttnn.to_layout(row_major(addend.reshape(batch, n), device), ttnn.TILE_LAYOUT)
    for compute in (None, config):
        run = lambda a: ttnn.to_torch(  # noqa: E731
            ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d, addend=a, compute_kernel_config=compute)
        )
        got, reference = run(row_major(addend, device)), run(tile_addend)
        assert tuple(got.shape) == (batch, n)
        assert same_bits(got, reference)
        expected = golden.moe_bmm(x, w, counts_column([batch]), expert_offsets=counts_column([0]))
        assert_pcc(expected + addend[0].float(), got.float(), PCC, name="shared down projection + RM addend")


def test_each_addend_row_is_read_once_per_strip(devices):
    """One core, one expert of 45 rows (M = 45), 20 columns in one segment: rows 0..44 are read once per
    strip of columns (16 and 4 tiles), rows the output does not have never."""
    device = devices["1x1"]
    rows, n = 45, 32 * 20
    _, _, _, (x_d, w_d, counts_d, offsets_d) = one_expert_on_every_row(rows, 64, n, 31, device)
    addend_d = row_major(random_addend((rows, n), seed=32), device)
    ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d, addend=addend_d)
    reads = ttnn.last_run_counters()["dram_buffers"][addend_d.to_arg().address]
    strips = -(-20 // STRIP_TILES)
    assert reads["page_reads"] == rows * strips
    assert reads["bytes_read"] == rows * n * 2


def test_row_major_addend_is_part_of_the_program_cache_key(devices):
    device = devices["1x1"]
    _, _, _, (x_d, w_d, counts_d, offsets_d) = one_expert_on_every_row(32, 64, 32, 41, device)
    addend = random_addend((32, 32), seed=42)
    ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d, addend=row_major(addend, device))
    before = _C.ops.moe_bmm.program_cache_info()
    tile_addend = ttnn.from_torch(addend, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d, addend=tile_addend)
    assert _C.ops.moe_bmm.program_cache_info()["misses"] == before["misses"] + 1


def test_bad_row_major_addend_raises_naming_the_value(devices):
    device = devices["1x1"]
    _, _, _, (x_d, w_d, counts_d, offsets_d) = one_expert_on_every_row(45, 64, 64, 51, device)

    def call(addend, **options):
        return ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d, addend=addend, **options)

    with pytest.raises(ValueError, match=r"addend must be shaped like the output \(45, 64\), got \(45, 32\)"):
        call(row_major(torch.zeros(45, 32), device))
    with pytest.raises(ValueError, match=r"addend must be shaped like the output \(45, 64\), got shape \(2, 45, 64\)"):
        call(row_major(torch.zeros(2, 45, 64), device))
    with pytest.raises(ValueError, match="addend must be bfloat16, got float32"):
        call(ttnn.from_torch(torch.zeros(45, 64), dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device))
    _, _, (px_d, pw_d, pcounts_d, _) = make_padded(2, 32, 64, 64, [5, 32], seed=52, device=device)
    with pytest.raises(ValueError, match="a ROW_MAJOR addend needs grouped mode or a ROW_MAJOR output"):
        ttnn_moe.moe_bmm(px_d, pw_d, pcounts_d, addend=row_major(torch.zeros(2, 32, 64), device))
