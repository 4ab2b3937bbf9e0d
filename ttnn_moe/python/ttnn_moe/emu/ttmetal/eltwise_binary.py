"""ttnn.mul / ttnn.add of two same-shape bfloat16 tile tensors, as tt-metal 0.81.1 builds them (binary_ng).

What the real 0.81.1 runtime compiles for these calls was recorded on a mock Wormhole n150
(`ttnn.mul(a, b, input_tensor_a_activations=[SILU])`, `ttnn.add(a, b)`, `activations=[RELU]`, interleaved
DRAM tiles): binary_ng's program, not the legacy eltwise binary one. Its kernels, read from the wheel:

- reader `kernels_ng/dataflow/reader_interleaved_no_bcast.cpp` (a into CB c_0, b into c_1, one tile each
  at a time), writer `kernels_ng/dataflow/writer_interleaved_no_bcast.cpp` (c_2 out);
- compute: `mul` is an SFPU op for bfloat16 (`kernels/compute/eltwise_binary_sfpu_no_bcast.cpp`: both
  tiles copied to DST, `mul_binary_tile`), `add` an FPU op (`kernels/compute/eltwise_binary_no_bcast.cpp`:
  `add_tiles`).

`mul(a, b)` with b's last dim 1 (tile-padded to one tile column) and its other dims equal to a's is binary_ng's
column broadcast of b (SubtileBroadcastType COL_B). With both inputs bfloat16 the factory takes the LLK
broadcast (BCAST_LLK=1) and the kernels_ng pair:
- reader `kernels_ng/dataflow/reader_interleaved_col_bcast.cpp` (SRC_BCAST=0, SRC_BCAST_B=1): one b tile per
  row of a's tiles into c_1, then that row's a tiles into c_0; b's strides are those of its own shape;
- compute `kernels_ng/compute/eltwise_binary_sfpu_col_bcast.cpp` (SRC_BCAST_B=1, BCAST_INPUT=1): per b tile,
  `unary_bcast<COL>` spreads its column 0 over the tile into c_6 (two tiles, b's format), then each a tile of
  the row is copied to DST with that tile and multiplied (`mul_binary_tile`). Its runtime args are the tile
  count, the row length Wt and the core's start column (start tile % Wt).

An activation on input a (`input_tensor_a_activations`) arrives as the PROCESS_LHS_ACTIVATIONS(i) define:
the compute kernel first passes each a tile through DST with the activation into the intermediate CB c_3
(one tile, a's format), then combines c_3 with b. A single RELU after the op is the packer's ReLU
(PACK_RELU). CBs c_0, c_1, c_2 hold two tiles each. Output tiles are split over the grid row by row
(split_work_to_cores), the reader's and writer's runtime args give each core its start tile and count
and the tensor's N, C, Ht, Wt with a's and b's strides; the compute kernel reads its tile count.
The factory also puts the kernels, with all-zero args, on every grid core without work; those are left
out here (their loops run zero times on a device, while the reader's `start % (N*C*Ht*Wt)` with all-zero
args would divide by zero on the host).
"""

from __future__ import annotations

from ttnn_moe._C import emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu.generic_op import generic_op
from ttnn_moe.emu.tensor import Tensor, allocate_tensor_on_device
from ttnn_moe.emu.ttmetal.wheel import wheel_kernel_path
from ttnn_moe.emu.ttmetal.work_split import core_range_set, split_work_to_cores
from ttnn_moe.emu.types import DRAM_MEMORY_CONFIG, TILE_LAYOUT, BufferType, bfloat16

KERNELS = "ttnn/cpp/ttnn/operations/eltwise/binary_ng/device"
READER = f"{KERNELS}/kernels_ng/dataflow/reader_interleaved_no_bcast.cpp"
WRITER = f"{KERNELS}/kernels_ng/dataflow/writer_interleaved_no_bcast.cpp"
SFPU_COMPUTE = f"{KERNELS}/kernels/compute/eltwise_binary_sfpu_no_bcast.cpp"
COL_BCAST_READER = f"{KERNELS}/kernels_ng/dataflow/reader_interleaved_col_bcast.cpp"
COL_BCAST_SFPU_COMPUTE = f"{KERNELS}/kernels_ng/compute/eltwise_binary_sfpu_col_bcast.cpp"
FPU_COMPUTE = f"{KERNELS}/kernels/compute/eltwise_binary_no_bcast.cpp"
CB_A, CB_B, CB_OUT, CB_A_ACTIVATED = 0, 1, 2, 3  # tt::CBIndex::c_0 .. c_3, fixed in the kernels
CB_B_BROADCAST = 6  # c_6: b's tile with its column 0 spread over the width (column broadcast of b)
TILE_BYTES = 32 * 32 * 2  # bfloat16

# op -> (compute kernel, its op defines). mul of bfloat16 runs on the SFPU in 0.81.1, add on the FPU.
OPS = {
    "mul": (SFPU_COMPUTE, {"BINARY_SFPU_INIT": "mul_binary_tile_init();", "BINARY_SFPU_OP": "mul_binary_tile"}),
    "add": (FPU_COMPUTE, {"BINARY_OP": "add_tiles", "BINARY_OP_TYPE": "EltwiseBinaryType::ELWADD"}),
}
# Activations on input a: the op's SFPU chain and the unary header family its include define selects.
LHS_ACTIVATIONS = {"silu": ("silu_tile_init();silu_tile(i);", "SFPU_OP_COMPUTE_KERNEL_API_INCLUDE")}
# The dataflow kernels' fill helpers for bfloat16 (named by the factory, unused by the no-broadcast kernels).
FILL_DEFINES = {
    f"{name}{suffix}": f"{helper}_bfloat16"
    for name, helper in [
        ("FILL_TILE_WITH_FIRST_COLUMN", "fill_tile_with_first_column"),
        ("FILL_TILE_WITH_FIRST_COLUMN_RM", "fill_tile_with_first_column_rm"),
        ("FILL_TILE_WITH_FIRST_ELEMENT", "fill_tile_with_first_element"),
        ("FILL_TILE_WITH_FIRST_ROW", "fill_tile_with_first_row"),
        ("FILL_TILE_WITH_FIRST_ROW_RM", "fill_tile_with_first_row_rm"),
        ("FILL_WITH_VALUE", "fill_with_val"),
    ]
    for suffix in ("", "_B")
}


def compute_defines(op: str, lhs_activation: str | None, post_relu: bool) -> dict[str, str]:
    if op not in OPS:
        raise ValueError(f"binary op must be one of {sorted(OPS)}, got {op!r}")
    if lhs_activation is not None and lhs_activation not in LHS_ACTIVATIONS:
        raise ValueError(f"input_tensor_a activation must be one of {sorted(LHS_ACTIVATIONS)}, got {lhs_activation!r}")
    if post_relu and lhs_activation is not None:
        raise ValueError("a RELU after the op is the packer's ReLU only without input activations")
    defines = dict(OPS[op][1])
    defines.update(
        {
            "BCAST_INPUT": "",
            "PROCESS_LHS_ACTIVATIONS(i)": "",
            "PROCESS_RHS_ACTIVATIONS(i)": "",
            "PROCESS_POST_ACTIVATIONS(i)": "",
            "SCALAR_IS_LHS": "0",
            "WHERE_TST": "0",
            "WHERE_TTS": "0",
        }
    )
    if lhs_activation is not None:
        chain, include = LHS_ACTIVATIONS[lhs_activation]
        defines.update({"PROCESS_LHS_ACTIVATIONS(i)": chain, include: "1", "INP_FLOAT": "1"})
    if post_relu:
        defines.update({"PACK_RELU": "1", "SFPU_OP_RELU_FAMILY_INCLUDE": "1"})
    return defines


def binary_ng_program(
    op: str,
    a_address: int,
    b_address: int,
    out_address: int,
    shape_in_tiles: tuple[int, int, int, int],
    *,
    lhs_activation: str | None = None,
    post_relu: bool = False,
    b_column_broadcast: bool = False,
    grid: tuple[int, int] = (8, 8),
) -> pd.ProgramDescriptor:
    """out = op(activation(a), b) [relu'd] over interleaved bfloat16 DRAM tiles of shape (N, C, Ht, Wt) tiles.

    b_column_broadcast: b is (N, C, Ht, 1) tiles and its column 0 is broadcast across a's width (mul only)."""
    defines = compute_defines(op, lhs_activation, post_relu)
    N, C, Ht, Wt = shape_in_tiles
    if min(shape_in_tiles) < 1:
        raise ValueError(f"shape in tiles must be positive, got {shape_in_tiles}")
    if b_column_broadcast and (op != "mul" or lhs_activation is not None or post_relu):
        raise ValueError(
            f"a column broadcast of b is emulated for mul without activations only, got op={op!r}, "
            f"lhs_activation={lhs_activation!r}, post_relu={post_relu}"
        )
    split = split_work_to_cores(grid, N * C * Ht * Wt, row_major=True)
    cores = core_range_set([core for core, _, _ in split])
    accessor = emu.tensor_accessor_args(TILE_BYTES, True)
    # Strides of a and b: tiles per batch and per channel of each one's own shape, 0 where the dim is 1.
    b_wt = 1 if b_column_broadcast else Wt
    n_stride, c_stride = Ht * Wt * C * (N > 1), Ht * Wt * (C > 1)
    n_stride_b, c_stride_b = Ht * b_wt * C * (N > 1), Ht * b_wt * (C > 1)
    D, nd = 1, 1  # ranks above 4 are collapsed into these; not used here

    def reader_args(start: int, count: int) -> list[int]:
        a = [a_address, start, 0, count, 0, 0, 0, n_stride, c_stride, D, N, C, Ht, Wt, nd]
        b = [b_address, 0, 0, n_stride_b, c_stride_b, 0]
        return a + b + ([] if b_column_broadcast else [Wt, Wt])

    reader_defines = {**FILL_DEFINES, "BCAST_LLK": "0", "SRC_SHARDED": "0", "SRC_SHARDED_B": "0"}
    compute_source = OPS[op][0]
    if b_column_broadcast:
        reader_defines.update({"BCAST_LLK": "1", "SRC_BCAST": "0", "SRC_BCAST_B": "1"})
        defines.update({"BCAST_INPUT": "1", "SRC_BCAST": "0", "SRC_BCAST_B": "1"})
        compute_source = COL_BCAST_SFPU_COMPUTE

    def compute_args(start: int, count: int) -> list[int]:
        # tile count, then how many tiles share one broadcast tile (a row of Wt) and where in it the core starts
        return [count, Wt, start % Wt] if b_column_broadcast else [count, 1, 0]

    config = pd.ComputeConfigDescriptor(
        math_fidelity=pd.MathFidelity.HiFi4, fp32_dest_acc_en=False, math_approx_mode=False, dst_full_sync_en=False
    )
    kernels = [
        pd.KernelDescriptor(
            kernel_source=wheel_kernel_path(COL_BCAST_READER if b_column_broadcast else READER),
            core_ranges=cores,
            compile_time_args=accessor + accessor + [0],  # a, b, has_sharding
            defines=sorted(reader_defines.items()),
            runtime_args=[(core, reader_args(start, n)) for core, n, start in split],
            config=pd.ReaderConfigDescriptor(),
        ),
        pd.KernelDescriptor(
            kernel_source=wheel_kernel_path(WRITER),
            core_ranges=cores,
            compile_time_args=accessor + [0],  # out, has_sharding
            defines=sorted({**FILL_DEFINES, "DST_SHARDED": "0", "SRC_SHARDED": "0"}.items()),
            runtime_args=[(core, [out_address, start, n, 0, D, N, C, Ht, Wt, nd]) for core, n, start in split],
            config=pd.WriterConfigDescriptor(),
        ),
        pd.KernelDescriptor(
            kernel_source=wheel_kernel_path(compute_source),
            core_ranges=cores,
            compile_time_args=[1, 0],  # tiles per cycle; the factory's second word (unused by these kernels)
            defines=sorted(defines.items()),
            runtime_args=[(core, compute_args(start, n)) for core, n, start in split],
            config=config,
        ),
    ]

    def cb(index: int, tiles: int) -> pd.CBDescriptor:
        fmt = pd.CBFormatDescriptor(buffer_index=index, data_format=pd.DataFormat.Float16_b, page_size=TILE_BYTES)
        return pd.CBDescriptor(total_size=tiles * TILE_BYTES, core_ranges=cores, format_descriptors=[fmt])

    cbs = [cb(CB_A, 2)] + ([cb(CB_A_ACTIVATED, 1)] if lhs_activation else []) + [cb(CB_B, 2), cb(CB_OUT, 2)]
    if b_column_broadcast:
        cbs.append(cb(CB_B_BROADCAST, 2))
    return pd.ProgramDescriptor(kernels=kernels, cbs=cbs)


def _activation_name(activation) -> str:
    return str(getattr(activation, "name", activation)).lower()


def _shape_in_tiles(t: Tensor, name: str) -> tuple[int, int, int, int]:
    if t.dtype != bfloat16 or t.layout != TILE_LAYOUT:
        raise ValueError(f"{name} must be a bfloat16 TILE_LAYOUT tensor, got {t.dtype} {t.layout!r}")
    if t.memory_config().buffer_type != BufferType.DRAM:
        raise ValueError(f"{name} must be in interleaved DRAM, got {t.memory_config()}")
    shape = list(t.padded_shape)
    if len(shape) > 4:
        raise ValueError(f"{name} has rank {len(shape)}; ranks above 4 are not supported here")
    n, c, h, w = [1] * (4 - len(shape)) + shape
    return n, c, h // 32, w // 32


def binary_ng(op: str, a: Tensor, b: Tensor, *, input_tensor_a_activations=(), activations=()) -> Tensor:
    """ttnn.<op>(a, b, input_tensor_a_activations=..., activations=...) on the emulator: a new output tensor."""
    tiles = _shape_in_tiles(a, "input_tensor_a")
    b_tiles = _shape_in_tiles(b, "input_tensor_b")
    a_shape, b_shape = list(a.shape), list(b.shape)
    b_column_broadcast = (
        len(a_shape) == len(b_shape) and b_shape[:-1] == a_shape[:-1] and b_shape[-1] == 1 and a_shape[-1] > 1
    )
    if not b_column_broadcast and (b_tiles != tiles or list(a.padded_shape) != list(b.padded_shape)):
        raise ValueError(
            f"a and b must have the same shape, or b a's shape with last dim 1 (a column broadcast of b), "
            f"got {a.shape} and {b.shape}"
        )
    lhs = [_activation_name(x) for x in input_tensor_a_activations or ()]
    post = [_activation_name(x) for x in activations or ()]
    if len(lhs) > 1 or post not in ([], ["relu"]):
        raise ValueError(f"supported: one input_tensor_a activation and activations=[relu], got {lhs} and {post}")
    device = a.device()
    out = allocate_tensor_on_device(a.shape, bfloat16, TILE_LAYOUT, device, DRAM_MEMORY_CONFIG)
    grid = device.compute_with_storage_grid_size()
    program = binary_ng_program(
        op,
        a.buffer_address(),
        b.buffer_address(),
        out.buffer_address(),
        tiles,
        lhs_activation=lhs[0] if lhs else None,
        post_relu=bool(post),
        b_column_broadcast=b_column_broadcast,
        grid=(grid.x, grid.y),
    )
    return generic_op([a, b, out], program)


def mul(a: Tensor, b: Tensor, *, input_tensor_a_activations=(), activations=()) -> Tensor:
    return binary_ng("mul", a, b, input_tensor_a_activations=input_tensor_a_activations, activations=activations)


def add(a: Tensor, b: Tensor, *, input_tensor_a_activations=(), activations=()) -> Tensor:
    return binary_ng("add", a, b, input_tensor_a_activations=input_tensor_a_activations, activations=activations)
