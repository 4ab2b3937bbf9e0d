"""Building blocks of the program descriptions of the front end's own device ops
(line_ccl.py, layout_programs.py): kernel paths, core sets, CBs, tensor accessor args, and
running one as a named op (recorded by an active ttnn_moe.profile)."""

from __future__ import annotations

from ttnn_moe import paths
from ttnn_moe._C import emu as _emu
from ttnn_moe._C import program as _program
from ttnn_moe.emu.generic_op import generic_op, last_run_counters
from ttnn_moe.profiler.session import active_profile

# Kernel folders of the front end's own programs: they run only on the emulator (on hardware the
# real ttnn ops run), so the real-ttnn matrix has no cases for them.
EMULATOR_KERNEL_DIRS = ("ccl_line", "layout_convert", "page_copy")
SCRATCH_PAGE_BYTES = 32  # kernels/common/dataflow/scratch.hpp: scratch CBs have 32-byte pages
HEADER_BYTES = 128  # room for either fabric packet header (64 B in 1D, 96 B in 2D)


def kernel_path(relative: str) -> str:
    return str(paths.kernels_dir() / relative)


def cores_of(coords) -> _program.CoreRangeSet:
    return _program.CoreRangeSet(
        [_program.CoreRange(_program.CoreCoord(x, y), _program.CoreCoord(x, y)) for x, y in coords]
    )


def worker_cores(grid: _program.CoreCoord, count: int) -> list[tuple[int, int]]:
    """The first `count` cores of the worker grid, row by row."""
    return [(i % grid.x, i // grid.x) for i in range(count)]


def page_cb(index: int, pages: int, page_bytes: int, data_format, cores) -> _program.CBDescriptor:
    return _program.CBDescriptor(
        total_size=pages * page_bytes,
        core_ranges=cores,
        format_descriptors=[
            _program.CBFormatDescriptor(buffer_index=index, data_format=data_format, page_size=page_bytes)
        ],
    )


def scratch_cb(index: int, n_bytes: int, cores) -> _program.CBDescriptor:
    pages = -(-n_bytes // SCRATCH_PAGE_BYTES)
    return page_cb(index, pages, SCRATCH_PAGE_BYTES, _program.DataFormat.UInt32, cores)


def accessor_args(*tensor_args) -> list[int]:
    """Interleaved (DRAM or L1) accessor args of each tensor, in order."""
    out = []
    for arg in tensor_args:
        out += list(_emu.tensor_accessor_args(arg.page_size, bool(arg.is_dram)))
    return out


def split(total: int, parts: int) -> list[tuple[int, int]]:
    """(start, count) of `parts` near-equal consecutive ranges of `total` items."""
    base, extra = divmod(total, parts)
    ranges, start = [], 0
    for i in range(parts):
        count = base + (1 if i < extra else 0)
        ranges.append((start, count))
        start += count
    return ranges


_seen_programs: set = set()


def run_op(op: str, inputs: list, outputs: list, program) -> None:
    """Runs `program` on the tensors (generic_op) and, inside a `ttnn_moe.profile`, records it as op
    `op` (a program cache hit when the same op ran before on the same shapes, as ttnn's cache keys)."""
    session = active_profile()
    key = (op, tuple((tuple(t.shape), t.dtype.name, t.layout.name) for t in [*inputs, *outputs]))
    cache_hit = key in _seen_programs
    _seen_programs.add(key)
    generic_op([*inputs, *outputs], program)
    if session is not None:
        args = lambda tensors: [t.to_arg() for t in tensors]  # noqa: E731
        session.record(op, args(inputs), args(outputs), _as_mesh_program(program), cache_hit, last_run_counters())


def _as_mesh_program(program):
    if isinstance(program, _program.MeshProgramDescriptor):
        return program
    origin = _program.MeshCoordinate(0, 0)
    return _program.MeshProgramDescriptor([(_program.MeshCoordinateRange(origin, origin), program)])
