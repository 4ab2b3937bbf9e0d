"""ttnn.permute of a ROW_MAJOR interleaved tensor that moves its last dim, as tt-metal 0.81.1 builds it.

ttnn.permute hands a row-major permutation other than the outer-dim swap to its device operation, which picks
`MultiCoreBlockedGeneric` when the last dim moves (permute_device_operation.cpp; the factory,
permute_rm_program_factory.cpp, ships in the wheel). With X the input dim that becomes the output's last, the
input is cut into blocks of up to 32 X-rows by 32 W-elements: the reader
(`permute/.../reader_permute_interleaved_rm_blocked_generic.cpp`, RISCV_1) reads a block's 32 row pieces into
`cb_in`, the compute kernel (`compute/transpose_xw_rm_single_tile_size.cpp`) tilizes them into one tile
(`cb_tilize`), transposes it and untilizes it into `cb_out`, and the writer
(`writer_permute_interleaved_rm_blocked_generic.cpp`, RISCV_0) scatters its W rows of X elements to their output
rows. Blocks are split over the grid column by column (split_work_to_cores at its default).

Recorded on a mock Wormhole n150 for `ttnn.permute((7168, 1, 32, 8) bfloat16 ROW_MAJOR, (3, 1, 2, 0))`: reader
compile-time values `N` 4, `page_size` 64, `num_rows` 229376, `x_dim` 0, `num_blocks_total` 7168, `x_blocks`
224, `w_blocks` 1, `x_block_size` / `w_block_size` 32, `element_size` 2 and named runtime args
`start_block end_block` (then the input's shape and row strides as varargs); writer the same plus `X`, `X_stride`,
`W`, `W_stride`, `input_page_size`, `output_page_size` (varargs: shape, permutation, output row strides); compute
`x_block_size`, `w_block_size`, `num_blocks`, HiFi4; dataflow buffers `cb_in` 0 (64 entries of 32 elements),
`cb_out` 1 (64 of 32), `cb_tilize` 2 (two tiles).
"""

from __future__ import annotations

import math

from ttnn_moe._C import emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu.generic_op import generic_op, last_run_counters
from ttnn_moe.emu.tensor import Tensor, allocate_tensor_on_device
from ttnn_moe.emu.ttmetal.ccl_common import align
from ttnn_moe.emu.ttmetal.profiling import record_op
from ttnn_moe.emu.ttmetal.wheel import use_kernel_library_includes, wheel_kernel_path
from ttnn_moe.emu.ttmetal.work_split import core_range_set, split_work_to_cores
from ttnn_moe.emu.types import DRAM_MEMORY_CONFIG, ROW_MAJOR_LAYOUT, BufferType

_OP = "permute"
KERNELS = "ttnn/cpp/ttnn/operations/data_movement/permute/device/kernels"
READER = f"{KERNELS}/dataflow/reader_permute_interleaved_rm_blocked_generic.cpp"
WRITER = f"{KERNELS}/dataflow/writer_permute_interleaved_rm_blocked_generic.cpp"
COMPUTE = f"{KERNELS}/compute/transpose_xw_rm_single_tile_size.cpp"
CB_IN, CB_OUT, CB_TILIZE = 0, 1, 2
BLOCK = 32  # x_block_size = TILE_HEIGHT, w_block_size = TILE_WIDTH
PAGES_IN_FLIGHT = 2


def row_strides(shape: list[int]) -> list[int]:
    """Rows between consecutive indices of each dim (the last two dims step one row)."""
    strides = [1] * len(shape)
    for i in range(len(shape) - 3, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return strides


def permute_rm_program(
    input_address: int,
    output_address: int,
    shape: list[int],
    dims: list[int],
    element_size: int,
    dram_alignment: int,
    data_format: pd.DataFormat,
    grid: tuple[int, int] = (8, 8),
) -> pd.ProgramDescriptor:
    """Output = input (ROW_MAJOR DRAM, logical `shape`) permuted by `dims`, whose last entry is not the last dim."""
    rank = len(shape)
    if sorted(dims) != list(range(rank)) or dims[-1] == rank - 1:
        raise ValueError(f"dims must be a permutation of 0..{rank - 1} that moves the last dim, got {dims}")
    x_dim = dims[-1]
    X, W = shape[x_dim], shape[-1]
    out_shape = [shape[d] for d in dims]
    in_strides, out_strides = row_strides(shape), row_strides(out_shape)
    num_rows = math.prod(shape[:-1])
    x_blocks, w_blocks = -(-X // BLOCK), -(-W // BLOCK)
    total_blocks = num_rows // X * x_blocks * w_blocks
    split = split_work_to_cores(grid, total_blocks, row_major=False)
    cores = core_range_set([core for core, _, _ in split])
    block_row_bytes = BLOCK * element_size
    shared = {
        "N": rank,
        "num_rows": num_rows,
        "x_dim": x_dim,
        "num_blocks_total": total_blocks,
        "x_blocks": x_blocks,
        "w_blocks": w_blocks,
        "x_block_size": BLOCK,
        "w_block_size": BLOCK,
        "element_size": element_size,
    }
    writer_values = {
        **shared,
        "output_page_size": block_row_bytes,
        "input_page_size": block_row_bytes,
        "X": X,
        "X_stride": in_strides[x_dim],
        "W": W,
        "W_stride": out_strides[x_dim],
    }

    def dataflow(source, values, varargs, dfb, tensor, address, page_bytes, config) -> pd.KernelDescriptor:
        return pd.KernelDescriptor(
            kernel_source=wheel_kernel_path(source),
            core_ranges=cores,
            compile_time_args=emu.tensor_accessor_args(align(page_bytes, dram_alignment), True),
            runtime_args=[(core, [start, start + n, *varargs]) for core, n, start in split],
            common_runtime_args=[address],
            config=config,
            bindings=pd.KernelBindingsDescriptor(
                runtime_args=["start_block", "end_block"],
                compile_time_values=sorted(values.items()),
                dataflow_buffers=[dfb],
                tensors=[pd.TensorBindingDescriptor(tensor, 0, 0)],
            ),
        )

    kernels = [
        dataflow(
            READER,
            {**shared, "page_size": block_row_bytes},
            [*shape, *in_strides],
            ("cb_in", CB_IN),
            "input",
            input_address,
            W * element_size,
            pd.ReaderConfigDescriptor(),
        ),
        dataflow(
            WRITER,
            writer_values,
            [*shape, *dims, *out_strides],
            ("cb_out", CB_OUT),
            "output",
            output_address,
            out_shape[-1] * element_size,
            pd.WriterConfigDescriptor(),
        ),
        pd.KernelDescriptor(
            kernel_source=wheel_kernel_path(COMPUTE),
            core_ranges=cores,
            runtime_args=[(core, [n]) for core, n, _ in split],
            config=pd.ComputeConfigDescriptor(
                math_fidelity=pd.MathFidelity.HiFi4, fp32_dest_acc_en=False, math_approx_mode=False
            ),
            bindings=pd.KernelBindingsDescriptor(
                runtime_args=["num_blocks"],
                compile_time_values=[("w_block_size", BLOCK), ("x_block_size", BLOCK)],
                dataflow_buffers=[("cb_in", CB_IN), ("cb_out", CB_OUT), ("cb_tilize", CB_TILIZE)],
            ),
        ),
    ]

    def cb(index: int, entries: int, entry_bytes: int) -> pd.CBDescriptor:
        fmt = pd.CBFormatDescriptor(buffer_index=index, data_format=data_format, page_size=entry_bytes)
        return pd.CBDescriptor(total_size=entries * entry_bytes, core_ranges=cores, format_descriptors=[fmt])

    cbs = [
        cb(CB_IN, PAGES_IN_FLIGHT * BLOCK, block_row_bytes),
        cb(CB_OUT, PAGES_IN_FLIGHT * BLOCK, block_row_bytes),
        cb(CB_TILIZE, PAGES_IN_FLIGHT, BLOCK * BLOCK * element_size),
    ]
    return pd.ProgramDescriptor(kernels=kernels, cbs=cbs)


def permute_rows(t: Tensor, dims: list[int]) -> Tensor:
    """ttnn.permute(t, dims) of a ROW_MAJOR interleaved DRAM tensor where dims moves the last dim."""
    if t.layout != ROW_MAJOR_LAYOUT or t.dtype.is_block_float:
        raise ValueError(f"permute_rows takes a ROW_MAJOR tensor of an element format, got {t.dtype} {t.layout!r}")
    if t.memory_config().buffer_type != BufferType.DRAM:
        raise ValueError(f"permute_rows takes an interleaved DRAM tensor, got {t.memory_config()}")
    shape = [int(v) for v in t.shape]
    device = t.device()
    out = allocate_tensor_on_device([shape[d] for d in dims], t.dtype, ROW_MAJOR_LAYOUT, device, DRAM_MEMORY_CONFIG)
    grid = device.compute_with_storage_grid_size()
    program = permute_rm_program(
        t.buffer_address(),
        out.buffer_address(),
        shape,
        list(dims),
        t.dtype.element_bytes,
        device.chips[0].dram_alignment,
        t.dtype.data_format,
        (grid.x, grid.y),
    )
    use_kernel_library_includes()  # the kernels include ttnn/cpp/ttnn/kernel_lib/...
    generic_op([t, out], program)
    record_op(_OP, [t], [out], program, last_run_counters())
    return out
