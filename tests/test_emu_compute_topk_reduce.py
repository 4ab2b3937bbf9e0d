"""Compute APIs tt-metal's DeepSeek gate kernels use, on the emulator, each against torch: transpose_tile
(float and uint16 tiles), add_tiles accumulating onto DST (add_init's acc_to_dest), reduce_tile SUM along
rows and columns with a partial scaler, and the bitonic top-k stages of api/compute/topk.h (local sort,
merge, rebuild) on a two-tile slab; and the error of each thing they refuse."""

from __future__ import annotations

import pytest
import torch
from emu_programs import TILE_BYTES, cb, core_set, kernel, tilize, untilize
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd

U16 = pd.DataFormat.UInt16
BF16 = pd.DataFormat.Float16_b


def run_slab(
    values: torch.Tensor,
    aux: torch.Tensor | None,
    ops: str,
    out_tiles: int,
    out_index_tiles: int = 0,
    aux_format=U16,
    fp32_dest=False,
):
    """values (32, 32 n) bf16 -> CB 0; aux (32, 32 m) -> CB 1 (uint16 or bf16); runs `ops` in one DST
    section; returns DST 0.. as (32, 32 out_tiles) floats and DST 2.. as (32, 32 out_index_tiles) ints."""
    dev = emu.open_device()
    tiles = lambda m: m.shape[1] // 32  # noqa: E731
    cols = lambda m: torch.cat([m[:, 32 * i : 32 * i + 32] for i in range(tiles(m))])  # noqa: E731 tiles stacked
    n_in, n_aux = tiles(values), 0 if aux is None else tiles(aux)
    pages = tilize(cols(values))
    if aux is not None:
        aux_dtype = torch.int16 if aux_format == U16 else torch.bfloat16
        aux_bits = aux.to(torch.int32).to(torch.int16) if aux_format == U16 else aux
        pages = torch.cat([torch.from_numpy(pages), torch.from_numpy(tilize(cols(aux_bits), aux_dtype))]).numpy()
    src = dev.allocate((n_in + n_aux) * TILE_BYTES, TILE_BYTES)
    dst = dev.allocate((out_tiles + out_index_tiles) * TILE_BYTES, TILE_BYTES)
    dev.write(src, TILE_BYTES, pages)
    cores = core_set(0, 0)
    core = pd.CoreCoord(0, 0)
    ct = emu.tensor_accessor_args(TILE_BYTES, True)
    named = [("in_tiles", n_in), ("aux_tiles", n_aux), ("out_tiles", out_tiles), ("out_index_tiles", out_index_tiles)]
    program = pd.ProgramDescriptor(
        kernels=[
            kernel(
                "reader_two_cbs.cpp",
                cores,
                pd.ReaderConfigDescriptor(),
                ct,
                [("cb_first", 0), ("cb_second", 1)],
                [(core, [src, n_in, n_aux])],
            ),
            kernel(
                "compute_slab.cpp",
                cores,
                pd.ComputeConfigDescriptor(fp32_dest_acc_en=fp32_dest),
                (),
                named,
                [],
                [("OPS", ops)],
            ),
            kernel(
                "writer_two_cbs.cpp",
                cores,
                pd.WriterConfigDescriptor(),
                ct,
                [("cb_first", 16), ("cb_second", 17)],
                [(core, [dst, out_tiles, out_index_tiles])],
            ),
        ],
        cbs=[
            cb(0, max(n_in, 1), TILE_BYTES, cores),
            cb(1, max(n_aux, 1), TILE_BYTES, cores, aux_format),
            cb(16, out_tiles, TILE_BYTES, cores),
            cb(17, max(out_index_tiles, 1), TILE_BYTES, cores, U16),
        ],
    )
    emu.run_program(dev, program)
    raw = dev.read(dst, TILE_BYTES, (out_tiles + out_index_tiles) * TILE_BYTES)
    side = lambda m, n: torch.cat([m[32 * i : 32 * i + 32] for i in range(n)], dim=1)  # noqa: E731
    got = side(untilize(raw[: out_tiles * TILE_BYTES], 32 * out_tiles, 32), out_tiles)
    got_idx = None
    if out_index_tiles:
        bits = untilize(raw[out_tiles * TILE_BYTES :], 32 * out_index_tiles, 32, torch.int16)
        got_idx = side(bits.long() & 0xFFFF, out_index_tiles)
    return got, got_idx


def bf16(t: torch.Tensor) -> torch.Tensor:
    return t.float().bfloat16().float()


def distinct_values(rows: int, cols: int, seed: int) -> torch.Tensor:
    """Pairwise distinct bf16 values: consecutive bf16 bit patterns from 2^-7 up, shuffled, half negated."""
    g = torch.Generator().manual_seed(seed)
    bits = (0x3C00 + torch.randperm(rows * cols, generator=g)).to(torch.int16)
    signs = torch.where(torch.rand(rows * cols, generator=g) < 0.5, -1.0, 1.0)
    return (bits.view(torch.bfloat16).float() * signs).reshape(rows, cols)


def test_transpose_tile_of_float_and_uint16_tiles():
    values = bf16(torch.randn(32, 32, generator=torch.Generator().manual_seed(1)))
    ids = torch.arange(1024).reshape(32, 32) * 37 % 65536
    got, got_idx = run_slab(values, ids, "transpose_init(0); transpose_tile(0, 0, 0); transpose_tile(1, 0, 2)", 1, 1)
    assert torch.equal(got, values.T)
    assert torch.equal(got_idx, ids.T)


def test_add_init_acc_to_dest_adds_every_pair_onto_dst():
    a = bf16(torch.randn(32, 128, generator=torch.Generator().manual_seed(2)))
    ops = "add_init(0, 0, true); add_tiles(0, 0, 0, 1, 0); add_tiles(0, 0, 2, 3, 0)"
    got, _ = run_slab(a, None, ops, 1)
    t = [a[:, 32 * i : 32 * i + 32] for i in range(4)]
    # DST = bf16(0 + bf16(t0 + t1)); then DST = bf16(DST + (t2 + t3)) in fp32: 16-bit DST rounds each op.
    first = bf16(t[0] + t[1])
    assert torch.equal(got, bf16(first + (t[2] + t[3])))


def test_acc_to_dest_is_off_again_after_a_plain_add_init():
    a = bf16(torch.randn(32, 128, generator=torch.Generator().manual_seed(3)))
    ops = "add_init(0, 0, true); add_tiles(0, 0, 0, 1, 0); add_init(0, 0, false); add_tiles(0, 0, 2, 3, 0)"
    got, _ = run_slab(a, None, ops, 1)
    assert torch.equal(got, bf16(a[:, 64:96] + a[:, 96:128]))


@pytest.mark.parametrize("dim", ["ROW", "COL"])
def test_reduce_sum_weights_by_the_scaler_row_and_accumulates(dim):
    data = bf16(torch.randn(32, 64, generator=torch.Generator().manual_seed(4)))
    scaler = torch.zeros(32, 32)
    scaler[0, :8] = 1.0  # as calculate_and_prepare_reduce_scaler(8) writes it: the first 8 positions only
    scaler[0, 8:12] = 0.5
    ops = (
        f"reduce_init<PoolType::SUM, ReduceDim::REDUCE_{dim}>(0, 1, 16);"
        f"reduce_tile<PoolType::SUM, ReduceDim::REDUCE_{dim}>(0, 1, 0, 0, 0);"
        f"reduce_tile<PoolType::SUM, ReduceDim::REDUCE_{dim}>(0, 1, 1, 0, 0)"
    )
    got, _ = run_slab(data, scaler, ops, 1, aux_format=BF16)
    w = scaler[0]
    total = data[:, :32] + data[:, 32:]
    want = torch.zeros(32, 32)
    if dim == "ROW":
        # column 0 of DST: each tile's weighted row sum (fp32), added onto DST, rounded to bf16 per op
        want[:, 0] = bf16(bf16(data[:, :32] @ w) + data[:, 32:] @ w)
    else:
        want[0, :] = bf16(bf16(w @ data[:, :32]) + w @ data[:, 32:])
    assert torch.allclose(got, want, atol=0, rtol=2**-7)
    assert (got != 0).sum() == 32 and total.abs().sum() > 0


def test_reduce_max_is_refused():
    data = torch.zeros(32, 32)
    ops = "reduce_tile<PoolType::MAX, ReduceDim::REDUCE_ROW>(0, 1, 0, 0, 0)"
    with pytest.raises(emu.EmulatorError, match="reduce with PoolType MAX or MIN is not emulated"):
        run_slab(data, torch.zeros(32, 32), ops, 1, aux_format=BF16)


def slab_ops(stage: str) -> str:
    return "copy_tile(0, 0, 0); copy_tile(0, 1, 1); copy_tile(1, 0, 2); copy_tile(1, 1, 3); topk_tile_init();" + stage


def columns(values: torch.Tensor) -> torch.Tensor:
    """(32, 64) as two side-by-side tiles -> (32 columns, 64 positions): rows of tile 0, then of tile 1."""
    return torch.cat([values[:, :32], values[:, 32:]], dim=0).T


def run_stage(stage: str, values: torch.Tensor):
    ids = torch.arange(2048).reshape(64, 32)  # position p of column c holds id 32 p + c
    ids = torch.cat([ids[:32], ids[32:]], dim=1)  # as (32, 64): tile 0 | tile 1
    got, got_idx = run_slab(values, ids, slab_ops(stage), 2, 2)
    return columns(got), columns(got_idx.float()).long(), columns(values), columns(ids.float()).long()


@pytest.mark.parametrize("end_phase, idir", [(4, 0), (4, 1), (2, 0), (5, 0)])
def test_topk_local_sort_sorts_runs_in_alternating_directions(end_phase, idir):
    values = distinct_values(32, 64, seed=end_phase + idir)
    got, got_ids, col_values, col_ids = run_stage(f"topk_local_sort(0, {idir}, {end_phase})", values)
    run = 2 << end_phase
    for c in range(32):
        for j in range(64 // run):
            chunk = slice(j * run, (j + 1) * run)
            decreasing = (idir == 0) != (j % 2 == 1)
            order = torch.sort(col_values[c, chunk], descending=decreasing).indices
            assert torch.equal(got[c, chunk], col_values[c, chunk][order])
            assert torch.equal(got_ids[c, chunk], col_ids[c, chunk][order])  # the indices rode along


def test_topk_merge_puts_the_top_32_of_both_tiles_in_the_first():
    values = distinct_values(32, 64, seed=7)
    got, got_ids, col_values, col_ids = run_stage("topk_local_sort(0, 0, 4); topk_merge(0, 0, 32)", values)
    for c in range(32):
        top = torch.sort(col_values[c], descending=True)
        assert set(got[c, :32].tolist()) == set(top.values[:32].tolist())
        assert set(got[c, 32:].tolist()) == set(top.values[32:].tolist())
        assert set(got_ids[c, :32].tolist()) == set(col_ids[c][top.indices[:32]].tolist())


def test_topk_rebuild_skip_second_sorts_the_first_tile_only():
    values = distinct_values(32, 64, seed=8)
    stage = "topk_local_sort(0, 1, 5); topk_rebuild(0, false, 0, 32, 5, true)"
    got, got_ids, col_values, col_ids = run_stage(stage, values)
    for c in range(32):
        ascending = torch.sort(col_values[c]).values
        assert torch.equal(got[c, :32], torch.sort(ascending[:32], descending=True).values)
        assert torch.equal(got[c, 32:], ascending[32:])  # left as the local sort put it


def test_topk_equal_values_keep_their_position_order():
    values = torch.zeros(32, 64)
    got, got_ids, _, col_ids = run_stage("topk_local_sort(0, 0, 5)", values)
    assert torch.equal(got_ids, col_ids)


@pytest.mark.parametrize(
    "stage, message",
    [
        ("topk_local_sort(0, 0, 4, 2)", "i_start_phase=2"),
        ("topk_merge(0, 0, 24)", "k=24 must be a power of two"),
        ("topk_rebuild(0, false, 0, 32, 4, true)", "logk=4 is not log2"),
        ("topk_local_sort<true, false, false, false, TopkTieOrder::Descending>(0, 0, 4)", "stable"),
        ("topk_canonicalize_negzero_values(0)", "topk_canonicalize_negzero_values: not emulated"),
    ],
)
def test_topk_modes_and_arguments_outside_the_emulated_ones_are_refused(stage, message):
    with pytest.raises(emu.EmulatorError, match=message):
        run_stage(stage, torch.zeros(32, 64))


def test_topk_on_a_slab_whose_index_tiles_hold_floats_is_refused():
    values = torch.zeros(32, 64)
    ops = "copy_tile(0, 0, 0); copy_tile(0, 1, 1); copy_tile(0, 0, 2); topk_local_sort(0, 0, 4)"
    with pytest.raises(emu.EmulatorError, match="index tile DST 2 holds float values"):
        run_slab(values, torch.zeros(32, 64), ops, 2, 2)
