"""The cores' rectangles of to_layout's tile grid against ttnn 0.81.1's factory choices, worked out by
hand from its rules (codegen untilize: column-parallel, 2D, whole rows; native: square blocks or
whole rows): every tile converted exactly once, on at most the grid's cores."""

import pytest
from ttnn_moe.emu.layout_work_split import Rect, tilize_split, untilize_split

L1 = 1_400_000  # about what a Wormhole core has free for CBs


def _untilize(tile_rows, tile_cols, cores=64, aligned=True, tile_bytes=2048, bf16=True):
    return untilize_split(
        tile_rows, tile_cols, codegen_dtype=bf16, tile_aligned=aligned, tile_bytes=tile_bytes, cores=cores, l1_bytes=L1
    )


def _covers_once(rects, tile_rows, tile_cols):
    seen = [
        (r, c)
        for rect in rects
        for r in range(rect.first_row, rect.first_row + rect.rows)
        for c in range(rect.first_col, rect.first_col + rect.cols)
    ]
    return sorted(seen) == [(r, c) for r in range(tile_rows) for c in range(tile_cols)]


def test_one_tile_row_spreads_its_columns_over_the_grid():
    # decode x at H = 7168: 224 tile columns over 64 cores, the first 224 % 64 = 32 take one more
    rects = _untilize(1, 224)
    assert len(rects) == 64
    assert [r.cols for r in rects] == [4] * 32 + [3] * 32
    assert rects[0] == Rect(0, 1, 0, 4) and rects[32] == Rect(0, 1, 128, 3)
    assert _covers_once(rects, 1, 224)


def test_one_tile_row_too_wide_for_the_columns_cbs_takes_square_blocks():
    # 2 x ceil(1400 / 4) x 2048 B > L1: out of the codegen scope. Natively the row does not fit L1
    # either: square blocks, 350 tiles a core, the first side from 19 up with under 4 blocks is 467
    rects = _untilize(1, 1400, cores=4)
    assert rects == [Rect(0, 1, 0, 467), Rect(0, 1, 467, 467), Rect(0, 1, 934, 466)]


def test_few_tile_rows_cut_into_column_blocks():
    # 16 tile rows x 8: ncol = largest divisor of 8 up to 64 // 16 = 4 -> 4 blocks of 2 per row
    rects = _untilize(16, 8)
    assert len(rects) == 64 and all(r.rows == 1 and r.cols == 2 for r in rects)
    assert rects[5] == Rect(1, 1, 2, 2)
    assert _covers_once(rects, 16, 8)


def test_no_column_divisor_or_many_rows_take_whole_rows():
    assert _untilize(2, 7, cores=4) == [Rect(0, 1, 0, 7), Rect(1, 1, 0, 7)]  # 7 has no divisor <= 2
    assert _untilize(5, 8, cores=4) == [Rect(0, 2, 0, 8), Rect(2, 1, 0, 8), Rect(3, 1, 0, 8), Rect(4, 1, 0, 8)]
    assert _untilize(1, 1) == [Rect(0, 1, 0, 1)]


def test_unaligned_bfloat16_takes_whole_rows():
    assert _untilize(2, 8, cores=4, aligned=False) == [Rect(0, 1, 0, 8), Rect(1, 1, 0, 8)]


def test_wide_prefill_rows_take_square_blocks():
    # 16 x 224 tiles is past the codegen threshold (2 x 224 x 2048 > 800,000): the native block
    # factory, 56 tiles a core -> side 8 (28 x 2 = 56 blocks < 64), not 16 cores of whole rows
    rects = _untilize(16, 224)
    assert len(rects) == 56 and all(r.rows == 8 and r.cols == 8 for r in rects)
    assert rects[28] == Rect(8, 8, 0, 8)
    assert _covers_once(rects, 16, 224)


def test_square_blocks_cut_short_at_the_edges():
    # 2 x 196 on 4 cores: 98 tiles a core; the first side with fewer than 4 blocks is 66
    rects = _untilize(2, 196, cores=4)
    assert rects == [Rect(0, 2, 0, 66), Rect(0, 2, 66, 66), Rect(0, 2, 132, 64)]


def test_four_byte_rows_over_half_of_l1():
    # float32 (4096-B tiles), 100 a row: twice fits (819,200 B) but is over half of L1. One row: 3
    # blocks of side 34 beat 1 core of rows; 3 rows: 3 blocks do not beat 3 cores, and the row
    # factory cannot hold such a row, so one core does it all
    assert _untilize(1, 100, bf16=False, tile_bytes=4096, cores=4) == [
        Rect(0, 1, 0, 34),
        Rect(0, 1, 34, 34),
        Rect(0, 1, 68, 32),
    ]
    assert _untilize(3, 100, bf16=False, tile_bytes=4096, cores=4) == [Rect(0, 3, 0, 100)]


@pytest.mark.parametrize(
    "tile_rows, tile_cols, expected",
    [
        (1, 224, [Rect(0, 1, 4 * i, 4) for i in range(56)]),  # 4 tiles a core: side 2 gives 112 blocks, 4 gives 56
        (1, 8, [Rect(0, 1, 0, 8)]),  # not wide: whole rows
        (40, 8, [Rect(i, 1, 0, 8) for i in range(40)]),
    ],
)
def test_tilize_blocks_or_rows(tile_rows, tile_cols, expected):
    assert tilize_split(tile_rows, tile_cols, tile_bytes=2048, cores=64, l1_bytes=L1) == expected
