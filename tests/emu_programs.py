"""Helpers that build small emulator programs for the tests."""

from pathlib import Path

from ttnn_moe._C import emu
from ttnn_moe._C import program as pd

KERNELS = Path(__file__).resolve().parent / "kernels" / "emu"
BF16 = pd.DataFormat.Float16_b


def core_set(x0, y0, x1=None, y1=None):
    x1 = x0 if x1 is None else x1
    y1 = y0 if y1 is None else y1
    return pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(x0, y0), pd.CoreCoord(x1, y1))])


def cb(index, num_pages, page_size, cores, fmt=BF16):
    return pd.CBDescriptor(
        total_size=num_pages * page_size,
        core_ranges=cores,
        format_descriptors=[pd.CBFormatDescriptor(buffer_index=index, data_format=fmt, page_size=page_size)],
    )


def kernel(name, cores, config, compile_time_args=(), named=(), runtime_args=(), defines=()):
    return pd.KernelDescriptor(
        kernel_source=str(KERNELS / name) if not str(name).startswith("/") else str(name),
        core_ranges=cores,
        compile_time_args=list(compile_time_args),
        named_compile_time_args=list(named),
        defines=list(defines),
        runtime_args=list(runtime_args),
        config=config,
    )


def copy_program(src, dst, page_size, num_pages, cores, cb_pages=2, block=1):
    """Reader/writer copy of num_pages pages split over `cores` (list of (x, y))."""
    ct = emu.tensor_accessor_args(page_size, True)
    per_core = [num_pages // len(cores) + (1 if i < num_pages % len(cores) else 0) for i in range(len(cores))]
    starts = [sum(per_core[:i]) for i in range(len(cores))]
    reader_rt = [(pd.CoreCoord(x, y), [src, s, n, block]) for (x, y), s, n in zip(cores, starts, per_core)]
    writer_rt = [(pd.CoreCoord(x, y), [dst, s, n]) for (x, y), s, n in zip(cores, starts, per_core)]
    ranges = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(x, y), pd.CoreCoord(x, y)) for x, y in cores])
    return pd.ProgramDescriptor(
        kernels=[
            kernel("reader_pages.cpp", ranges, pd.ReaderConfigDescriptor(), ct, [("cb_out", 0)], reader_rt),
            kernel("writer_pages.cpp", ranges, pd.WriterConfigDescriptor(), ct, [("cb_in", 0)], writer_rt),
        ],
        cbs=[cb(0, cb_pages, page_size, ranges)],
    )
