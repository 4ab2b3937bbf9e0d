"""moe_bmm reading ROW_MAJOR x and writing ROW_MAJOR output on the emulator.

x as ROW_MAJOR rows is tilized in the op and a ROW_MAJOR output untilized in it, so both must give
bit for bit what the TILE path gives followed by ttnn.to_layout (the conversions are exact for
bfloat16), and match the fp32 golden by PCC and an element-wise error bound. Inputs carry garbage in
every row the op must not use; a preallocated output holds a sentinel, so the tests see that only
the counted rows are written. Counters show x rows read only for counted rows, once per round.
"""

from __future__ import annotations

import pytest
import torch
import ttnn_moe.emu as ttnn
from emu_fixtures import emu_devices_by_name_fixture
from test_op_moe_bmm import (
    GRIDS,
    counts_column,
    make_grouped,
    make_padded,
    row_tiles,
    segments_per_core,
)
from ttnn_moe.testing import assert_pcc

import ttnn_moe
from ttnn_moe import _C, golden

PCC = {"bf16": 0.9999, "bfp8": 0.99, "bfp4": 0.999}  # bfp4 against the golden on the rounded weights
W_DTYPES = {"bf16": ttnn.bfloat16, "bfp8": ttnn.bfloat8_b, "bfp4": ttnn.bfloat4_b}
SENTINEL = 7.0  # what a preallocated output holds where the op must not write

devices = emu_devices_by_name_fixture(GRIDS)


def row_major(t, device):
    return ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)


def sentinel_output(shape, device):
    return row_major(torch.full(shape, SENTINEL), device)


def counted_rows(counts, offsets):
    """Rows of the output holding an expert's counted tokens: [off_l, off_l + count_l)."""
    return torch.cat([torch.arange(o, o + c) for o, c in zip(offsets, counts)] + [torch.zeros(0)]).long()


def stored_weights(w, w_d, w_name):
    """The weights as the device holds them (block floats rounded)."""
    return ttnn.to_torch(w_d).float() if w_name != "bf16" else w.float()


def check_against_golden(got_rows, x, w, counts, offsets, kt, pcc, name):
    """PCC and |got - golden| <= (Kt + 1) * 2^-9 * (|x| @ |w|) on the counted rows (bfloat16 DST
    rounds once per tile-product accumulation, half an ulp of a partial sum below |x| @ |w|)."""
    column = None if offsets is None else counts_column(offsets)
    expected = golden.moe_bmm(x, w, counts_column(counts), expert_offsets=column)
    magnitude = golden.moe_bmm(x.float().abs(), w.abs(), counts_column(counts), expert_offsets=column)
    n = expected.shape[-1]
    rows = counted_rows(counts, padded_offsets(counts, x.shape[-2]) if offsets is None else offsets)
    expected, magnitude = expected.reshape(-1, n)[rows], magnitude.reshape(-1, n)[rows]
    got = got_rows.float().reshape(-1, n)[rows]
    if rows.numel():
        assert_pcc(expected, got, pcc, name=name)
        excess = (got - expected).abs() - (kt + 1) * 2.0**-9 * magnitude
        assert (excess <= 0).all(), f"{name}: error exceeds the bound by {excess.max().item():.3g}"


def check_only_counted_rows_written(got, counts, offsets):
    flat = got.float().reshape(-1, got.shape[-1])
    untouched = torch.ones(flat.shape[0], dtype=torch.bool)
    untouched[counted_rows(counts, offsets)] = False
    assert (flat[untouched] == SENTINEL).all(), "a row past an expert's count was written"


def padded_offsets(counts, tokens):
    """Padded mode's counted rows in the flattened (E_l * T, N) output start at l * T."""
    return [l * tokens for l in range(len(counts))]


GROUPED_ROUTINGS = {
    "skewed": [45, 0, 7, 70, 1],  # counts off the tile grid, an expert without tokens
    "zero_experts": [0, 0, 33, 0],
    "one_expert": [0, 130, 0],  # every token on one expert: five row tiles
}


@pytest.mark.parametrize("w_name", list(W_DTYPES))
@pytest.mark.parametrize("routing", list(GROUPED_ROUTINGS))
def test_grouped_row_major_in_and_out(devices, routing, w_name):
    """RM x and an RM output equal the TILE path + to_layout bit for bit on every counted row, match
    the golden, and leave every other row as it was."""
    counts, kd, n, device = GROUPED_ROUTINGS[routing], 128, 192, devices["2x3"]
    x, w, offsets, (x_d, w_d, counts_d, offsets_d) = make_grouped(
        kd, n, counts, seed=1, w_dtype=W_DTYPES[w_name], device=device
    )
    tile_path = ttnn.to_layout(ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d), ttnn.ROW_MAJOR_LAYOUT)
    out = ttnn_moe.moe_bmm(
        row_major(x, device),
        w_d,
        counts_d,
        expert_offsets=offsets_d,
        output_tensor=sentinel_output((x.shape[0], n), device),
    )
    assert out.layout == ttnn.ROW_MAJOR_LAYOUT
    got, reference = ttnn.to_torch(out), ttnn.to_torch(tile_path)
    rows = counted_rows(counts, offsets)
    assert torch.equal(got[rows].view(torch.int16), reference[rows].view(torch.int16))
    check_only_counted_rows_written(got, counts, offsets)
    w_stored = stored_weights(w, w_d, w_name)
    check_against_golden(got, x, w_stored, counts, offsets, kd // 32, PCC[w_name], f"grouped RM, {routing}")


@pytest.mark.parametrize("out_layout", ["TILE", "ROW_MAJOR"])
def test_padded_row_major_x(devices, out_layout):
    """Padded mode: RM x (T = 100, not a multiple of 32) gives the TILE path's output bit for bit; a
    TILE output keeps its whole-output contract (zeros past the counts), an RM one writes counted rows."""
    counts, tokens, kd, n, device = [70, 0, 5, 100], 100, 96, 64, devices["8x8"]
    x, w, (x_d, w_d, counts_d, _) = make_padded(4, tokens, kd, n, counts, seed=2, device=device)
    reference = ttnn.to_torch(ttnn_moe.moe_bmm(x_d, w_d, counts_d))
    if out_layout == "TILE":
        out = ttnn_moe.moe_bmm(row_major(x, device), w_d, counts_d)
        assert out.layout == ttnn.TILE_LAYOUT
        assert torch.equal(ttnn.to_torch(out).view(torch.int16), reference.view(torch.int16))
        return
    out = ttnn_moe.moe_bmm(
        row_major(x, device),
        w_d,
        counts_d,
        output_layout=ttnn.ROW_MAJOR_LAYOUT,
        output_tensor=sentinel_output((4, tokens, n), device),
    )
    got = ttnn.to_torch(out)
    offsets = padded_offsets(counts, tokens)
    rows = counted_rows(counts, offsets)
    assert torch.equal(got.reshape(-1, n)[rows].view(torch.int16), reference.reshape(-1, n)[rows].view(torch.int16))
    check_only_counted_rows_written(got, counts, offsets)
    check_against_golden(got, x, w.float(), counts, None, kd // 32, PCC["bf16"], "padded RM")


def test_tile_x_row_major_output(devices):
    """A TILE x with an RM output (the layer's down projection): the TILE path's rows bit for bit."""
    counts, kd, n, device = [3, 64, 0, 40], 256, 128, devices["2x3"]
    x, w, offsets, (x_d, w_d, counts_d, offsets_d) = make_grouped(kd, n, counts, seed=3, device=device)
    reference = ttnn.to_torch(ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d))
    out = ttnn_moe.moe_bmm(
        x_d, w_d, counts_d, expert_offsets=offsets_d, output_tensor=sentinel_output((x.shape[0], n), device)
    )
    got = ttnn.to_torch(out)
    rows = counted_rows(counts, offsets)
    assert torch.equal(got[rows].view(torch.int16), reference[rows].view(torch.int16))
    check_only_counted_rows_written(got, counts, offsets)


@pytest.mark.parametrize("w_name", ["bf16", "bfp8"])
def test_swiglu_reads_row_major_x(devices, w_name):
    """The layer's first launch: SwiGLU over RM tokens equals SwiGLU over the tilized tokens."""
    counts, kd, n, device = [45, 0, 100], 128, 64, devices["8x8"]
    x, w, offsets, (x_d, w_d, counts_d, offsets_d) = make_grouped(
        kd, 2 * n, counts, seed=4, w_dtype=W_DTYPES[w_name], device=device
    )
    interleaved = ttnn.from_torch(
        ttnn_moe.interleave_gate_up(w[..., :n], w[..., n:]),
        dtype=W_DTYPES[w_name],
        layout=ttnn.TILE_LAYOUT,
        device=device,
    )
    run = lambda x_in: ttnn.to_torch(  # noqa: E731
        ttnn_moe.moe_bmm(x_in, interleaved, counts_d, expert_offsets=offsets_d, activation="swiglu")
    )
    tiled, from_rows = run(x_d), run(row_major(x, device))
    rows = torch.cat([torch.arange(o, o + 32 * row_tiles(c)) for o, c in zip(offsets, counts)]).long()
    assert torch.equal(tiled[rows].view(torch.int16), from_rows[rows].view(torch.int16))
    w_stored = stored_weights(w, w_d, w_name)
    gate = golden.moe_bmm(x, w_stored[..., :n], counts_column(counts), expert_offsets=counts_column(offsets))
    up = golden.moe_bmm(x, w_stored[..., n:], counts_column(counts), expert_offsets=counts_column(offsets))
    counted = counted_rows(counts, offsets)
    assert_pcc(
        (torch.nn.functional.silu(gate) * up)[counted], from_rows[counted].float(), PCC[w_name], name="swiglu RM x"
    )


def test_addend_with_row_major_in_and_out(devices):
    """out = x @ w + addend with RM x and an RM output: the TILE path's counted rows bit for bit."""
    counts, kd, n, device = [33, 0, 7], 96, 64, devices["2x3"]
    x, w, offsets, (x_d, w_d, counts_d, offsets_d) = make_grouped(kd, n, counts, seed=5, device=device)
    addend = (torch.randn(x.shape[0], n, generator=torch.Generator().manual_seed(6)) * 2).bfloat16()
    addend_d = ttnn.from_torch(addend, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    reference = ttnn.to_torch(ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d, addend=addend_d))
    out = ttnn_moe.moe_bmm(
        row_major(x, device),
        w_d,
        counts_d,
        expert_offsets=offsets_d,
        addend=addend_d,
        output_tensor=sentinel_output((x.shape[0], n), device),
    )
    got = ttnn.to_torch(out)
    rows = counted_rows(counts, offsets)
    assert torch.equal(got[rows].view(torch.int16), reference[rows].view(torch.int16))
    check_only_counted_rows_written(got, counts, offsets)
    expected = golden.moe_bmm(x, w, counts_column(counts), expert_offsets=counts_column(offsets)) + addend.float()
    assert_pcc(expected[rows], got[rows].float(), PCC["bf16"], name="addend RM")


@pytest.mark.parametrize("counts", [[20, 32, 0, 5], [70, 3, 96, 0]], ids=["decode", "prefill"])
def test_row_major_x_reads_counted_rows_once_per_round(devices, counts):
    """Each counted row's k blocks leave DRAM once per round of its row block (once per segment of a
    core straddling two blocks), no uncounted row is ever read, and the round's row-major block is
    multicast to its other cores (the bytes of the same block of tiles)."""
    kd, n, grid = 256, 1024, "2x3"
    kt, inner_block = kd // 32, 8
    x, w, offsets, (_, w_d, counts_d, offsets_d) = make_grouped(kd, n, counts, seed=7, device=devices[grid])
    x_rm = row_major(x, devices[grid])
    out = ttnn_moe.moe_bmm(x_rm, w_d, counts_d, expert_offsets=offsets_d, output_layout=ttnn.ROW_MAJOR_LAYOUT)
    check_against_golden(ttnn.to_torch(out), x, w.float(), counts, offsets, kt, PCC["bf16"], "RM x, sharing")
    counters = ttnn.last_run_counters()
    traffic = counters["dram_buffers"][x_rm.to_arg().address]
    segments = segments_per_core(counts, n // 32, 6, row_tiles(x.shape[0]))
    counted_in = lambda l, r0, rows: min(counts[l] - 32 * r0, 32 * rows)  # noqa: E731
    reads, rounds = [], {}
    for core in segments:
        if len({(l, r0) for l, r0, *_ in core}) > 1:
            reads += [counted_in(l, r0, rows) for l, r0, rows, *_ in core]
            continue
        for j, (l, r0, rows, *_) in enumerate(core):
            rounds[(l, r0, rows, j)] = rounds.get((l, r0, rows, j), 0) + 1
    reads += [counted_in(l, r0, rows) for l, r0, rows, _ in rounds]
    assert traffic["bytes_read"] == sum(reads) * kd * 2
    assert traffic["unique_pages_read"] == sum(counts)
    block_bytes = {key: key[2] * kt * 2048 + 4 * (kt // inner_block) for key in rounds}
    assert counters["noc_bytes_written_l1"] == sum((cores - 1) * block_bytes[key] for key, cores in rounds.items())


def test_row_major_x_and_output_layout_are_part_of_the_cache_key(devices):
    device = devices["1x1"]
    counts = [40]
    x, w, offsets, (x_d, w_d, counts_d, offsets_d) = make_grouped(64, 32, counts, seed=8, device=device)
    ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d)
    for x_in, layout in ((row_major(x, device), ttnn.TILE_LAYOUT), (x_d, ttnn.ROW_MAJOR_LAYOUT)):
        before = _C.ops.moe_bmm.program_cache_info()["misses"]
        ttnn_moe.moe_bmm(x_in, w_d, counts_d, expert_offsets=offsets_d, output_layout=layout)
        assert _C.ops.moe_bmm.program_cache_info()["misses"] == before + 1


def test_bad_row_major_inputs_raise_naming_the_value(devices):
    device = devices["1x1"]
    x, w, offsets, (x_d, w_d, counts_d, offsets_d) = make_grouped(64, 32, [40], seed=9, device=device)
    x_fp32 = ttnn.from_torch(x.float(), dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
    with pytest.raises(ValueError, match="x must be bfloat16, got float32"):
        ttnn_moe.moe_bmm(x_fp32, w_d, counts_d, expert_offsets=offsets_d)
    odd = row_major(torch.zeros(x.shape[0], 48), device)
    w48 = ttnn.from_torch(torch.zeros(1, 48, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    with pytest.raises(ValueError, match="Kd .* must be a positive multiple of 32, got 48"):
        ttnn_moe.moe_bmm(odd, w48, counts_d, expert_offsets=offsets_d)
    with pytest.raises(ValueError, match="output_layout must be TILE or ROW_MAJOR, got 'rows'"):
        ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d, output_layout="rows")
    tile_out = ttnn.from_torch(torch.zeros(x.shape[0], 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    with pytest.raises(ValueError, match="output_layout is ROW_MAJOR but output_tensor is TILE"):
        ttnn_moe.moe_bmm(
            x_d, w_d, counts_d, expert_offsets=offsets_d, output_layout=ttnn.ROW_MAJOR_LAYOUT, output_tensor=tile_out
        )
