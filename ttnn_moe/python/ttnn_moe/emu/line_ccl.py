"""all_gather and reduce_scatter as device programs on the emulated fabric (kernels/ccl_line).

Each device of a line runs the same kernels on the same page ranges, one worker core per
fabric link; pages travel as fused write + increment packets straight to every other
member (1D routes: hops along the line; 2D: the member's chip id). reduce_scatter sums
every output page in ascending line position with an fp32 accumulator and rounds once to
the output format, so its result does not depend on delivery order or timing.

`gather_pages` / `scatter_pages` say whether a tensor's pages line up with the split (the
kernels move whole pages); the caller falls back to the host otherwise.
"""

from __future__ import annotations

import math
from typing import Optional

from ttnn_moe._C import program as _program
from ttnn_moe.emu import kernel_programs as kp
from ttnn_moe.emu.device import MeshDevice
from ttnn_moe.emu.fabric import fabric_max_payload_size
from ttnn_moe.emu.line_fabric import MAX_LINKS, MeshLine, mesh_lines
from ttnn_moe.emu.tensor import Tensor, allocate_tensor_on_device
from ttnn_moe.emu.types import TILE_SIZE, Layout

_ALL_GATHER = "ccl_line/dataflow/all_gather_line.cpp"
_REDUCE_SCATTER = "ccl_line/dataflow/reduce_scatter_line.cpp"
_SUM_IN_ORDER = "ccl_line/compute/sum_in_order.cpp"
_WRITE_PAGES = "page_copy/dataflow/write_pages.cpp"
_SEM_INIT, _SEM_PAGES = 0, 1


def _page_grid(t: Tensor) -> list[int]:
    """The tensor's pages as a row-major grid: leading dims, then tile rows and tile columns (TILE)
    or rows (ROW_MAJOR: a page is a row)."""
    shape = list(t.shape) if len(t.shape) > 1 else [1, t.shape[0]]
    if t.layout is Layout.TILE:
        return shape[:-2] + [math.ceil(shape[-2] / TILE_SIZE), math.ceil(shape[-1] / TILE_SIZE)]
    return shape[:-1]


def _page_dim(t: Tensor, dim: int, parts: int) -> Optional[int]:
    """The page-grid dim that splitting `dim` into `parts` equal pieces cuts along whole pages, or None."""
    rank = len(t.shape)
    if rank == 1 or t.page_size % t.device().chips[0].dram_alignment:
        return None
    if t.layout is Layout.ROW_MAJOR:
        return dim if dim < rank - 1 and t.shape[dim] % parts == 0 else None
    if dim >= rank - 2:
        return dim if t.shape[dim] % (parts * TILE_SIZE) == 0 else None
    return dim if t.shape[dim] % parts == 0 else None


def gather_pages(t: Tensor, dim: int) -> bool:
    return _page_dim(t, dim, 1) is not None


def scatter_pages(t: Tensor, dim: int, line_size: int) -> bool:
    return t.layout is Layout.TILE and _page_dim(t, dim, line_size) is not None


def _check_links(mesh: MeshDevice, num_links: Optional[int]) -> int:
    links = 1 if num_links is None else num_links
    if isinstance(links, bool) or not isinstance(links, int) or not 1 <= links <= MAX_LINKS:
        raise ValueError(f"num_links must be in [1, {MAX_LINKS}], got {num_links!r}")
    grid = mesh.compute_with_storage_grid_size()
    return min(links, grid.x * grid.y)


def _mesh_program(lines: list[MeshLine], build) -> _program.MeshProgramDescriptor:
    entries = []
    for index, line in enumerate(lines):
        coord = line.coord(index)
        entries.append((_program.MeshCoordinateRange(coord, coord), build(line)))
    return _program.MeshProgramDescriptor(entries)


def _line_args(line: MeshLine, program, core, link: int) -> list[int]:
    return line.route_words() + line.connection_args(program, core, link)


def _semaphores(cores) -> list:
    return [_program.SemaphoreDescriptor(id=i, core_ranges=cores, initial_value=0) for i in (_SEM_INIT, _SEM_PAGES)]


def all_gather_on_fabric(t: Tensor, output: Tensor, dim: int, cluster_axis: int, num_links: Optional[int]) -> Tensor:
    """output (allocated, dim `line size` times larger) <- the line's inputs concatenated along dim."""
    mesh = t.device()
    lines = mesh_lines(mesh, cluster_axis)
    links = _check_links(mesh, num_links)
    grid = _page_grid(t)
    block = math.prod(grid[_page_dim(t, dim, 1) :])
    src, dst = t.to_arg(), output.to_arg()
    coords = kp.worker_cores(mesh.compute_with_storage_grid_size(), links)
    cores = kp.cores_of(coords)

    def build(line: MeshLine) -> _program.ProgramDescriptor:
        program = _program.ProgramDescriptor(
            kernels=[],
            cbs=[kp.scratch_cb(0, src.page_size, cores), kp.scratch_cb(1, kp.HEADER_BYTES, cores)],
            semaphores=_semaphores(cores),
        )
        runtime_args = []
        for link, ((x, y), (first, count)) in enumerate(zip(coords, kp.split(src.num_pages, links))):
            core = _program.CoreCoord(x, y)
            head = [src.address, dst.address, src.page_size, first, count, block, line.size, line.position]
            args = head + [int(fabric_max_payload_size)] + _line_args(line, program, core, link)
            runtime_args.append((core, args))
        program.kernels = [
            _program.KernelDescriptor(
                kernel_source=kp.kernel_path(_ALL_GATHER),
                core_ranges=cores,
                compile_time_args=kp.accessor_args(src, dst),
                named_compile_time_args=[
                    ("cb_page", 0),
                    ("cb_headers", 1),
                    ("sem_init", _SEM_INIT),
                    ("sem_pages", _SEM_PAGES),
                ],
                runtime_args=runtime_args,
                config=_program.WriterConfigDescriptor(),
            )
        ]
        return program

    kp.run_op("all_gather", [t], [output], _mesh_program(lines, build))
    return output


def reduce_scatter_on_fabric(
    t: Tensor, output: Tensor, dim: int, cluster_axis: int, num_links: Optional[int]
) -> Tensor:
    """output (allocated, dim `line size` times smaller) <- chunk `position` of the line's sum."""
    mesh = t.device()
    lines = mesh_lines(mesh, cluster_axis)
    links = _check_links(mesh, num_links)
    size = lines[0].size
    grid = _page_grid(t)
    chunk = math.prod(grid[_page_dim(t, dim, size) :]) // size
    src, dst = t.to_arg(), output.to_arg()
    out_pages = dst.num_pages
    staging = allocate_tensor_on_device([size * out_pages * TILE_SIZE, TILE_SIZE], t.dtype, Layout.TILE, mesh)
    stage = staging.to_arg()
    coords = kp.worker_cores(mesh.compute_with_storage_grid_size(), links)
    cores = kp.cores_of(coords)
    ranges = kp.split(out_pages, links)
    acc_bytes = TILE_SIZE * TILE_SIZE * 4

    def build(line: MeshLine) -> _program.ProgramDescriptor:
        program = _program.ProgramDescriptor(
            kernels=[],
            cbs=[
                kp.page_cb(0, 2, src.page_size, src.dtype, cores),
                kp.scratch_cb(1, src.page_size, cores),
                kp.scratch_cb(2, kp.HEADER_BYTES, cores),
                kp.page_cb(3, 2, acc_bytes, _program.DataFormat.Float32, cores),
                kp.page_cb(4, 2, dst.page_size, dst.dtype, cores),
            ],
            semaphores=_semaphores(cores),
        )
        reader_args, compute_args, writer_args = [], [], []
        for link, ((x, y), (first, count)) in enumerate(zip(coords, ranges)):
            core = _program.CoreCoord(x, y)
            head = [src.address, stage.address, src.page_size, first, count, chunk, out_pages, line.size]
            args = head + [line.position, int(fabric_max_payload_size)] + _line_args(line, program, core, link)
            reader_args.append((core, args))
            compute_args.append((core, [count, line.size]))
            writer_args.append((core, [dst.address, dst.page_size, first, count]))
        compute_config = _program.ComputeConfigDescriptor()
        compute_config.math_fidelity = _program.MathFidelity.HiFi4
        compute_config.fp32_dest_acc_en = True
        program.kernels = [
            _program.KernelDescriptor(
                kernel_source=kp.kernel_path(_REDUCE_SCATTER),
                core_ranges=cores,
                compile_time_args=kp.accessor_args(src, stage),
                named_compile_time_args=[
                    ("cb_in", 0),
                    ("cb_page", 1),
                    ("cb_headers", 2),
                    ("sem_init", _SEM_INIT),
                    ("sem_pages", _SEM_PAGES),
                ],
                runtime_args=reader_args,
                config=_program.ReaderConfigDescriptor(),
            ),
            _program.KernelDescriptor(
                kernel_source=kp.kernel_path(_SUM_IN_ORDER),
                core_ranges=cores,
                named_compile_time_args=[("cb_in", 0), ("cb_acc", 3), ("cb_out", 4)],
                runtime_args=compute_args,
                config=compute_config,
            ),
            _program.KernelDescriptor(
                kernel_source=kp.kernel_path(_WRITE_PAGES),
                core_ranges=cores,
                compile_time_args=kp.accessor_args(dst),
                named_compile_time_args=[("cb_pages", 4)],
                runtime_args=writer_args,
                config=_program.WriterConfigDescriptor(),
            ),
        ]
        return program

    kp.run_op("reduce_scatter", [t, staging], [output], _mesh_program(lines, build))
    staging.deallocate()
    return output
