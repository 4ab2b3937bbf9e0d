"""Which cores ttnn 0.81.1's to_layout works on, and on what: the work split of the program factory
its untilize or tilize picks for an interleaved tensor, as rectangles of the tile grid.

The tile grid is `tile_rows` x `tile_cols` with the batch folded into the rows. A core's rectangle
is a range of tile rows by a range of tile columns; cores take them in row-major order.

untilize (TILE -> ROW_MAJOR), as `ttnn::untilize` routes it:
- bfloat16 / bfloat8_b within the codegen untilize's scope (one tile row whose busiest core's
  columns fit L1 twice; more tile rows only while two CBs of a whole tile row, 2 x Wt x 2048 B,
  stay under its 800,000 B chunking threshold; bfloat8_b only tile-aligned) go to the codegen
  program factory: a single tile row splits its tile columns over the grid (column-parallel);
  fewer tile rows than cores split each row into `ncol` equal column blocks, ncol the largest
  divisor of Wt up to cores / tile rows (2D); otherwise, and always without tile alignment, whole
  tile rows over the grid;
- everything else to the native factories: the block factory (square blocks of tiles, one per
  core) when a tile row does not fit L1 twice or when the row is wide (Wt > 32 and Wt above 32 or
  the tile-row count) and blocks would use more cores than whole tile rows; else whole tile rows.
tilize (ROW_MAJOR -> TILE): the native factories, with the same block-or-rows choice.

A native untilize of tile rows wider than half of L1 (4-byte formats past ~85 tiles) runs on one
core, or for a single tile row on its column factory. Not followed: that factory's core grid (from
divisors of Wt; here the tile columns split evenly over the grid) and the native block factory's
batch handling (blocks here span the batch-folded rows).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from ttnn_moe.emu import kernel_programs as kp

_TILE_BYTES_16 = 2048  # the codegen untilize plans bf16 / bf8_b with 2048-byte tiles
_CODEGEN_CHUNK_BYTES = 800_000  # its whole-row threshold for more than one tile row
_WIDE_ROW_TILES = 32  # the native factories' threshold_row_block


class Rect(NamedTuple):
    first_row: int
    rows: int
    first_col: int
    cols: int


def _rows(tile_rows: int, tile_cols: int, cores: int) -> list[Rect]:
    """Whole tile rows, near-equal consecutive ranges, the first cores one more."""
    ranges = kp.split(tile_rows, min(tile_rows, cores))
    return [Rect(first, count, 0, tile_cols) for first, count in ranges if count]


def _columns(tile_cols: int, cores: int) -> list[Rect]:
    """One tile row: its tile columns in near-equal consecutive ranges."""
    return [Rect(0, 1, first, count) for first, count in kp.split(tile_cols, min(tile_cols, cores)) if count]


def _two_d(tile_rows: int, tile_cols: int, cores: int) -> list[Rect] | None:
    """Each tile row cut into ncol equal column blocks, one per core, or None when ncol < 2."""
    if tile_rows >= cores or tile_cols < 2:
        return None
    most = min(cores // tile_rows, tile_cols)
    ncol = max([d for d in range(2, most + 1) if tile_cols % d == 0], default=1)
    if ncol < 2:
        return None
    width = tile_cols // ncol
    return [Rect(i // ncol, 1, (i % ncol) * width, width) for i in range(tile_rows * ncol)]


def _square_side(tile_rows: int, tile_cols: int, cores: int) -> int:
    """The side of the native block factory's square blocks: the smallest from sqrt(tiles per
    core) up whose block count stays below the core count."""
    per_core = math.ceil(tile_rows * tile_cols / cores)
    side = math.isqrt(per_core)
    if side * side == per_core and math.ceil(tile_cols / side) * math.ceil(tile_rows / side) < cores:
        return side
    for candidate in range(side + 1, tile_rows * tile_cols + 1):
        if math.ceil(tile_cols / candidate) * math.ceil(tile_rows / candidate) < cores:
            return candidate
    return 1


def _blocks(tile_rows: int, tile_cols: int, cores: int) -> list[Rect]:
    """Square blocks row by row, the last of a row and of the grid cut short."""
    side = _square_side(tile_rows, tile_cols, cores)
    return [
        Rect(r, min(side, tile_rows - r), c, min(side, tile_cols - c))
        for r in range(0, tile_rows, side)
        for c in range(0, tile_cols, side)
    ]


def _native(tile_rows: int, tile_cols: int, cores: int, tile_bytes: int, l1_bytes: int, untilize: bool) -> list[Rect]:
    row_fits = 2 * tile_cols * tile_bytes < l1_bytes  # a tile row in the input and the output CB
    wide = tile_cols > _WIDE_ROW_TILES and (tile_rows > _WIDE_ROW_TILES or tile_cols > tile_rows)
    if not row_fits or wide:
        row_cores = math.ceil(tile_rows / math.ceil(tile_rows / cores))
        side = _square_side(tile_rows, tile_cols, cores)
        if not row_fits or row_cores < math.ceil(tile_rows / side) * math.ceil(tile_cols / side):
            return _blocks(tile_rows, tile_cols, cores)
    if untilize and 2 * tile_cols * tile_bytes > l1_bytes // 2:  # a tile row over half of L1
        return _columns(tile_cols, cores) if tile_rows == 1 else [Rect(0, tile_rows, 0, tile_cols)]
    return _rows(tile_rows, tile_cols, cores)


def untilize_split(
    tile_rows: int,
    tile_cols: int,
    *,
    codegen_dtype: bool,
    tile_aligned: bool,
    tile_bytes: int,
    cores: int,
    l1_bytes: int,
) -> list[Rect]:
    """codegen_dtype: bfloat16 or bfloat8_b (the codegen untilize's formats; bfloat8_b needs
    tile_aligned). tile_bytes: the format's tile size; l1_bytes: L1 free for CBs on a core."""
    whole_row_bytes = 2 * tile_cols * _TILE_BYTES_16
    # a single tile row: the busiest core's columns in both CBs must fit L1
    columns_fit = 2 * math.ceil(tile_cols / min(tile_cols, cores)) * _TILE_BYTES_16 <= l1_bytes
    if codegen_dtype and not tile_aligned and whole_row_bytes <= _CODEGEN_CHUNK_BYTES:
        return _rows(tile_rows, tile_cols, cores)
    in_scope = columns_fit if tile_rows == 1 else whole_row_bytes <= _CODEGEN_CHUNK_BYTES
    if codegen_dtype and tile_aligned and in_scope:
        if tile_rows == 1 and tile_cols > 1:
            return _columns(tile_cols, cores)
        return (tile_cols > 1 and _two_d(tile_rows, tile_cols, cores)) or _rows(tile_rows, tile_cols, cores)
    return _native(tile_rows, tile_cols, cores, tile_bytes, l1_bytes, untilize=True)


def tilize_split(tile_rows: int, tile_cols: int, *, tile_bytes: int, cores: int, l1_bytes: int) -> list[Rect]:
    return _native(tile_rows, tile_cols, cores, tile_bytes, l1_bytes, untilize=False)
