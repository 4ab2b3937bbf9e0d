"""Helpers that build small emulator programs for the tests."""

from pathlib import Path

import numpy as np
import torch
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd

KERNELS = Path(__file__).resolve().parent / "kernels" / "emu"
BF16 = pd.DataFormat.Float16_b
TILE_BYTES = 2048  # bf16 32x32 tile


def tilize(m: torch.Tensor, dtype: torch.dtype = torch.bfloat16) -> np.ndarray:
    """(R, C) -> the bytes of its tile pages (row-major over tiles), each four 16x16 faces TL, TR, BL, BR."""
    r, c = m.shape
    t = m.to(dtype).reshape(r // 32, 2, 16, c // 32, 2, 16)  # [tr, fr, row, tc, fc, col]
    t = t.permute(0, 3, 1, 4, 2, 5).contiguous()  # [tr, tc, fr, fc, row, col]
    return t.view(torch.uint8).numpy().reshape(-1)


def untilize(pages: np.ndarray, r: int, c: int, dtype: torch.dtype = torch.bfloat16) -> torch.Tensor:
    """The bytes of an (r, c) matrix's tile pages -> (r, c) float32 (exact for bf16 and fp32)."""
    t = torch.from_numpy(pages.copy()).view(dtype)
    t = t.reshape(r // 32, c // 32, 2, 2, 16, 16).permute(0, 2, 4, 1, 3, 5)
    return t.reshape(r, c).float()


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


def matmul_program(a, b, c, Mt, Kt, Nt, cores, b_format=BF16):
    """C (Mt x Nt tiles, bf16) = A @ B, output tiles split over `cores`; B's pages in `b_format`."""
    ct = emu.tensor_accessor_args(TILE_BYTES, True)
    b_tile = pd.tile_size_bytes(b_format)
    n_out = Mt * Nt
    per = [n_out // len(cores) + (1 if i < n_out % len(cores) else 0) for i in range(len(cores))]
    starts = [sum(per[:i]) for i in range(len(cores))]
    ranges = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(x, y), pd.CoreCoord(x, y)) for x, y in cores])
    coord = [pd.CoreCoord(x, y) for x, y in cores]
    named = [("cb_a", 0), ("cb_b", 1), ("cb_out", 16)]
    return pd.ProgramDescriptor(
        kernels=[
            kernel(
                "reader_matmul.cpp",
                ranges,
                pd.ReaderConfigDescriptor(),
                ct + emu.tensor_accessor_args(b_tile, True),
                named,
                [(p, [a, b, Kt, Nt, s, n]) for p, s, n in zip(coord, starts, per)],
            ),
            kernel(
                "compute_matmul.cpp",
                ranges,
                pd.ComputeConfigDescriptor(fp32_dest_acc_en=True),
                (),
                named,
                [(p, [Kt, n]) for p, n in zip(coord, per)],
            ),
            kernel(
                "writer_pages.cpp",
                ranges,
                pd.WriterConfigDescriptor(),
                ct,
                [("cb_in", 16)],
                [(p, [c, s, n]) for p, s, n in zip(coord, starts, per)],
            ),
        ],
        cbs=[cb(0, 2, TILE_BYTES, ranges), cb(1, 2, b_tile, ranges, fmt=b_format), cb(16, 2, TILE_BYTES, ranges)],
    )
