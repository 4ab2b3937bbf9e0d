"""tt-metal 0.81.1's 2D-multicast matmul program (`matmul_multicore_reuse_mcast_2d`) as a ProgramDescriptor.

ttnn.matmul / ttnn.linear build it for a MatmulMultiCoreReuseMultiCastProgramConfig. In 0.81.1 it binds the
Metal 2.0 forks of the matmul kernels; their named arguments, binding ids, processors, NOCs and defines below
were read off the real runtime's builds on a mock Wormhole n150 (tests/data/ttmetal_matmul_mcast_2d_builds.json),
the rest (cores, CB sizes, runtime values) follows tt-metal's factory source. Described: interleaved DRAM
inputs and output, no bias, no fused activation, 16-bit DST, no transpose_mcast.

The output is tiled over a (num_blocks_y x num_blocks_x) rectangle of cores from (0, 0): core (x, y) owns
output tile rows [y * per_core_M, ...) and columns [x * per_core_N, ...). Each block of K (in0_block_w tiles):
- the left column reads its rows of A from DRAM and multicasts them along its row (in0 senders, RISCV_1 on
  NOC 1); the other cores of the row receive (in0 receivers);
- the top row reads its columns of B and multicasts them down its column (in1 sender/writers, RISCV_0 on
  NOC 0); the other cores of the column receive (in1 receiver/writers);
- every core accumulates its output block (packer L1 accumulation with more than two K blocks) and its
  writer stores it to DRAM.
With more than two columns and more than one row, the receivers right of the grid's middle column issue on
the other NOC (in0 receivers on NOC 0, in1 receiver/writers on NOC 1): tt-metal's split of the NOC load.
"""

from __future__ import annotations

from dataclasses import dataclass

from ttnn_moe._C import emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu.ttmetal.data_movement import NOC_0, NOC_1, RISCV_0, RISCV_1, data_movement
from ttnn_moe.emu.ttmetal.matmul_config import (
    MatmulMultiCoreReuseMultiCastProgramConfig,
    div_up,
    grid_xy,
)
from ttnn_moe.emu.ttmetal.matmul_mcast_1d import (
    IN0_RECEIVER,
    IN0_RECEIVER_ARGS,
    IN0_SENDER,
    IN0_SENDER_ARGS,
    IN1_SENDER_WRITER,
    IN1_WRITER_ARGS,
    KERNELS,
    MCAST_INPUT_BUFFERING_DEPTH,
    MatmulShape,
    Operand,
    compute_kernel,
    in1_block_values,
    out_block_values,
)
from ttnn_moe.emu.ttmetal.wheel import wheel_kernel_path

# The same Metal 2.0 kernels as the 1D program, plus the in1 receivers of the 2D grid.
IN1_RECEIVER_WRITER = f"{KERNELS}/dataflow/reader_bmm_tile_layout_in1_receiver_writer_padding_metal2.cpp"
CBS = {"in0": 0, "in1": 1, "out": 2, "intermed0": 3}
SEMAPHORES = {"in0_mcast_sender": 0, "in0_mcast_receiver": 1, "in1_mcast_sender": 2, "in1_mcast_receiver": 3}
# Packer L1 accumulation only pays with more than two K blocks: the last one spills and reloads.
PACKER_L1_ACC_MIN_BLOCKS = 3

# The in1 sender/writer's named runtime args are the 1D program's (IN1_WRITER_ARGS).
IN1_RECEIVER_WRITER_ARGS = (
    "in1_mcast_sender_noc_x",
    "in1_mcast_sender_noc_y",
    "out_tensor_start_tile_id",
    "out_num_nonzero_subblocks_h",
    "out_last_num_nonzero_subblocks_h",
    "out_last_subblock_h",
    "padded_block_tiles_h_skip",
    "out_num_nonzero_subblocks_w",
    "out_last_num_nonzero_subblocks_w",
    "out_last_subblock_w",
    "padded_subblock_tiles_addr_skip",
    "padded_block_tiles_w_skip",
    "last_num_blocks_h_dim",
    "last_num_blocks_w_dim",
)


@dataclass(frozen=True)
class _Edges:
    """The factory's figures for the last row / column of cores, whose blocks may be partly padding."""

    last_block_h: int
    last_block_w: int
    last_blocks_h: int
    last_blocks_w: int
    last_subblocks_h: int
    last_subblocks_w: int
    last_subblock_h: int
    last_subblock_w: int
    subblock_tiles_addr_skip: int
    block_tiles_w_skip: int
    block_tiles_h_skip: int


def _edges(shape: MatmulShape, config, out_tile_bytes: int) -> _Edges:
    block_h, block_w = config.out_block_h, config.out_block_w
    sub_h, sub_w = config.out_subblock_h, config.out_subblock_w
    last_per_core_M = shape.Mt % config.per_core_M or config.per_core_M
    last_per_core_N = shape.Nt % config.per_core_N or config.per_core_N
    last_block_h = last_per_core_M % block_h or block_h
    last_block_w = last_per_core_N % block_w or block_w
    last_subblocks_h = div_up(last_block_h, sub_h)
    last_subblocks_w = div_up(last_block_w, sub_w)
    last_subblock_w = last_block_w % sub_w or sub_w
    return _Edges(
        last_block_h=last_block_h,
        last_block_w=last_block_w,
        last_blocks_h=div_up(last_per_core_M, block_h),
        last_blocks_w=div_up(last_per_core_N, block_w),
        last_subblocks_h=last_subblocks_h,
        last_subblocks_w=last_subblocks_w,
        last_subblock_h=last_block_h % sub_h or sub_h,
        last_subblock_w=last_subblock_w,
        subblock_tiles_addr_skip=out_tile_bytes * (sub_w - last_subblock_w),
        block_tiles_w_skip=sub_w * sub_h * (block_w // sub_w - last_subblocks_w),
        block_tiles_h_skip=(block_h // sub_h - last_subblocks_h) * block_w * sub_h,
    )


def _core_range(x0: int, y0: int, x1: int, y1: int) -> pd.CoreRange:
    return pd.CoreRange(pd.CoreCoord(x0, y0), pd.CoreCoord(x1, y1))


def mcast_2d_program(
    device,
    shape: MatmulShape,
    config,
    compute_config,
    a: Operand,
    b: Operand,
    out: Operand,
) -> pd.ProgramDescriptor:
    """The 2D-multicast matmul of `a` (Mt x Kt tiles) by `b` (Kt x Nt tiles) into `out`.

    `config` is a MatmulMultiCoreReuseMultiCastProgramConfig (ttnn's or ours), `compute_config` a
    WormholeComputeKernelConfig; `device` gives the cores' NOC coordinates."""
    config = _ours(config)
    _check_config(shape, config, compute_config)
    Mt, Kt, Nt = shape.Mt, shape.Kt, shape.Nt
    in0_block_w, per_core_M, per_core_N = config.in0_block_w, config.per_core_M, config.per_core_N
    block_h, block_w = config.out_block_h, config.out_block_w
    sub_h, sub_w = config.out_subblock_h, config.out_subblock_w
    num_blocks = Kt // in0_block_w
    packer_l1_acc = bool(compute_config.packer_l1_acc) and num_blocks >= PACKER_L1_ACC_MIN_BLOCKS
    interm_format = pd.DataFormat.Float16_b if packer_l1_acc else out.data_format
    cols, rows = div_up(Nt, per_core_N), div_up(Mt, per_core_M)
    grid_x, grid_y = grid_xy(config.compute_with_storage_grid_size)
    if cols > grid_x or rows > grid_y:
        raise ValueError(
            f"the matmul needs {cols}x{rows} cores (Nt {Nt} / per_core_N {per_core_N}, Mt {Mt} / per_core_M "
            f"{per_core_M}), more than the program config's {grid_x}x{grid_y} grid"
        )
    chip = device.get_devices()[0]

    def noc_xy(x: int, y: int) -> pd.CoreCoord:
        return chip.worker_core_from_logical_core(pd.CoreCoord(x, y))

    all_cores = pd.CoreRangeSet([_core_range(0, 0, cols - 1, rows - 1)])
    # tt-metal's split of the receivers between the NOCs: left of half_core the default NOCs, right of it
    # the other ones (only with more than two columns and more than one row).
    split_half = cols > 2 and rows > 1
    half_core = cols // 2 if split_half else cols - 1
    in0_receivers = ([_core_range(1, 0, cols - 1, 0)] if cols > 1 else []) + (
        [_core_range(1, 1, half_core, rows - 1)] if cols > 1 and rows > 1 else []
    )
    in1_receivers = ([_core_range(0, 1, 0, rows - 1)] if rows > 1 else []) + (
        [_core_range(1, 1, half_core, rows - 1)] if cols > 1 and rows > 1 else []
    )
    other_noc_receivers = [_core_range(half_core + 1, 1, cols - 1, rows - 1)] if split_half else []

    tile = pd.tile_size_bytes
    depth = MCAST_INPUT_BUFFERING_DEPTH if num_blocks > 1 else 1
    out_tiles = block_h * block_w

    def cb(name: str, fmt: pd.DataFormat, pages: int, also: tuple[str, pd.DataFormat] | None = None):
        formats = [pd.CBFormatDescriptor(buffer_index=CBS[name], data_format=fmt, page_size=tile(fmt))]
        if also is not None:
            formats.append(pd.CBFormatDescriptor(buffer_index=CBS[also[0]], data_format=also[1], page_size=tile(fmt)))
        return pd.CBDescriptor(total_size=tile(fmt) * pages, core_ranges=all_cores, format_descriptors=formats)

    cbs = [
        cb("in0", a.data_format, block_h * in0_block_w * depth),
        cb("in1", b.data_format, block_w * in0_block_w * depth),
    ]
    if interm_format == out.data_format:  # the partials and the output share one L1 region
        cbs.append(cb("out", out.data_format, out_tiles, also=("intermed0", interm_format)))
    else:
        cbs += [cb("out", out.data_format, out_tiles), cb("intermed0", interm_format, out_tiles)]
    semaphores = [
        pd.SemaphoreDescriptor(id=i, core_type=pd.CoreType.WORKER, core_ranges=all_cores, initial_value=0)
        for i in SEMAPHORES.values()
    ]
    in0_semaphores = [(n, i) for n, i in SEMAPHORES.items() if n.startswith("in0")]
    in1_semaphores = [(n, i) for n, i in SEMAPHORES.items() if n.startswith("in1")]
    blocks = {
        "num_blocks_inner_dim": num_blocks,
        "num_blocks_w_dim": per_core_N // block_w,
        "num_blocks_h_dim": per_core_M // block_h,
    }
    edges = _edges(shape, config, tile(out.data_format))
    out_values = out_block_values(Mt, Nt, block_w, block_h, sub_w, sub_h)
    kernels = []

    # ---- in0 senders (left column): read A's block rows, multicast them along the row on NOC 1
    in0_block_num_tiles = block_h * in0_block_w
    in0_values = {
        "in0_tensor_stride_w": 1,
        "in0_tensor_stride_h": Kt,
        "in0_tensor_next_inner_dim_block_stride": in0_block_w,
        "in0_tensor_next_h_dim_block_stride": block_h * Kt,
        "in0_block_w": in0_block_w,
        "in0_block_h": block_h,
        "in0_block_num_tiles": in0_block_num_tiles,
        "in0_last_ktile_w": shape.in0_last_ktile_w,
        "in0_last_ktile_h": 0,
        "shard_width_in_tiles": 0,
        "shard_height_in_tiles": 0,
        **blocks,
        "in0_mcast_num_dests": cols - 1,
        "in0_mcast_num_cores": cols - 1,
        "MtKt": Mt * Kt,
        "in0_B": 1,
        "in1_B": 1,
        "in0_reuse_in_dfb": 0,
        "batchB": 0,
        "sparsity_pagesize": 0,
        "bcast_A": 1,
        "get_batch_from_reader": 0,
        "num_batch_compute": 0,
        "num_active": 0,
    }

    def in0_sender_args(y: int) -> list[int]:
        # NOC 1 multicasts from the far end of the row back to the core beside the sender.
        start, end = noc_xy(cols - 1, y), noc_xy(1, y)
        last_h = edges.last_block_h if y == rows - 1 else block_h
        return [per_core_M * Kt * y, start.x, start.y, end.x, end.y, last_h]

    kernels.append(
        pd.KernelDescriptor(
            kernel_source=wheel_kernel_path(IN0_SENDER),
            core_ranges=pd.CoreRangeSet([_core_range(0, 0, 0, rows - 1)]),
            compile_time_args=emu.tensor_accessor_args(a.page_size, True),
            defines=[("SKIP_MCAST", "1")] if cols == 1 else [],
            runtime_args=[(pd.CoreCoord(0, y), in0_sender_args(y)) for y in range(rows)],
            common_runtime_args=[a.address],
            config=data_movement(RISCV_1, NOC_1),
            bindings=pd.KernelBindingsDescriptor(
                runtime_args=list(IN0_SENDER_ARGS),
                compile_time_values=sorted(in0_values.items()),
                dataflow_buffers=[("in0", CBS["in0"])],
                semaphores=in0_semaphores,
                tensors=[pd.TensorBindingDescriptor("in0", 0, 0)],
            ),
        )
    )

    # ---- in0 receivers: the rest of each row, on NOC 1 left of the split and NOC 0 right of it
    receiver_values = {"in0_block_num_tiles": in0_block_num_tiles, **blocks, "batch": 1, "get_batch_from_reader": 0}
    for ranges, noc in ((in0_receivers, NOC_1), (other_noc_receivers, NOC_0)):
        cores = _cores_of(ranges)
        if not cores:
            continue
        kernels.append(
            pd.KernelDescriptor(
                kernel_source=wheel_kernel_path(IN0_RECEIVER),
                core_ranges=pd.CoreRangeSet(ranges),
                runtime_args=[(c, list(_xy(noc_xy(0, c.y)))) for c in cores],
                config=data_movement(RISCV_1, noc),
                bindings=pd.KernelBindingsDescriptor(
                    runtime_args=list(IN0_RECEIVER_ARGS),
                    compile_time_values=sorted(receiver_values.items()),
                    dataflow_buffers=[("in0", CBS["in0"])],
                    semaphores=in0_semaphores,
                ),
            )
        )

    # ---- in1 senders / writers (top row): read B's block columns, multicast them down the column on NOC 0
    in1_values = {
        **in1_block_values(Nt, in0_block_w, block_w),
        **blocks,
        "in1_mcast_num_dests": rows - 1,
        "in1_mcast_num_cores": rows - 1,
        "KtNt": Kt * Nt,
        "batch": 1,
        "bcast_B": 1,
        "batchB": 0,
        "sparsity_pagesize": 0,
        **out_values,
        "compact_output": 0,
        "num_active": 0,
    }
    out_accessor = emu.tensor_accessor_args(out.page_size, True)
    kernels.append(
        pd.KernelDescriptor(
            kernel_source=wheel_kernel_path(IN1_SENDER_WRITER),
            core_ranges=pd.CoreRangeSet([_core_range(0, 0, cols - 1, 0)]),
            compile_time_args=out_accessor + emu.tensor_accessor_args(b.page_size, True),
            defines=[("SKIP_MCAST", "1")] if rows == 1 else [],
            runtime_args=[
                (pd.CoreCoord(x, 0), _in1_sender_args(x, cols, rows, config, edges, noc_xy)) for x in range(cols)
            ],
            common_runtime_args=[out.address, b.address],
            config=data_movement(RISCV_0, NOC_0),
            bindings=pd.KernelBindingsDescriptor(
                runtime_args=list(IN1_WRITER_ARGS),
                compile_time_values=sorted(in1_values.items()),
                dataflow_buffers=[("in1", CBS["in1"]), ("out", CBS["out"])],
                semaphores=in1_semaphores,
                tensors=[
                    pd.TensorBindingDescriptor("out", 0, 0),
                    pd.TensorBindingDescriptor("in1", len(out_accessor), 1),
                ],
            ),
        )
    )

    # ---- in1 receivers / writers: the rest of each column, on NOC 0 left of the split and NOC 1 right of it
    in1_receiver_values = {"in1_block_num_tiles": block_w * in0_block_w, **blocks, "batch": 1, **out_values}
    for ranges, noc in ((in1_receivers, NOC_0), (other_noc_receivers, NOC_1)):
        cores = _cores_of(ranges)
        if not cores:
            continue
        kernels.append(
            pd.KernelDescriptor(
                kernel_source=wheel_kernel_path(IN1_RECEIVER_WRITER),
                core_ranges=pd.CoreRangeSet(ranges),
                compile_time_args=out_accessor,
                runtime_args=[(c, _in1_receiver_args(c, cols, rows, shape, config, edges, noc_xy)) for c in cores],
                common_runtime_args=[out.address],
                config=data_movement(RISCV_0, noc),
                bindings=pd.KernelBindingsDescriptor(
                    runtime_args=list(IN1_RECEIVER_WRITER_ARGS),
                    compile_time_values=sorted(in1_receiver_values.items()),
                    dataflow_buffers=[("in1", CBS["in1"]), ("out", CBS["out"])],
                    semaphores=in1_semaphores,
                    tensors=[pd.TensorBindingDescriptor("out", 0, 0)],
                ),
            )
        )

    # ---- compute (every core)
    compute_values = {
        "in0_block_w": in0_block_w,
        "in0_num_subblocks": block_h // sub_h,
        "in0_block_num_tiles": in0_block_num_tiles,
        "in0_subblock_num_tiles": sub_h * in0_block_w,
        "in1_num_subblocks": block_w // sub_w,
        "in1_block_num_tiles": block_w * in0_block_w,
        "in1_block_w": block_w,
        **blocks,
        "out_subblock_h": sub_h,
        "out_subblock_w": sub_w,
        "out_subblock_num_tiles": sub_h * sub_w,
        "batch": 1,
        "out_block_num_tiles": out_tiles,
        "untilize_out": 0,
        "get_batch_from_reader": 0,
        "bias_ntiles": block_w,  # named by the factory; read only with a fused bias
    }
    defines = [("PACKER_L1_ACC", "1")] if packer_l1_acc else []
    kernels.append(compute_kernel(all_cores, defines, compute_config, compute_values, CBS))
    return pd.ProgramDescriptor(kernels=kernels, semaphores=semaphores, cbs=cbs)


def _ours(config) -> MatmulMultiCoreReuseMultiCastProgramConfig:
    """ttnn's config object (whose block sizes may be None) as ours, the block sizes filled in."""
    return MatmulMultiCoreReuseMultiCastProgramConfig(
        compute_with_storage_grid_size=grid_xy(config.compute_with_storage_grid_size),
        in0_block_w=config.in0_block_w,
        out_subblock_h=config.out_subblock_h,
        out_subblock_w=config.out_subblock_w,
        per_core_M=config.per_core_M,
        per_core_N=config.per_core_N,
        out_block_h=getattr(config, "out_block_h", None),
        out_block_w=getattr(config, "out_block_w", None),
        transpose_mcast=bool(getattr(config, "transpose_mcast", False)),
        fused_activation=getattr(config, "fused_activation", None),
    )


def _cores_of(ranges: list[pd.CoreRange]) -> list[pd.CoreCoord]:
    return [
        pd.CoreCoord(x, y) for r in ranges for y in range(r.start.y, r.end.y + 1) for x in range(r.start.x, r.end.x + 1)
    ]


def _xy(c: pd.CoreCoord) -> tuple[int, int]:
    return c.x, c.y


def _in1_sender_args(x: int, cols: int, rows: int, config, edges: _Edges, noc_xy) -> list[int]:
    """Core (x, 0): B's columns from x * per_core_N, multicast down the column (NOC 0 runs top to bottom)."""
    start, end = noc_xy(x, 1), noc_xy(x, rows - 1)
    subblocks_w = config.out_block_w // config.out_subblock_w
    last = x == cols - 1
    return [
        config.per_core_N * x,
        start.x,
        start.y,
        end.x,
        end.y,
        config.per_core_N * x,
        edges.last_block_w if last else config.out_block_w,
        config.out_block_h // config.out_subblock_h,
        config.out_subblock_h,
        0,
        subblocks_w,
        edges.last_subblocks_w if last else subblocks_w,
        edges.last_subblock_w if last else config.out_subblock_w,
        edges.subblock_tiles_addr_skip if last else 0,
        edges.block_tiles_w_skip if last else 0,
        edges.last_blocks_w if last else config.per_core_N // config.out_block_w,
    ]


def _in1_receiver_args(
    core: pd.CoreCoord, cols: int, rows: int, shape: MatmulShape, config, edges: _Edges, noc_xy
) -> list[int]:
    """Core (x, y > 0): its output block, the bottom row's and right column's possibly padded."""
    x, y = core.x, core.y
    sender = noc_xy(x, 0)
    subblocks_h = config.out_block_h // config.out_subblock_h
    subblocks_w = config.out_block_w // config.out_subblock_w
    bottom, right = y == rows - 1, x == cols - 1
    h = (
        [subblocks_h, edges.last_subblocks_h, edges.last_subblock_h, edges.block_tiles_h_skip]
        if bottom
        else [subblocks_h, subblocks_h, config.out_subblock_h, 0]
    )
    w = (
        [
            subblocks_w,
            edges.last_subblocks_w,
            edges.last_subblock_w,
            edges.subblock_tiles_addr_skip,
            edges.block_tiles_w_skip,
        ]
        if right
        else [subblocks_w, subblocks_w, config.out_subblock_w, 0, 0]
    )
    num_blocks_h = edges.last_blocks_h if bottom else config.per_core_M // config.out_block_h
    num_blocks_w = edges.last_blocks_w if right else config.per_core_N // config.out_block_w
    start_tile = x * config.per_core_N + y * config.per_core_M * shape.Nt
    return [sender.x, sender.y, start_tile, *h, *w, num_blocks_h, num_blocks_w]


def _check_config(shape: MatmulShape, config, compute_config) -> None:
    if getattr(config, "transpose_mcast", False):
        raise ValueError("transpose_mcast=True (in0 multicast down columns) is not described")
    if getattr(config, "fused_activation", None) is not None:
        raise ValueError(f"a fused activation is not described, got {config.fused_activation!r}")
    if compute_config.fp32_dest_acc_en:
        raise ValueError("fp32_dest_acc_en=True (Float32 partials) is not described")
    for name in ("in0_block_w", "out_subblock_h", "out_subblock_w", "out_block_h", "out_block_w", "per_core_M"):
        if int(getattr(config, name)) < 1:
            raise ValueError(f"program config {name} must be >= 1, got {getattr(config, name)}")
    if int(config.per_core_N) < 1:
        raise ValueError(f"program config per_core_N must be >= 1, got {config.per_core_N}")
    if shape.Kt % config.in0_block_w:
        raise ValueError(f"Kt ({shape.Kt}) must be divisible by in0_block_w ({config.in0_block_w})")
    for block, sub, whole in (
        ("out_block_h", "out_subblock_h", "per_core_M"),
        ("out_block_w", "out_subblock_w", "per_core_N"),
    ):
        if getattr(config, whole) % getattr(config, block) or getattr(config, block) % getattr(config, sub):
            raise ValueError(
                f"{whole} ({getattr(config, whole)}) must be a multiple of {block} ({getattr(config, block)}), "
                f"and that of {sub} ({getattr(config, sub)})"
            )
    if config.out_subblock_h * config.out_subblock_w > 8:
        raise ValueError(
            f"an output subblock of {config.out_subblock_h}x{config.out_subblock_w} tiles does not fit the 8 DST tiles"
        )
    if shape.Mt % config.per_core_M and shape.Mt < config.per_core_M:
        raise ValueError(
            f"Mt ({shape.Mt}) is smaller than per_core_M ({config.per_core_M}): the one row of cores would write "
            "its padding rows (tt-metal pads only a bottom row below others)"
        )
