"""ttnn.zeros_like(t, optional_output_tensor=t) of a tile tensor, as tt-metal 0.81.1 builds it.

ttnn.sparse_matmul zero-fills its output before the matmul (skipped batches must read as zeros). The
real 0.81.1 runtime builds that fill (recorded on a mock Wormhole n150) as the Metal 2.0 unary program
with an SFPU fill: reader `eltwise/unary/.../dataflow/reader_unary.cpp` (the tensor itself as its source,
one tile at a time into dfb `src`, CB 0), compute `compute/eltwise_sfpu_metal2.cpp` (copy to DST,
`fill_tile_bitcast(0, 0x0u)`, pack into dfb `out`, CB 1) and writer `dataflow/writer_unary.cpp` (back to
the tensor); the reader on RISCV_1 / NOC 0, the writer on RISCV_0 / NOC 1, HiFi4. Tiles are split over
the grid row by row (split_work_to_cores); cores without tiles are left out here (their loops run zero
times on a device).
"""

from __future__ import annotations

from ttnn_moe._C import emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu.ttmetal.data_movement import NOC_0, NOC_1, RISCV_0, RISCV_1, data_movement
from ttnn_moe.emu.ttmetal.wheel import wheel_kernel_path
from ttnn_moe.emu.ttmetal.work_split import core_range_set, split_work_to_cores

KERNELS = "ttnn/cpp/ttnn/operations/eltwise/unary/device/kernels"
READER = f"{KERNELS}/dataflow/reader_unary.cpp"
WRITER = f"{KERNELS}/dataflow/writer_unary.cpp"
COMPUTE = f"{KERNELS}/compute/eltwise_sfpu_metal2.cpp"
CB_SRC, CB_DST = 0, 1
CB_TILES = 2
# The reader's and writer's named runtime args; the last five describe row-major chunks (0 for tiles).
DATAFLOW_ARGS = (
    "num_pages",
    "start_id",
    "chunks_per_row",
    "chunk_size",
    "last_chunk_size",
    "rows_per_tile",
    "total_rows",
)
FILL_DEFINES = {
    "INP_FLOAT": "1",
    "SFPU_OP_CHAIN_0": "SFPU_OP_CHAIN_0_INIT_0 SFPU_OP_CHAIN_0_FUNC_0",
    "SFPU_OP_CHAIN_0_FUNC_0": "fill_tile_bitcast(0, 0x0u);",
    "SFPU_OP_CHAIN_0_INIT_0": "fill_tile_init();",
    "SFPU_OP_FILL_INCLUDE": "1",
}


def zero_fill_program(
    address: int, num_tiles: int, data_format: pd.DataFormat, grid: tuple[int, int] = (8, 8)
) -> pd.ProgramDescriptor:
    """Zeros every one of the `num_tiles` tiles of the interleaved DRAM tensor at `address`."""
    if num_tiles < 1:
        raise ValueError(f"a zero fill needs at least one tile, got {num_tiles}")
    tile_bytes = pd.tile_size_bytes(data_format)
    split = split_work_to_cores(grid, num_tiles, row_major=True)
    cores = core_range_set([core for core, _, _ in split])
    accessor = emu.tensor_accessor_args(tile_bytes, True)

    def dataflow(source: str, name: str, cb: int, config, defines: dict[str, str]) -> pd.KernelDescriptor:
        return pd.KernelDescriptor(
            kernel_source=wheel_kernel_path(source),
            core_ranges=cores,
            compile_time_args=accessor,
            defines=sorted(defines.items()),
            runtime_args=[(core, [n, start, 0, 0, 0, 0, 0]) for core, n, start in split],
            common_runtime_args=[address],
            config=config,
            bindings=pd.KernelBindingsDescriptor(
                runtime_args=list(DATAFLOW_ARGS),
                dataflow_buffers=[(name, cb)],
                tensors=[pd.TensorBindingDescriptor(name, 0, 0)],
            ),
        )

    kernels = [
        dataflow(READER, "src", CB_SRC, data_movement(RISCV_1, NOC_0), {"RM_INTERLEAVED": "0", "SRC_SHARDED": "0"}),
        dataflow(WRITER, "dst", CB_DST, data_movement(RISCV_0, NOC_1), {"DST_SHARDED": "0", "RM_INTERLEAVED": "0"}),
        pd.KernelDescriptor(
            kernel_source=wheel_kernel_path(COMPUTE),
            core_ranges=cores,
            defines=sorted(FILL_DEFINES.items()),
            runtime_args=[(core, [n, 0, 0]) for core, n, _ in split],  # tiles, the two unused packed scalars
            config=pd.ComputeConfigDescriptor(
                math_fidelity=pd.MathFidelity.HiFi4, fp32_dest_acc_en=False, math_approx_mode=False
            ),
            bindings=pd.KernelBindingsDescriptor(
                runtime_args=["num_tiles", "packed_scalar1", "packed_scalar2"],
                compile_time_values=[("input_data_format", int(data_format))],
                dataflow_buffers=[("in", CB_SRC), ("out", CB_DST)],
            ),
        ),
    ]

    def cb(index: int) -> pd.CBDescriptor:
        fmt = pd.CBFormatDescriptor(buffer_index=index, data_format=data_format, page_size=tile_bytes)
        return pd.CBDescriptor(total_size=CB_TILES * tile_bytes, core_ranges=cores, format_descriptors=[fmt])

    return pd.ProgramDescriptor(kernels=kernels, cbs=[cb(CB_SRC), cb(CB_DST)])
