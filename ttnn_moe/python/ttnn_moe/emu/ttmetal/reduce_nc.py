"""ttnn.sum(t, dim) over a dim above the tile dims of a bfloat16 tile tensor, as tt-metal 0.81.1 builds it.

ttnn.sum of a bfloat16 (or bfloat8_b) tensor with the scalar 1 over non-H/W dims goes to
`ttnn.experimental.reduction.fast_reduce_nc` (generic_reductions.cpp: `call_fast_nc`), compute config HiFi3 with
fp32 DST accumulation on Wormhole; the output keeps the reduced dim as 1 and the op reshapes it away without
keepdim. Recorded on a mock Wormhole n150 for `ttnn.sum((8, 1, 32, 7168) bfloat16 TILE, dim=0, keepdim=True)`:
one Metal 2.0 program, the reader `fast_reduce_nc/.../reader_reduce_nc.cpp` (RISCV_1; compile-time values
`input_granularity` 8, `num_cores_to_be_used` 64, `shard_factor` 1; named runtime args `num_input_tiles
id_range_length start_id dim reduce_tile_size inner_tile_size`; dataflow buffers `in0` 0, `in1` 1), the writer
`writer_reduce_nc.cpp` (RISCV_0; `full_width` 224, `left_width` 0 (no split output), `num_cores_to_be_used`,
`shard_factor`; `id_range_length start_id`; `out0` 2) and the compute kernel `reduce_nc.cpp` on each core group
(`num_output_tiles` 4 and 3, `num_input_tiles` 8, `input_granularity` 8; define `FP32_DEST_ACC_EN`; HiFi3),
every dataflow buffer bfloat16.

The factory (fast_reduce_nc_program_factory.cpp): output tiles are dealt to the grid's cores row by row
(split_work_to_cores), core i taking tiles i, i + cores, i + 2 * cores, ...; the reader streams the reduced
dim's tiles of each output tile into `in0` in groups of `input_granularity` (the largest divisor of the
reduced dim up to 8), and puts one zero tile into `in1`; the compute kernel adds every input tile to the zero
tile in DST (add_tiles accumulates into DST) and packs one output tile. `in0` holds two groups, `in1` one
tile, `out0` two.
"""

from __future__ import annotations

import math

from ttnn_moe._C import emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu.conversions import reshape
from ttnn_moe.emu.generic_op import generic_op, last_run_counters
from ttnn_moe.emu.tensor import Tensor, allocate_tensor_on_device
from ttnn_moe.emu.ttmetal.profiling import record_op
from ttnn_moe.emu.ttmetal.wheel import use_kernel_library_includes, wheel_kernel_path
from ttnn_moe.emu.ttmetal.work_split import core_range_set, split_work_to_cores
from ttnn_moe.emu.types import DRAM_MEMORY_CONFIG, TILE_LAYOUT, BufferType, bfloat16

_OP = "fast_reduce_nc"
KERNELS = "ttnn/cpp/ttnn/operations/experimental/reduction/fast_reduce_nc/device/kernels"
READER = f"{KERNELS}/reader_reduce_nc.cpp"
WRITER = f"{KERNELS}/writer_reduce_nc.cpp"
COMPUTE = f"{KERNELS}/reduce_nc.cpp"
READER_ARGS = ("num_input_tiles", "id_range_length", "start_id", "dim", "reduce_tile_size", "inner_tile_size")
WRITER_ARGS = ("id_range_length", "start_id")
DFB_IN, DFB_ZERO, DFB_OUT = 0, 1, 2
TILE = 32


def input_granularity(reduced: int) -> int:
    """The largest divisor of the reduced dim's size that is at most 8."""
    return next(g for g in range(8, 0, -1) if reduced % g == 0)


def reduce_nc_program(
    input_address: int,
    output_address: int,
    padded_shape: tuple[int, ...],
    dim: int,
    data_format: pd.DataFormat,
    grid: tuple[int, int] = (8, 8),
) -> pd.ProgramDescriptor:
    """Sums the interleaved DRAM tile tensor of `padded_shape` over `dim` (< rank - 2) into the output tensor."""
    rank = len(padded_shape)
    if not 0 <= dim < rank - 2:
        raise ValueError(f"fast_reduce_nc reduces a dim above the tile dims (0 <= dim < {rank - 2}), got {dim}")
    tiles_per_plane = (padded_shape[-2] // TILE) * (padded_shape[-1] // TILE)
    inner = math.prod(padded_shape[dim + 1 : rank - 2]) * tiles_per_plane  # tiles below dim
    reduced = padded_shape[dim]
    output_tiles = math.prod(padded_shape[: rank - 2]) // reduced * tiles_per_plane
    granularity = input_granularity(reduced)
    split = split_work_to_cores(grid, output_tiles, row_major=True)
    cores_used = len(split)
    cores = core_range_set([core for core, _, _ in split])
    tile_bytes = pd.tile_size_bytes(data_format)
    shared = {"num_cores_to_be_used": cores_used, "shard_factor": 1}

    reader = pd.KernelDescriptor(
        kernel_source=wheel_kernel_path(READER),
        core_ranges=cores,
        compile_time_args=emu.tensor_accessor_args(tile_bytes, True),
        runtime_args=[
            (core, [reduced, n * cores_used, i, dim, reduced * inner, inner]) for i, (core, n, _) in enumerate(split)
        ],
        common_runtime_args=[input_address],
        config=pd.ReaderConfigDescriptor(),
        bindings=pd.KernelBindingsDescriptor(
            runtime_args=list(READER_ARGS),
            compile_time_values=sorted({**shared, "input_granularity": granularity}.items()),
            dataflow_buffers=[("in0", DFB_IN), ("in1", DFB_ZERO)],
            tensors=[pd.TensorBindingDescriptor("src", 0, 0)],
        ),
    )
    writer = pd.KernelDescriptor(
        kernel_source=wheel_kernel_path(WRITER),
        core_ranges=cores,
        compile_time_args=emu.tensor_accessor_args(tile_bytes, True),
        runtime_args=[(core, [n * cores_used, i]) for i, (core, n, _) in enumerate(split)],
        common_runtime_args=[output_address],
        config=pd.WriterConfigDescriptor(),
        bindings=pd.KernelBindingsDescriptor(
            runtime_args=list(WRITER_ARGS),
            compile_time_values=sorted({**shared, "full_width": padded_shape[-1] // TILE, "left_width": 0}.items()),
            dataflow_buffers=[("out0", DFB_OUT)],
            tensors=[pd.TensorBindingDescriptor("dst", 0, 0)],
        ),
    )
    # One compute kernel per core group: the tile count is a compile-time value.
    groups: dict[int, list[pd.CoreCoord]] = {}
    for core, n, _ in split:
        groups.setdefault(n, []).append(core)
    computes = [
        pd.KernelDescriptor(
            kernel_source=wheel_kernel_path(COMPUTE),
            core_ranges=core_range_set(group),
            defines=[("FP32_DEST_ACC_EN", "1")],
            config=pd.ComputeConfigDescriptor(
                math_fidelity=pd.MathFidelity.HiFi3, fp32_dest_acc_en=True, math_approx_mode=False
            ),
            bindings=pd.KernelBindingsDescriptor(
                compile_time_values=sorted(
                    {"num_output_tiles": n, "num_input_tiles": reduced, "input_granularity": granularity}.items()
                ),
                dataflow_buffers=[("in0", DFB_IN), ("in1", DFB_ZERO), ("out0", DFB_OUT)],
            ),
        )
        for n, group in groups.items()
    ]

    def cb(index: int, tiles: int, fmt: pd.DataFormat) -> pd.CBDescriptor:
        size = pd.tile_size_bytes(fmt)
        descriptor = pd.CBFormatDescriptor(buffer_index=index, data_format=fmt, page_size=size)
        return pd.CBDescriptor(total_size=tiles * size, core_ranges=cores, format_descriptors=[descriptor])

    cbs = [
        cb(DFB_IN, 2 * granularity, data_format),
        cb(DFB_ZERO, 1, pd.DataFormat.Float16_b),
        cb(DFB_OUT, 2, data_format),
    ]
    return pd.ProgramDescriptor(kernels=[reader, writer, *computes], cbs=cbs)


def reduce_sum(t: Tensor, dim: int, keepdim: bool = False) -> Tensor:
    """ttnn.sum(t, dim, keepdim) of a bfloat16 TILE tensor over a dim above its tile dims, on the emulator."""
    if t.dtype != bfloat16 or t.layout != TILE_LAYOUT:
        raise ValueError(f"sum takes a bfloat16 TILE_LAYOUT tensor here, got {t.dtype} {t.layout!r}")
    if t.memory_config().buffer_type != BufferType.DRAM:
        raise ValueError(f"sum takes an interleaved DRAM tensor, got {t.memory_config()}")
    shape = list(t.shape)
    rank = len(shape)
    if not -rank <= dim < rank:
        raise ValueError(f"dim {dim} is out of range for a rank-{rank} tensor")
    dim %= rank
    if dim >= rank - 2:
        raise ValueError(f"dim {dim} is a tile dim of shape {shape}: only dims above the last two are reduced here")
    device = t.device()
    reduced_shape = [1 if i == dim else v for i, v in enumerate(shape)]
    out = allocate_tensor_on_device(reduced_shape, bfloat16, TILE_LAYOUT, device, DRAM_MEMORY_CONFIG)
    grid = device.compute_with_storage_grid_size()
    padded = tuple(int(v) for v in t.padded_shape)
    program = reduce_nc_program(
        t.buffer_address(), out.buffer_address(), padded, dim, t.dtype.data_format, (grid.x, grid.y)
    )
    use_kernel_library_includes()  # the kernels include ttnn/cpp/ttnn/kernel_lib/...
    generic_op([t, out], program)
    record_op(_OP, [t], [out], program, last_run_counters())
    return out if keepdim else reshape(out, [v for i, v in enumerate(shape) if i != dim])
