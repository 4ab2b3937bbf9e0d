"""ttnn.permute(t, (1, 0, 2, 3)) / ttnn.transpose(t, 0, 1) of an interleaved 4D tensor, as tt-metal 0.81.1 builds it.

ttnn.permute sends a swap of the two outer dims of an interleaved tensor to ttnn.transpose(t, 0, 1), whose CN
factory (`transpose_cn_program_factory.cpp`, shipped in the wheel) is a Metal 2.0 program of two kernels and
no compute: the reader (`reader_unary_transpose_cn_interleaved_start_id.cpp`, RISCV_1) walks the output's pages
in order and fetches each from its input position, the writer (`writer_unary_transpose_cn_interleaved_start_id.cpp`,
RISCV_0) stores them in order. Pages are tiles (TILE) or rows (ROW_MAJOR, `CN_RM`); they are split over the grid
column by column (split_work_to_cores at its default, row_wise false). Recorded on a mock Wormhole n150 for a
(4, 8, 32, 7168) bfloat16 tile tensor: reader named args `N C HtWt batch_step channel_step num_pages start_id hw n`,
compile-time values `page_size` and `read_size` 2048, dataflow buffer `in0` 0; writer `num_pages start_id`,
`page_size` / `write_size` 2048. The dataflow buffer holds two pages.
"""

from __future__ import annotations

from ttnn_moe._C import emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu.generic_op import generic_op, last_run_counters
from ttnn_moe.emu.tensor import Tensor, allocate_tensor_on_device
from ttnn_moe.emu.ttmetal.ccl_common import align
from ttnn_moe.emu.ttmetal.profiling import record_op
from ttnn_moe.emu.ttmetal.wheel import wheel_kernel_path
from ttnn_moe.emu.ttmetal.work_split import core_range_set, split_work_to_cores
from ttnn_moe.emu.types import DRAM_MEMORY_CONFIG, ROW_MAJOR_LAYOUT, BufferType

_OP = "transpose_cn"
KERNELS = "ttnn/cpp/ttnn/operations/data_movement/transpose/device/kernels/dataflow"
READER = f"{KERNELS}/reader_unary_transpose_cn_interleaved_start_id.cpp"
WRITER = f"{KERNELS}/writer_unary_transpose_cn_interleaved_start_id.cpp"
READER_ARGS = ("N", "C", "HtWt", "batch_step", "channel_step", "num_pages", "start_id", "hw", "n")
WRITER_ARGS = ("num_pages", "start_id")
DFB_IN0 = 0
DFB_PAGES = 2


def transpose_cn_program(
    input_address: int,
    output_address: int,
    pages: tuple[int, int, int],
    page_bytes: int,
    aligned_page_bytes: int,
    data_format: pd.DataFormat,
    *,
    row_major: bool = False,
    grid: tuple[int, int] = (8, 8),
) -> pd.ProgramDescriptor:
    """Output (C, N, ...) of the interleaved DRAM input (N, C, ...) whose `pages` are (N, C, pages per (n, c))."""
    N, C, HtWt = pages
    if min(pages) < 1:
        raise ValueError(f"pages (N, C, pages per channel) must be positive, got {pages}")
    total = N * C * HtWt
    batch_step = C * HtWt - HtWt  # from the last page of (n, c) to the first of (n + 1, c)
    channel_step = total - HtWt  # from the last page of (N - 1, c) back to the first of (0, c + 1)
    split = split_work_to_cores(grid, total, row_major=False)
    cores = core_range_set([core for core, _, _ in split])
    defines = [("CN_RM", "1")] if row_major else []

    def reader_args(done: int, count: int) -> list[int]:
        channel = done // HtWt  # output pages come channel by channel: output (c, n) is input (n, c)
        start = done + channel * batch_step - (channel // N) * channel_step
        return [N, C, HtWt, batch_step, channel_step, count, start, done % HtWt, channel % N]

    def dataflow(source, names, args, values, tensor, config) -> pd.KernelDescriptor:
        return pd.KernelDescriptor(
            kernel_source=wheel_kernel_path(source),
            core_ranges=cores,
            compile_time_args=emu.tensor_accessor_args(aligned_page_bytes, True),
            defines=defines,
            runtime_args=[(core, args(start, n)) for core, n, start in split],
            common_runtime_args=[input_address if tensor == "src" else output_address],
            config=config,
            bindings=pd.KernelBindingsDescriptor(
                runtime_args=list(names),
                compile_time_values=sorted(values.items()),
                dataflow_buffers=[("in0", DFB_IN0)],
                tensors=[pd.TensorBindingDescriptor(tensor, 0, 0)],
            ),
        )

    kernels = [
        dataflow(
            READER,
            READER_ARGS,
            reader_args,
            {"page_size": aligned_page_bytes, "read_size": page_bytes},
            "src",
            pd.ReaderConfigDescriptor(),
        ),
        dataflow(
            WRITER,
            WRITER_ARGS,
            lambda start, n: [n, start],
            {"page_size": aligned_page_bytes, "write_size": page_bytes},
            "dst",
            pd.WriterConfigDescriptor(),
        ),
    ]
    fmt = pd.CBFormatDescriptor(buffer_index=DFB_IN0, data_format=data_format, page_size=page_bytes)
    cb = pd.CBDescriptor(total_size=DFB_PAGES * page_bytes, core_ranges=cores, format_descriptors=[fmt])
    return pd.ProgramDescriptor(kernels=kernels, cbs=[cb])


def dram_aligned_page_size(t: Tensor) -> int:
    """The page pitch of an interleaved DRAM tensor (Buffer::aligned_page_size)."""
    return align(t.page_size, t.device().chips[0].dram_alignment)


def transpose_cn(t: Tensor) -> Tensor:
    """ttnn.transpose(t, 0, 1) of a 4D interleaved DRAM tensor on the emulator: a new (C, N, H, W) tensor."""
    shape = list(t.shape)
    if len(shape) != 4:
        raise ValueError(f"transpose_cn takes a 4D tensor, got shape {shape}")
    if t.memory_config().buffer_type != BufferType.DRAM:
        raise ValueError(f"transpose_cn takes an interleaved DRAM tensor, got {t.memory_config()}")
    if t.dtype.is_block_float and t.layout == ROW_MAJOR_LAYOUT:
        raise ValueError(f"a {t.dtype} tensor has no ROW_MAJOR layout, got {t.dtype} {t.layout!r}")
    N, C, H, W = (int(v) for v in t.padded_shape)
    row_major = t.layout == ROW_MAJOR_LAYOUT
    pages_per_channel = H if row_major else (H // 32) * (W // 32)
    device = t.device()
    out = allocate_tensor_on_device([shape[1], shape[0], *shape[2:]], t.dtype, t.layout, device, DRAM_MEMORY_CONFIG)
    grid = device.compute_with_storage_grid_size()
    program = transpose_cn_program(
        t.buffer_address(),
        out.buffer_address(),
        (N, C, pages_per_channel),
        t.page_size,
        dram_aligned_page_size(t),
        t.dtype.data_format,
        row_major=row_major,
        grid=(grid.x, grid.y),
    )
    generic_op([t, out], program)
    record_op(_OP, [t], [out], program, last_run_counters())
    return out
