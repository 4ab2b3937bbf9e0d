"""ttnn.experimental.deepseek_moe_fast_reduce_nc (tt-metal 0.81.1) on the emulator, with its own kernels.

The expert sum of tt-metal's optimized DeepSeek-V3 decode path: the input (rank >= 3, TILE, bfloat16 or
bfloat8_b) is summed over `dim` (a dim above the last two) and the result, with `dim` kept as 1, is returned
split on the last dim into `input.shape[-1] // split_size` tensors of width `split_size`:

    outputs = deepseek_moe_fast_reduce_nc(input, dim, split_size=..., output_memory_config=...,
                                          compute_kernel_config=None)

so that outputs[s] is `input.sum(dim, keepdim=True)[..., s * split_size:(s + 1) * split_size]`; on the decode
path they are the eight inputs of deepseek_moe_reduce_scatter.

`fast_reduce_nc_program` builds what the factory (deepseek_moe_fast_reduce_nc_program_factory.cpp) builds:
output tiles (of the reduced tensor, row-major over the input's tile grid) dealt to the compute grid's cores
row by row (split_work_to_cores), core i taking tiles i, i + cores, i + 2 cores, ...; the reader streams the
`dim` tiles of each output tile into c_0 in groups of `input_granularity` (the largest divisor of the reduced
size up to 8) after one zero tile in c_1; the compute kernel (one per core group, the tile count a compile-time
arg) adds every input tile to the zero tile into DST with DST accumulation (add_init's acc_to_dest) and packs
one tile to c_16; the writer sends tile t to output (t mod Wt) // slice_Wt, page (t // Wt) * slice_Wt +
(t mod Wt) mod slice_Wt. The default compute config is Wormhole's HiFi4 with fp32 DST accumulation (the op's
own default), so a sum is accumulated in fp32 and rounded once to the output format.
Outputs are interleaved (DRAM or L1); the emulator does not hold a tensor sharded over several cores.
"""

from __future__ import annotations

import math
from typing import Callable

from ttnn_moe._C import emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu.generic_op import generic_op, last_run_counters
from ttnn_moe.emu.tensor import Tensor, allocate_tensor_on_device
from ttnn_moe.emu.ttmetal.matmul_config import WormholeComputeKernelConfig, math_fidelity
from ttnn_moe.emu.ttmetal.profiling import record_op
from ttnn_moe.emu.ttmetal.wheel import use_kernel_library_includes, wheel_kernel_path
from ttnn_moe.emu.ttmetal.work_split import core_range_set, split_work_to_cores
from ttnn_moe.emu.types import DRAM_MEMORY_CONFIG, TILE_LAYOUT, BufferType, TensorMemoryLayout, bfloat8_b, bfloat16

_OP = "deepseek_moe_fast_reduce_nc"
KERNELS = "ttnn/cpp/ttnn/operations/experimental/reduction/deepseek_moe_fast_reduce_nc/device/kernels"
READER = f"{KERNELS}/deepseek_moe_fast_reduce_nc_reader.cpp"
WRITER = f"{KERNELS}/deepseek_moe_fast_reduce_nc_writer.cpp"
COMPUTE = f"{KERNELS}/deepseek_moe_fast_reduce_nc_reduce.cpp"
CB_INPUT, CB_ZERO, CB_OUTPUT = 0, 1, 16
TILE = 32
# The op's default without a compute_kernel_config (deepseek_moe_fast_reduce_nc.cpp on Wormhole).
DEFAULT_COMPUTE_CONFIG = WormholeComputeKernelConfig(math_fidelity=pd.MathFidelity.HiFi4, fp32_dest_acc_en=True)


def input_granularity(reduced: int) -> int:
    """The largest divisor of the reduced dim's size that is at most 8 (1 if none above 1 divides it)."""
    return next((g for g in range(8, 1, -1) if reduced % g == 0), 1)


def accessor_args(tensor: Tensor) -> list[int]:
    return list(emu.tensor_accessor_args(tensor.page_size, tensor.memory_config().buffer_type == BufferType.DRAM))


def data_movement_kernel(path: str, cores: pd.CoreRangeSet, ct: list[int], rt: list, config) -> pd.KernelDescriptor:
    return pd.KernelDescriptor(
        kernel_source=wheel_kernel_path(path), core_ranges=cores, compile_time_args=ct, runtime_args=rt, config=config
    )


def writer_kernel(outputs: list[Tensor], split: list, input_wt: int) -> pd.KernelDescriptor:
    """The writer both factories (this op's and the fused one's) run: output tile t of the reduced tensor to
    output (t mod Wt) // slice_Wt, page (t // Wt) * slice_Wt + (t mod Wt) mod slice_Wt."""
    num_cores = len(split)
    out_page = int(outputs[0].page_size)
    slice_wt = input_wt // len(outputs)
    ct = [CB_OUTPUT, out_page, num_cores, input_wt, slice_wt, len(outputs), *[out_page] * len(outputs)]
    for out in outputs:
        ct += accessor_args(out)
    rt = [
        (core, [i, i + n * num_cores, (i // input_wt) * slice_wt, i % input_wt, *[o.buffer_address() for o in outputs]])
        for i, (core, n, _) in enumerate(split)
    ]
    cores = core_range_set([core for core, _, _ in split])
    return data_movement_kernel(WRITER, cores, ct, rt, pd.WriterConfigDescriptor())


def compute_kernels(
    path: str,
    split: list,
    compile_time_args: Callable[[int], list[int]],
    compute_config: WormholeComputeKernelConfig,
    start_tile_arg: bool = False,
) -> list[pd.KernelDescriptor]:
    """One compute kernel per core group, its output tile count n a compile-time arg (compile_time_args(n)); with
    start_tile_arg each core's first output tile is its runtime arg 0."""
    groups: dict[int, list[tuple[int, pd.CoreCoord]]] = {}
    for i, (core, n, _) in enumerate(split):
        groups.setdefault(n, []).append((i, core))
    fp32 = bool(compute_config.fp32_dest_acc_en)
    return [
        pd.KernelDescriptor(
            kernel_source=wheel_kernel_path(path),
            core_ranges=core_range_set([core for _, core in group]),
            compile_time_args=compile_time_args(n),
            runtime_args=[(core, [i]) for i, core in group] if start_tile_arg else [],
            defines=[("FP32_DEST_ACC_EN", "1")] if fp32 else [],
            config=pd.ComputeConfigDescriptor(
                math_fidelity=math_fidelity(compute_config),
                fp32_dest_acc_en=fp32,
                math_approx_mode=bool(compute_config.math_approx_mode),
            ),
        )
        for n, group in groups.items()
    ]


def fast_reduce_nc_program(
    input_tensor: Tensor,
    outputs: list[Tensor],
    dim: int,
    grid: tuple[int, int],
    compute_config: WormholeComputeKernelConfig = DEFAULT_COMPUTE_CONFIG,
) -> pd.ProgramDescriptor:
    """Sums the TILE tensor over `dim` (< rank - 2) into `outputs`, its reduced result split on the last dim."""
    shape = [int(v) for v in input_tensor.padded_shape]
    reduced = shape[dim]
    inner_tiles = math.prod(shape[dim + 1 :]) // (TILE * TILE)
    input_wt = shape[-1] // TILE
    output_tiles = math.prod(shape) // (TILE * TILE) // reduced
    granularity = input_granularity(reduced)
    split = split_work_to_cores(grid, output_tiles, row_major=True)
    num_cores = len(split)
    cores = core_range_set([core for core, _, _ in split])
    in_format = input_tensor.dtype.data_format
    out_format = outputs[0].dtype.data_format
    in_page, out_page = int(input_tensor.page_size), int(outputs[0].page_size)

    reader_ct = [CB_INPUT, CB_ZERO, in_page, num_cores, granularity, dim, reduced, inner_tiles, inner_tiles * reduced]
    reader_rt = [(core, [input_tensor.buffer_address(), i, i + n * num_cores]) for i, (core, n, _) in enumerate(split)]
    kernels = [
        data_movement_kernel(READER, cores, reader_ct + accessor_args(input_tensor), reader_rt,
                             pd.ReaderConfigDescriptor()),
        writer_kernel(outputs, split, input_wt),
    ]  # fmt: skip
    kernels += compute_kernels(
        COMPUTE, split, lambda n: [n, reduced, granularity, CB_INPUT, CB_ZERO, CB_OUTPUT], compute_config
    )

    def cb(index: int, pages: int, page: int, fmt) -> pd.CBDescriptor:
        return pd.CBDescriptor(pages * page, cores, [pd.CBFormatDescriptor(index, fmt, page)])

    cbs = [
        cb(CB_INPUT, 2 * granularity, in_page, in_format),
        cb(CB_ZERO, 1, pd.tile_size_bytes(pd.DataFormat.Float16_b), pd.DataFormat.Float16_b),
        cb(CB_OUTPUT, 2, out_page, out_format),
    ]
    return pd.ProgramDescriptor(kernels=kernels, cbs=cbs)


def check_args(input_tensor, dim, split_size, op: str = _OP) -> tuple[int, int]:
    if not isinstance(input_tensor, Tensor):
        raise TypeError(f"{op}: input_tensor must be an emulator Tensor, got {type(input_tensor).__name__}")
    if input_tensor.dtype not in (bfloat16, bfloat8_b) or input_tensor.layout != TILE_LAYOUT:
        raise ValueError(
            f"{op}: the input must be a bfloat16 or bfloat8_b TILE_LAYOUT tensor, got {input_tensor.dtype} "
            f"{input_tensor.layout!r}"
        )
    rank = len(input_tensor.padded_shape)
    if rank < 3:
        raise ValueError(f"{op}: the input's rank must be greater than 2, got {rank}")
    if isinstance(dim, bool) or not isinstance(dim, int) or not -rank <= dim < rank:
        raise ValueError(f"{op}: dim {dim!r} is out of range for a rank-{rank} tensor")
    dim %= rank
    if dim > rank - 3:
        raise ValueError(f"{op}: dim must be between 0 and {rank - 3} (not one of the tile dims), got {dim}")
    width = int(input_tensor.padded_shape[-1])
    if isinstance(split_size, bool) or not isinstance(split_size, int) or split_size <= 0:
        raise ValueError(f"{op}: split_size must be a positive int, got {split_size!r}")
    num_outputs = width // split_size
    if num_outputs == 0 or width % (num_outputs * TILE):
        raise ValueError(
            f"{op}: the input's width {width} must divide into {max(num_outputs, 1)} tile-aligned outputs "
            f"(split_size {split_size})"
        )
    return dim, num_outputs


def check_interleaved(input_tensor: Tensor, output_memory_config, op: str = _OP) -> None:
    if output_memory_config.memory_layout is not TensorMemoryLayout.INTERLEAVED:
        raise ValueError(
            f"{op}: output_memory_config {output_memory_config} is sharded; the emulator holds interleaved "
            "outputs only (DRAM or L1)"
        )
    if input_tensor.memory_config().memory_layout is not TensorMemoryLayout.INTERLEAVED:
        raise ValueError(f"{op}: the input must be interleaved (DRAM or L1), got {input_tensor.memory_config()}")


def deepseek_moe_fast_reduce_nc(
    input_tensor: Tensor,
    dim: int,
    *,
    split_size: int,
    output_memory_config=DRAM_MEMORY_CONFIG,
    compute_kernel_config: WormholeComputeKernelConfig | None = None,
) -> list[Tensor]:
    """ttnn.experimental.deepseek_moe_fast_reduce_nc's signature (0.81.1); see the module docstring."""
    dim, num_outputs = check_args(input_tensor, dim, split_size)
    check_interleaved(input_tensor, output_memory_config)
    device = input_tensor.device()
    shape = [int(v) for v in input_tensor.shape]
    out_shape = [1 if i == dim else v for i, v in enumerate(shape)]
    out_shape[-1] = int(input_tensor.padded_shape[-1]) // num_outputs
    outputs = [
        allocate_tensor_on_device(out_shape, input_tensor.dtype, TILE_LAYOUT, device, output_memory_config)
        for _ in range(num_outputs)
    ]
    grid = device.compute_with_storage_grid_size()
    program = fast_reduce_nc_program(
        input_tensor, outputs, dim, (grid.x, grid.y), compute_kernel_config or DEFAULT_COMPUTE_CONFIG
    )
    use_kernel_library_includes()  # the reader includes ttnn/cpp/ttnn/kernel_lib/l1_helpers.hpp
    generic_op([input_tensor, *outputs], program)
    record_op(_OP, [input_tensor], outputs, program, last_run_counters())
    return outputs
