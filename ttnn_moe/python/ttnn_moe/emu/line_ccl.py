"""all_gather and reduce_scatter as device programs on the emulated fabric (kernels/ccl_line),
with the work split and data flow of ttnn 0.81.1's line algorithms (docs/emulated_collectives.md).

all_gather: one worker core per fabric link, each on its share of the input pages; a page goes
to every other member as one multicast per side of the line (2D: a unicast per member).
reduce_scatter: per link and direction a mux core (not run) and several workers; partials pass
neighbour to neighbour, each member adding its share in fp32 DST and rounding once to the input
format, in an order the line fixes, so the result does not depend on delivery order or timing.

`gather_pages` / `scatter_pages` say whether a tensor's pages line up with the split (the
kernels move whole pages; all_gather also DRAM-aligned ROW_MAJOR rows into segments of the
output rows, as ttnn's does along the last dim); the caller falls back to the host otherwise.
"""

from __future__ import annotations

import math
from typing import Optional

from ttnn_moe._C import emu as _emu
from ttnn_moe._C import program as _program
from ttnn_moe.emu import kernel_programs as kp
from ttnn_moe.emu.device import MeshDevice
from ttnn_moe.emu.fabric import fabric_max_payload_size, setup_fabric_mux_connection
from ttnn_moe.emu.line_fabric import MAX_LINKS, MeshLine, mesh_lines
from ttnn_moe.emu.tensor import Tensor, allocate_tensor_on_device
from ttnn_moe.emu.types import DRAM_MEMORY_CONFIG, TILE_SIZE, Layout

_ALL_GATHER = "ccl_line/dataflow/all_gather_line.cpp"
_RS_READER = "ccl_line/dataflow/reduce_scatter_line_reader.cpp"
_RS_ADD = "ccl_line/compute/add_partials.cpp"
_RS_WRITER = "ccl_line/dataflow/reduce_scatter_line_writer.cpp"
_SEM_INIT, _SEM_PAGES = 0, 1
_SEM_BARRIER, _SEM_ARRIVED, _SEM_FORWARD_DONE = 0, 1, 2
_CB_OWN, _CB_PARTIAL, _CB_SUM, _CB_HEADERS = 0, 1, 2, 3
# all_gather: one worker core per fabric link (both directions).
_AG_CORES_PER_LINK = 1
_RS_FORWARD = 0  # reduce_scatter_line.hpp: direction 0 sends to higher positions
_RS_MIN_CORES_PER_LINK = 4  # per direction a mux core and one worker
# ttnn's line reduce_scatter: one buffer per mux channel (num_buffers_per_channel's default).
_RS_MUX_BUFFERS = 1
# reduce_scatter pages per CB chunk and chunks per CB: ttnn's line reduce_scatter moves
# min(4 x pages per 4352-B packet, 8) tiles at a time (8 for bf16) in triple-buffered CBs.
_RS_GRANULARITY, _RS_CB_CHUNKS = 8, 3


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


def _row_segments(t: Tensor, dim: int) -> bool:
    """A ROW_MAJOR gather along its rows: each input row becomes a DRAM-aligned segment of an output row."""
    rank = len(t.shape)
    return (
        t.layout is Layout.ROW_MAJOR
        and rank > 1
        and dim == rank - 1
        and t.page_size % t.device().chips[0].dram_alignment == 0
    )


def gather_pages(t: Tensor, dim: int) -> bool:
    return _page_dim(t, dim, 1) is not None or _row_segments(t, dim)


def scatter_pages(t: Tensor, dim: int, line_size: int) -> bool:
    return t.layout is Layout.TILE and _page_dim(t, dim, line_size) is not None


def _check_links(mesh: MeshDevice, num_links: Optional[int], cores_per_link: int) -> int:
    """num_links, or by default ttnn's: every link between line neighbours (the fabric's routing
    planes), as many as the worker grid has cores for."""
    grid = mesh.compute_with_storage_grid_size()
    fitting = grid.x * grid.y // cores_per_link
    if fitting == 0:
        raise ValueError(f"a fabric link needs {cores_per_link} cores here, the grid has {grid.x * grid.y}")
    if num_links is None:
        return min(int(mesh.chip_mesh.fabric_num_links), fitting)
    if isinstance(num_links, bool) or not isinstance(num_links, int) or not 1 <= num_links <= MAX_LINKS:
        raise ValueError(f"num_links must be in [1, {MAX_LINKS}], got {num_links!r}")
    if num_links > fitting:
        raise ValueError(
            f"num_links {num_links} needs {num_links * cores_per_link} cores, the grid has {grid.x * grid.y}"
        )
    return num_links


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
    links = _check_links(mesh, num_links, _AG_CORES_PER_LINK)
    grid = _page_grid(t)
    block = 1 if _row_segments(t, dim) else math.prod(grid[_page_dim(t, dim, 1) :])
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
            head = [
                *(src.address, dst.address, src.page_size, dst.page_size),
                *(first, count, block, line.size, line.position),
            ]
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


def _reduce_scatter_layout(mesh: MeshDevice, num_links: Optional[int]) -> tuple[int, int]:
    """(links, workers per direction per link) as ttnn's line reduce_scatter picks them: every link
    by default, then the most workers of 8, 4, 2, 1 for which the links' cores (per link and
    direction a mux core and the workers) fit the grid. One departure: all devices of a mesh
    program must run at once, and the emulator holds at most `l1_slots_free` worker cores over the
    mesh (the slots other open devices' runs do not hold), so a large mesh (QUAD: 128 devices) takes
    fewer workers per direction."""
    grid = mesh.compute_with_storage_grid_size()
    cores = grid.x * grid.y
    links = _check_links(mesh, num_links, _RS_MIN_CORES_PER_LINK)
    slots = int(_emu.runtime_state()["l1_slots_free"])
    fitting = [w for w in (8, 4, 2, 1) if links * 2 * (1 + w) <= cores]
    for workers in fitting:
        if workers == 1 or mesh.get_num_devices() * links * 2 * workers <= slots:
            return links, workers
    raise AssertionError("_check_links keeps one worker per direction within the grid")


def reduce_scatter_on_fabric(
    t: Tensor, output: Tensor, dim: int, cluster_axis: int, num_links: Optional[int]
) -> Tensor:
    """output (allocated, dim `line size` times smaller) <- chunk `position` of the line's sum.

    ttnn's line reduce_scatter (reduce_scatter_line.hpp): per link and direction a mux core (not run
    by the emulator: its clients share the link's connection) and `workers` worker cores; partials
    pass neighbour to neighbour, each member adding its share on the way."""
    mesh = t.device()
    lines = mesh_lines(mesh, cluster_axis)
    links, workers = _reduce_scatter_layout(mesh, num_links)
    size = lines[0].size
    grid = _page_grid(t)
    chunk = math.prod(grid[_page_dim(t, dim, size) :]) // size
    src, dst = t.to_arg(), output.to_arg()
    out_pages = dst.num_pages
    # One input-sized half per direction: the partials the previous member sends.
    staging = allocate_tensor_on_device(
        [2 * size * out_pages * TILE_SIZE, TILE_SIZE], t.dtype, Layout.TILE, mesh, DRAM_MEMORY_CONFIG
    )
    stage = staging.to_arg()
    chip = mesh.get_devices()[0]
    # Per link: [mux, workers] of one direction, then of the other, as ttnn lays them out.
    per_direction = 1 + workers
    coords = kp.worker_cores(mesh.compute_with_storage_grid_size(), links * 2 * per_direction)

    def worker_core(link: int, direction: int, worker: int) -> tuple[int, int]:
        return coords[(2 * link + direction) * per_direction + 1 + worker]

    def mux_core(link: int, direction: int) -> _program.CoreCoord:
        return chip.worker_core_from_logical_core(_program.CoreCoord(*coords[(2 * link + direction) * per_direction]))

    slots = [(link, direction, worker) for link in range(links) for direction in (0, 1) for worker in range(workers)]
    cores = kp.cores_of([worker_core(*slot) for slot in slots])
    ranges = kp.split(out_pages, links * workers)
    channel_bytes = int(fabric_max_payload_size) + kp.HEADER_BYTES

    def build(line: MeshLine) -> _program.ProgramDescriptor:
        program = _program.ProgramDescriptor(
            kernels=[],
            cbs=[
                kp.page_cb(_CB_OWN, _RS_CB_CHUNKS * _RS_GRANULARITY, src.page_size, src.dtype, cores),
                kp.page_cb(_CB_PARTIAL, _RS_CB_CHUNKS * _RS_GRANULARITY, src.page_size, src.dtype, cores),
                kp.page_cb(_CB_SUM, _RS_CB_CHUNKS * _RS_GRANULARITY, src.page_size, src.dtype, cores),
                kp.scratch_cb(_CB_HEADERS, kp.HEADER_BYTES, cores),
            ],
            semaphores=[
                _program.SemaphoreDescriptor(id=i, core_ranges=cores, initial_value=0)
                for i in (_SEM_BARRIER, _SEM_ARRIVED, _SEM_FORWARD_DONE)
            ],
        )
        reader_args, compute_args, writer_args = [], [], []
        for link, direction, worker in slots:
            first, count = ranges[link * workers + worker]
            core = _program.CoreCoord(*worker_core(link, direction, worker))
            opposite = chip.worker_core_from_logical_core(_program.CoreCoord(*worker_core(link, 1 - direction, worker)))
            head = [src.address, stage.address, dst.address, src.page_size, first, count, chunk, out_pages]
            head += [size, line.position, direction, opposite.x, opposite.y, int(fabric_max_payload_size)]
            next_member = line.position + (1 if direction == _RS_FORWARD else -1)
            writer = head + [line.node_word(next_member % size)]
            if 0 <= next_member < size:
                writer += setup_fabric_mux_connection(
                    line.fabric_node(line.position), line.fabric_node(next_member), link, program, core,
                    mux_core=mux_core(link, direction), channel_id=worker, num_buffers=_RS_MUX_BUFFERS,
                    channel_buffer_size_bytes=channel_bytes,
                )  # fmt: skip
            reader_args.append((core, head))
            writer_args.append((core, writer))
            compute_args.append((core, [_received_slices(line, direction), count]))
        compute_config = _program.ComputeConfigDescriptor()
        compute_config.math_fidelity = _program.MathFidelity.HiFi4
        compute_config.fp32_dest_acc_en = True
        program.kernels = [
            _program.KernelDescriptor(
                kernel_source=kp.kernel_path(_RS_READER),
                core_ranges=cores,
                compile_time_args=kp.accessor_args(src, stage, dst),
                named_compile_time_args=[
                    ("cb_own", _CB_OWN),
                    ("cb_partial", _CB_PARTIAL),
                    ("cb_sum", _CB_SUM),
                    ("sem_arrived", _SEM_ARRIVED),
                    ("sem_forward_done", _SEM_FORWARD_DONE),
                    ("granularity", _RS_GRANULARITY),
                ],
                runtime_args=reader_args,
                config=_program.ReaderConfigDescriptor(),
            ),
            _program.KernelDescriptor(
                kernel_source=kp.kernel_path(_RS_ADD),
                core_ranges=cores,
                named_compile_time_args=[
                    ("cb_own", _CB_OWN),
                    ("cb_partial", _CB_PARTIAL),
                    ("cb_sum", _CB_SUM),
                    ("granularity", _RS_GRANULARITY),
                ],
                runtime_args=compute_args,
                config=compute_config,
            ),
            _program.KernelDescriptor(
                kernel_source=kp.kernel_path(_RS_WRITER),
                core_ranges=cores,
                compile_time_args=kp.accessor_args(stage, dst),
                named_compile_time_args=[
                    ("cb_sum", _CB_SUM),
                    ("cb_headers", _CB_HEADERS),
                    ("sem_barrier", _SEM_BARRIER),
                    ("sem_arrived", _SEM_ARRIVED),
                    ("sem_forward_done", _SEM_FORWARD_DONE),
                    ("granularity", _RS_GRANULARITY),
                ],
                runtime_args=writer_args,
                config=_program.WriterConfigDescriptor(),
            ),
        ]
        return program

    kp.run_op("reduce_scatter", [t, staging], [output], _mesh_program(lines, build))
    staging.deallocate()
    return output


def _received_slices(line: MeshLine, direction: int) -> int:
    """Partials the worker of `direction` receives: none at the member that starts the direction,
    else the slices it passes on and its own (reduce_scatter_line.hpp)."""
    first = line.position == 0 if direction == 0 else line.position == line.size - 1
    ahead = line.size - 1 - line.position if direction == 0 else line.position
    return 0 if first else ahead + 1
