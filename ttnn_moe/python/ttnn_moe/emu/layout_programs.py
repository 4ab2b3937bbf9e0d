"""to_layout between ROW_MAJOR and TILE as a device program (kernels/layout_convert).

Each core converts a rectangle of the tile grid, split over the worker grid as ttnn 0.81.1's
program factory for the conversion splits it (layout_work_split.py): a single tile row of a
bfloat16 untilize, for instance, spreads its tile columns over the grid. ROW_MAJOR -> TILE: a
reader gathers the 32 row segments of a strip of tile columns, tilize_block makes the tiles, a
writer stores them; TILE -> ROW_MAJOR the other way round (untilize_block). Values pass
unchanged: 4-byte formats go through an fp32 DST. `converts_on_device` says which tensors it takes.
"""

from __future__ import annotations

import math

from ttnn_moe._C import program as _program
from ttnn_moe.emu import kernel_programs as kp
from ttnn_moe.emu.layout_work_split import tilize_split, untilize_split
from ttnn_moe.emu.pages import matrix_view
from ttnn_moe.emu.tensor import Tensor
from ttnn_moe.emu.types import TILE_SIZE, DataType, Layout, MemoryConfig, TensorMemoryLayout, bfloat16

_READ_STRIPS = "layout_convert/dataflow/read_row_strips.cpp"
_WRITE_STRIPS = "layout_convert/dataflow/write_row_strips.cpp"
_TILIZE = "layout_convert/compute/tilize_blocks.cpp"
_UNTILIZE = "layout_convert/compute/untilize_blocks.cpp"
_READ_PAGES = "page_copy/dataflow/read_pages.cpp"
_WRITE_PAGES = "page_copy/dataflow/write_pages.cpp"


def converts_on_device(dtype: DataType, memory_config: MemoryConfig) -> bool:
    """Element formats, interleaved in DRAM or L1. A row of any width is one ROW_MAJOR page, and every page
    starts on an aligned address of its bank, so the strips' reads and writes stay aligned (rows of 2 .. 200
    bytes are tested both ways)."""
    return not dtype.is_block_float and memory_config.memory_layout is TensorMemoryLayout.INTERLEAVED


def _block(tile_cols: int, element_bytes: int) -> int:
    """Tile columns per strip: the most DST holds at once (8 tiles of 16 bits, 4 of 32) that divide the width."""
    most = 8 if element_bytes <= 2 else 4
    return max(b for b in range(1, most + 1) if tile_cols % b == 0)


def _split(t: Tensor, tilize: bool, tile_rows: int, tile_cols: int):
    """The cores' rectangles of the tile grid, as ttnn's factory for this conversion splits them."""
    grid = t.device().compute_with_storage_grid_size()
    sizes = dict(
        tile_bytes=TILE_SIZE * TILE_SIZE * t.dtype.element_bytes,
        cores=grid.x * grid.y,
        l1_bytes=t.device().device_limits().l1_bytes_per_core,
    )
    if tilize:
        return tilize_split(tile_rows, tile_cols, **sizes)
    rows, width = matrix_view(t.shape)[1:]
    return untilize_split(
        tile_rows,
        tile_cols,
        codegen_dtype=t.dtype is bfloat16,  # bfloat8_b, the other, is converted on the host
        tile_aligned=rows % TILE_SIZE == 0 and width % TILE_SIZE == 0,
        **sizes,
    )


def to_layout_on_device(t: Tensor, output: Tensor) -> Tensor:
    """output (allocated: t's shape and dtype in the other layout) <- t's values."""
    tilize = t.layout is Layout.ROW_MAJOR
    row_major, tiled = (t, output) if tilize else (output, t)
    batch, rows, width = matrix_view(t.shape)
    tile_rows, tile_cols = math.ceil(rows / TILE_SIZE), math.ceil(width / TILE_SIZE)
    element_bytes = t.dtype.element_bytes
    rm, tl = row_major.to_arg(), tiled.to_arg()
    rects = _split(t, tilize, batch * tile_rows, tile_cols)
    coords = kp.worker_cores(t.device().compute_with_storage_grid_size(), len(rects))
    cores = kp.cores_of(coords)

    strip_args, page_args, compute_args = [], [], []
    cores_by_block: dict[int, list[tuple[int, int]]] = {}
    for (x, y), rect in zip(coords, rects):
        core = _program.CoreCoord(x, y)
        block = _block(rect.cols, element_bytes)
        cores_by_block.setdefault(block, []).append((x, y))
        geometry = [element_bytes, rows, width, tile_rows, *rect, block]
        strip_args.append((core, [rm.address, rm.page_size] + geometry))
        page_args.append((core, [tl.address, tl.page_size, tile_cols, *rect, block]))
        compute_args.append((core, [rect.rows * rect.cols // block, block]))

    compute_config = _program.ComputeConfigDescriptor()
    compute_config.fp32_dest_acc_en = element_bytes == 4
    strips = _program.KernelDescriptor(
        kernel_source=kp.kernel_path(_READ_STRIPS if tilize else _WRITE_STRIPS),
        core_ranges=cores,
        compile_time_args=kp.accessor_args(rm),
        named_compile_time_args=[("cb_rows", 0 if tilize else 1)],
        runtime_args=strip_args,
        config=_program.ReaderConfigDescriptor() if tilize else _program.WriterConfigDescriptor(),
    )
    tile_pages = _program.KernelDescriptor(
        kernel_source=kp.kernel_path(_WRITE_PAGES if tilize else _READ_PAGES),
        core_ranges=cores,
        compile_time_args=kp.accessor_args(tl),
        named_compile_time_args=[("cb_pages", 1 if tilize else 0)],
        runtime_args=page_args,
        config=_program.WriterConfigDescriptor() if tilize else _program.ReaderConfigDescriptor(),
    )
    convert = _program.KernelDescriptor(
        kernel_source=kp.kernel_path(_TILIZE if tilize else _UNTILIZE),
        core_ranges=cores,
        named_compile_time_args=[("cb_rows", 0), ("cb_tiles", 1)] if tilize else [("cb_tiles", 0), ("cb_rows", 1)],
        runtime_args=compute_args,
        config=compute_config,
    )
    tile_bytes = TILE_SIZE * TILE_SIZE * element_bytes
    program = _program.ProgramDescriptor(
        kernels=[strips, convert, tile_pages] if tilize else [tile_pages, convert, strips],
        # Two strips deep, per group of cores with the same strip width: a reservation never wraps.
        cbs=[
            kp.page_cb(i, 2 * block, tile_bytes, t.to_arg().dtype, kp.cores_of(group))
            for block, group in cores_by_block.items()
            for i in (0, 1)
        ],
    )
    kp.run_op("to_layout", [t], [output], program)
    return output
