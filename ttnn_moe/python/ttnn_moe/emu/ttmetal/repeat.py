"""ttnn.repeat of a ROW_MAJOR interleaved tensor along dims above the last, as tt-metal 0.81.1 builds it.

In 0.81.1 ttnn.repeat routes a row-major interleaved tensor to its code-generated path (`repeat_via_codegen`,
repeat.cpp; the factory `repeat/codegen/repeat_codegen_program_factory.cpp` ships in the wheel): the tensor is
viewed as 4D and each repeated dim is one program ("leg"), innermost first, a dim of size 1 repeated next to a
repeated dim folding its repeats into that one. A leg along a dim above the last copies whole rows (sticks):
the reader `repeat/codegen/kernels/reader_repeat_higherdim_rm.cpp` maps each output row to its source row
(`seq_repeat_next`) and reads batches of rows into CB 0, the writer `common/kernels/codegen/writer_interleaved.cpp`
stores them in order. Output rows are split over the grid column by column (split_work_to_cores, row_wise false).
CB 0 holds two batches of four slots, a slot being the larger of the input's and output's DRAM-aligned rows.
Recorded on a mock Wormhole n150: `ttnn.repeat((1, 1, 32, 8) bfloat16 ROW_MAJOR, (7168, 1, 1, 1))` compiles the
reader with args 32, 32, 0, 7168, 32, 1, 4 and the input's accessor (2, 32), the writer with 0, 32, 4 and the
output's; `ttnn.repeat((1, 4, 1, 256), (1, 32, 1, 1))` the reader with 512, 512, 0, 32, 1, 4, 4.

Not described here: a repeat of the last dim (its own reader), TILE tensors (their tile-sequenced path), and
sharded tensors.
"""

from __future__ import annotations

import math

from ttnn_moe._C import emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu.conversions import reshape
from ttnn_moe.emu.generic_op import generic_op, last_run_counters
from ttnn_moe.emu.tensor import Tensor, allocate_tensor_on_device
from ttnn_moe.emu.ttmetal.ccl_common import align
from ttnn_moe.emu.ttmetal.profiling import record_op
from ttnn_moe.emu.ttmetal.wheel import wheel_kernel_path
from ttnn_moe.emu.ttmetal.work_split import core_range_set, split_work_to_cores
from ttnn_moe.emu.types import DRAM_MEMORY_CONFIG, ROW_MAJOR_LAYOUT, BufferType

_OP = "repeat"
READER = "ttnn/cpp/ttnn/operations/data_movement/repeat/codegen/kernels/reader_repeat_higherdim_rm.cpp"
WRITER = "ttnn/cpp/ttnn/operations/data_movement/common/kernels/codegen/writer_interleaved.cpp"
CB_ROWS = 0
BATCH = 4  # kRepeatBatch: rows per reader/writer hand-over; the CB holds two batches


def repeat_rows_program(
    input_address: int,
    output_address: int,
    shape: tuple[int, int, int, int],
    dim: int,
    repeats: int,
    row_bytes: int,
    dram_alignment: int,
    data_format: pd.DataFormat,
    grid: tuple[int, int] = (8, 8),
) -> pd.ProgramDescriptor:
    """One leg: the ROW_MAJOR DRAM tensor of 4D `shape` repeated `repeats` times along `dim` (< 3)."""
    if not 0 <= dim < 3:
        raise ValueError(f"a row repeat leg repeats dim 0, 1 or 2 of a 4D tensor, got dim {dim}")
    if repeats < 1:
        raise ValueError(f"repeats must be positive, got {repeats}")
    rows_per_dim = (*shape[:3], 1)
    lower_rows = math.prod(rows_per_dim[dim + 1 :])  # rows below the repeated dim
    output_rows = math.prod(shape[:3]) * repeats
    slot = align(row_bytes, dram_alignment)  # input and output rows align alike in DRAM
    split = split_work_to_cores(grid, output_rows, row_major=False)
    cores = core_range_set([core for core, _, _ in split])
    accessor = emu.tensor_accessor_args(slot, True)
    kernels = [
        pd.KernelDescriptor(
            kernel_source=wheel_kernel_path(READER),
            core_ranges=cores,
            compile_time_args=[slot, slot, CB_ROWS, repeats, lower_rows, shape[dim], BATCH, *accessor],
            runtime_args=[(core, [input_address, n, start]) for core, n, start in split],
            config=pd.ReaderConfigDescriptor(),
        ),
        pd.KernelDescriptor(
            kernel_source=wheel_kernel_path(WRITER),
            core_ranges=cores,
            compile_time_args=[CB_ROWS, slot, BATCH, *accessor],
            runtime_args=[(core, [output_address, n, start]) for core, n, start in split],
            config=pd.WriterConfigDescriptor(),
        ),
    ]
    fmt = pd.CBFormatDescriptor(buffer_index=CB_ROWS, data_format=data_format, page_size=slot)
    cb = pd.CBDescriptor(total_size=2 * BATCH * slot, core_ranges=cores, format_descriptors=[fmt])
    return pd.ProgramDescriptor(kernels=kernels, cbs=[cb])


def leg_repeats(shape: list[int], repeats: list[int]) -> list[tuple[int, int]]:
    """[(dim, repeats)] of the legs in run order: innermost first, a repeated dim of size 1 folding its
    repeats into the next dim when that one repeats too (plan_codegen_legs)."""
    folded = list(repeats)
    for d in range(len(shape) - 2):
        if shape[d] == 1 and folded[d] > 1 and folded[d + 1] > 1:
            folded[d + 1] *= folded[d]
            folded[d] = 1
    return [(d, folded[d]) for d in reversed(range(len(shape))) if folded[d] > 1]


def repeat(t: Tensor, repetition_vector) -> Tensor:
    """ttnn.repeat(t, repetition_vector) of a ROW_MAJOR interleaved DRAM tensor of rank <= 4 on the emulator."""
    reps = [int(r) for r in repetition_vector]
    shape = [int(v) for v in t.shape]
    if t.layout != ROW_MAJOR_LAYOUT:
        raise ValueError(f"repeat takes a ROW_MAJOR tensor here (TILE has its own path), got {t.layout!r}")
    if t.memory_config().buffer_type != BufferType.DRAM:
        raise ValueError(f"repeat takes an interleaved DRAM tensor, got {t.memory_config()}")
    if any(r < 1 for r in reps):
        raise ValueError(f"repetitions must be positive, got {reps}")
    if len(shape) > 4 or len(reps) > 4:
        raise ValueError(f"repeat takes ranks up to 4 here, got shape {shape} and repetitions {reps}")
    rank = max(len(shape), len(reps))
    shape4 = [1] * (4 - len(shape)) + shape
    reps4 = [1] * (4 - len(reps)) + reps
    if reps4[3] != 1:
        raise ValueError(f"a repeat of the last dim (repetitions {reps}) has its own reader, not described here")
    device = t.device()
    grid = device.compute_with_storage_grid_size()
    alignment = device.chips[0].dram_alignment
    row_bytes = t.page_size
    working = reshape(t, shape4)
    for dim, n in leg_repeats(shape4, reps4):
        leg_shape = [v * n if i == dim else v for i, v in enumerate(working.shape)]
        out = allocate_tensor_on_device(leg_shape, t.dtype, ROW_MAJOR_LAYOUT, device, DRAM_MEMORY_CONFIG)
        program = repeat_rows_program(
            working.buffer_address(),
            out.buffer_address(),
            tuple(int(v) for v in working.shape),
            dim,
            n,
            row_bytes,
            alignment,
            t.dtype.data_format,
            (grid.x, grid.y),
        )
        generic_op([working, out], program)
        record_op(_OP, [working], [out], program, last_run_counters())
        working = out
    result_shape = [v * r for v, r in zip([1] * (rank - len(shape)) + shape, [1] * (rank - len(reps)) + reps)]
    return reshape(working, result_shape)
