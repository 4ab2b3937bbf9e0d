"""tt-metal 0.81.1's 1D-multicast matmul program (mcast_in0), dense and sparse, as a ProgramDescriptor.

One program factory family serves ttnn.matmul / ttnn.linear with a
MatmulMultiCoreReuseMultiCast1DProgramConfig (`matmul_multicore_reuse_mcast_1d`) and ttnn.sparse_matmul
(`sparse_matmul_multicore_reuse_mcast_1d`). In 0.81.1 both build the Metal 2.0 forks of the matmul
kernels; their named arguments, binding ids, defines, processors and NOCs below were read off the real
runtime's builds on a mock Wormhole n150 (the JIT's generated kernel_args / kernel_bindings headers),
the rest (CB sizes, cores, runtime values) follows tt-metal's factory sources.

The output is split by columns: core i (row-major from (0, 0)) owns output tile columns
[i * per_core_N, (i + 1) * per_core_N) of every batch. Core (0, 0) reads each block of in0 (A, all Mt
rows x in0_block_w tiles) from DRAM and multicasts it to the other cores (the in0 sender; the others
run the in0 receiver); every core reads its own in1 (B) columns and writes its output tiles (the in1
sender/writer, whose in1 multicast is compiled out with SKIP_MCAST). The compute kernel accumulates over
K in the partials CB (packer L1 accumulation when more than one K block).

Sparse: the in0 sender and the in1 writer read the sparsity tensor page by page (one page per outer
batch, one bfloat16 flag per inner batch); a batch whose flag is 0 is neither multicast nor computed,
and without `nnz` the sender multicasts each batch's validity to the receivers, which hand it to the
compute kernel's three TRISCs through the mailboxes.
"""

from __future__ import annotations

from dataclasses import dataclass

from ttnn_moe._C import emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu.ttmetal.data_movement import NOC_0, NOC_1, RISCV_0, RISCV_1, data_movement
from ttnn_moe.emu.ttmetal.matmul_config import grid_xy, math_fidelity
from ttnn_moe.emu.ttmetal.wheel import wheel_kernel_path

KERNELS = "ttnn/cpp/ttnn/operations/matmul/device/kernels"
IN0_SENDER = f"{KERNELS}/dataflow/reader_bmm_tile_layout_in0_sender_padding_metal2.cpp"
IN0_RECEIVER = f"{KERNELS}/dataflow/reader_bmm_tile_layout_in0_receiver_metal2.cpp"
IN1_SENDER_WRITER = f"{KERNELS}/dataflow/reader_bmm_tile_layout_in1_sender_writer_padding_metal2.cpp"
COMPUTE = f"{KERNELS}/compute/bmm_large_block_zm_fused_bias_activation_metal2.cpp"
MCAST_INPUT_BUFFERING_DEPTH = 2  # in0 and in1 CBs double-buffer when there is more than one block
SEM_IN0_SENDER, SEM_IN0_RECEIVER = 0, 1
# Metal 2.0 numbers dataflow buffers in the factory's order of declaration.
DENSE_CBS = {"in0": 0, "in1": 1, "out": 2, "intermed0": 3}
SPARSE_CBS = {"in0": 0, "in1": 1, "sparsity": 2, "in1_sparsity": 3, "out": 4, "intermed0": 5}

IN0_SENDER_ARGS = (
    "in0_tensor_start_tile_id",
    "in0_mcast_dest_noc_start_x",
    "in0_mcast_dest_noc_start_y",
    "in0_mcast_dest_noc_end_x",
    "in0_mcast_dest_noc_end_y",
    "last_block_h",
)
IN0_RECEIVER_ARGS = ("in0_mcast_sender_noc_x", "in0_mcast_sender_noc_y")
IN1_WRITER_ARGS = (
    "in1_tensor_start_tile_id",
    "in1_mcast_dest_noc_start_x",
    "in1_mcast_dest_noc_start_y",
    "in1_mcast_dest_noc_end_x",
    "in1_mcast_dest_noc_end_y",
    "out_tensor_start_tile_id",
    "last_block_w",
    "out_num_nonzero_subblocks_h",
    "out_last_subblock_h",
    "padded_block_tiles_h_skip",
    "out_num_nonzero_subblocks_w",
    "out_last_num_nonzero_subblocks_w",
    "out_last_subblock_w",
    "padded_subblock_tiles_addr_skip",
    "padded_block_tiles_w_skip",
    "last_num_blocks_w_dim",
)


@dataclass(frozen=True)
class Operand:
    """What the program needs of a tensor: DRAM address, data format, page size (bytes)."""

    address: int
    data_format: pd.DataFormat
    page_size: int


@dataclass(frozen=True)
class Sparsity:
    """The sparse matmul's sparsity operand and how the kernels read it.

    batchA outer batches (one sparsity page each) by batchB inner batches (one flag each);
    bcast_A: only B is sparse (A's batches are an outer loop over every group of B);
    num_batch_compute: the batches the receivers and compute run (nnz, or every batch when the
    validity comes from the sender at run time: get_batch_from_reader)."""

    tensor: Operand
    bcast_A: bool
    get_batch_from_reader: bool
    num_batch_compute: int
    compact_output: bool


@dataclass(frozen=True)
class MatmulShape:
    """Tiles: Mt x Kt times Kt x Nt, batchA batches of A, batchB of B; in0_last_ktile_w: A's logical
    width modulo 32 (0: no padded K tile)."""

    Mt: int
    Kt: int
    Nt: int
    batchA: int
    batchB: int
    in0_last_ktile_w: int = 0


def in1_block_values(Nt: int, in0_block_w: int, block_w: int) -> dict[str, int]:
    """The in1 reader's named compile-time values for blocks of in0_block_w x block_w tiles of B (Kt x Nt)."""
    return {
        "in1_tensor_stride_w": 1,
        "in1_tensor_stride_h": Nt,
        "in1_tensor_next_block_stride": in0_block_w * Nt,
        "in1_tensor_next_w_dim_block_stride": block_w,
        "in1_block_w": block_w,
        "in1_block_h": in0_block_w,
        "in1_block_num_tiles": block_w * in0_block_w,
    }


def out_block_values(Mt: int, Nt: int, block_w: int, block_h: int, sub_w: int, sub_h: int) -> dict[str, int]:
    """The output writer's named compile-time values for block_h x block_w blocks of sub_h x sub_w subblocks."""
    return {
        "out_tensor_stride_w": 1,
        "out_tensor_stride_h": Nt,
        "out_tensor_next_subblock_stride_w": sub_w,
        "out_tensor_next_subblock_stride_h": sub_h * Nt,
        "out_tensor_next_w_dim_block_stride": block_w,
        "out_tensor_next_h_dim_block_stride": block_h * Nt,
        "out_subblock_w": sub_w,
        "out_subblock_h": sub_h,
        "out_subblock_tile_count": sub_w * sub_h,
        "MtNt": Mt * Nt,
    }


def _tile_bytes(fmt: pd.DataFormat) -> int:
    return pd.tile_size_bytes(fmt)


def _cores(count: int, grid_x: int) -> list[pd.CoreCoord]:
    return [pd.CoreCoord(i % grid_x, i // grid_x) for i in range(count)]


def _range_set(cores: list[pd.CoreCoord]) -> pd.CoreRangeSet:
    return pd.CoreRangeSet([pd.CoreRange(c, c) for c in cores])


def _bounding_box(cores: list[pd.CoreCoord]) -> tuple[pd.CoreCoord, pd.CoreCoord]:
    xs, ys = [c.x for c in cores], [c.y for c in cores]
    return pd.CoreCoord(min(xs), min(ys)), pd.CoreCoord(max(xs), max(ys))


def mcast_in0_program(
    device,
    shape: MatmulShape,
    config,
    compute_config,
    a: Operand,
    b: Operand,
    out: Operand,
    sparsity: Sparsity | None = None,
) -> pd.ProgramDescriptor:
    """The 1D mcast_in0 matmul of `a` (batchA x Mt x Kt tiles) by `b` (batchB x Kt x Nt tiles) into `out`.

    `device` gives the NOC coordinates of the cores; `config` is a MatmulMultiCoreReuseMultiCast1DProgramConfig
    (ttnn's or ours), `compute_config` a WormholeComputeKernelConfig."""
    Mt, Kt, Nt = shape.Mt, shape.Kt, shape.Nt
    grid_x, grid_y = grid_xy(config.compute_with_storage_grid_size)
    in0_block_w, per_core_M, per_core_N = config.in0_block_w, config.per_core_M, config.per_core_N
    out_block_h, out_block_w = config.out_block_h, config.out_block_w
    out_subblock_h, out_subblock_w = config.out_subblock_h, config.out_subblock_w
    _check_config(shape, config, compute_config, (grid_x, grid_y))

    num_blocks = Kt // in0_block_w
    packer_l1_acc = bool(compute_config.packer_l1_acc) and num_blocks > 1
    # Partials pack at bfloat16 when they accumulate in L1, else straight in the output's format.
    interm_format = pd.DataFormat.Float16_b if packer_l1_acc else out.data_format
    num_blocks_x = -(-Nt // per_core_N)
    num_cores = num_blocks_x
    cores = _cores(num_cores, grid_x)
    box_start, box_end = _bounding_box(cores)
    box_cores = (box_end.x - box_start.x + 1) * (box_end.y - box_start.y + 1)
    if box_cores != num_cores:
        raise ValueError(
            f"the matmul's {num_cores} output column blocks (Nt {Nt} / per_core_N {per_core_N}) do not fill a "
            f"rectangle of the {grid_x}x{grid_y} grid: in0's multicast would reach cores without work"
        )
    chip = device.get_devices()[0]
    top_left = chip.worker_core_from_logical_core(box_start)
    bottom_right = chip.worker_core_from_logical_core(box_end)
    # The in0 sender multicasts on NOC 1, which runs from the bottom-right corner to the top-left.
    mcast_start, mcast_end = bottom_right, top_left

    cb_ids = SPARSE_CBS if sparsity else DENSE_CBS
    batches = shape.batchA * (shape.batchB if sparsity else 1)
    depth = MCAST_INPUT_BUFFERING_DEPTH if batches * num_blocks > 1 else 1
    all_cores = _range_set(cores)

    def cb(name: str, fmt: pd.DataFormat, page: int, pages: int, also: tuple[str, pd.DataFormat] | None = None):
        formats = [pd.CBFormatDescriptor(buffer_index=cb_ids[name], data_format=fmt, page_size=page)]
        if also is not None:
            formats.append(pd.CBFormatDescriptor(buffer_index=cb_ids[also[0]], data_format=also[1], page_size=page))
        return pd.CBDescriptor(total_size=page * pages, core_ranges=all_cores, format_descriptors=formats)

    out_tiles = out_block_h * out_block_w
    cbs = [
        cb("in0", a.data_format, _tile_bytes(a.data_format), out_block_h * in0_block_w * depth),
        cb("in1", b.data_format, _tile_bytes(b.data_format), out_block_w * in0_block_w * depth),
    ]
    if sparsity:
        page = sparsity.tensor.page_size
        cbs += [
            cb("sparsity", sparsity.tensor.data_format, page, 1),
            cb("in1_sparsity", sparsity.tensor.data_format, page, 1),
        ]
    if interm_format == out.data_format:  # the partials and the output share one L1 region
        cbs.append(
            cb("out", out.data_format, _tile_bytes(out.data_format), out_tiles, also=("intermed0", interm_format))
        )
    else:
        cbs.append(cb("out", out.data_format, _tile_bytes(out.data_format), out_tiles))
        cbs.append(cb("intermed0", interm_format, _tile_bytes(interm_format), out_tiles))

    semaphores = [
        pd.SemaphoreDescriptor(id=i, core_type=pd.CoreType.WORKER, core_ranges=all_cores, initial_value=0)
        for i in (SEM_IN0_SENDER, SEM_IN0_RECEIVER)
    ]
    in0_semaphores = [("in0_mcast_sender", SEM_IN0_SENDER), ("in0_mcast_receiver", SEM_IN0_RECEIVER)]
    # in0 issues on NOC 1, in1 on NOC 0; the sparse factory runs in0 on RISCV_0, the dense one on RISCV_1.
    in0_cfg = data_movement(RISCV_0 if sparsity else RISCV_1, NOC_1)
    in1_cfg = data_movement(RISCV_1 if sparsity else RISCV_0, NOC_0)
    blocks = {"num_blocks_inner_dim": num_blocks, "num_blocks_w_dim": per_core_N // out_block_w}
    blocks["num_blocks_h_dim"] = per_core_M // out_block_h
    batch_compute = sparsity.num_batch_compute if sparsity else shape.batchA
    from_reader = int(bool(sparsity and sparsity.get_batch_from_reader))

    # ---- in0 sender (core (0, 0)) and receivers
    in0_block_num_tiles = out_block_h * in0_block_w
    sender_values = {
        "in0_tensor_stride_w": 1,
        "in0_tensor_stride_h": Kt,
        "in0_tensor_next_inner_dim_block_stride": in0_block_w,
        "in0_tensor_next_h_dim_block_stride": out_block_h * Kt,
        "in0_block_w": in0_block_w,
        "in0_block_h": out_block_h,
        "in0_block_num_tiles": in0_block_num_tiles,
        "in0_last_ktile_w": shape.in0_last_ktile_w,
        "in0_last_ktile_h": 0,
        "shard_width_in_tiles": 0,
        "shard_height_in_tiles": 0,
        **blocks,
        "in0_mcast_num_dests": num_cores - 1,
        "in0_mcast_num_cores": box_cores - 1,
        "MtKt": Mt * Kt,
        "in0_B": shape.batchA,
        "in1_B": shape.batchA,
        "in0_reuse_in_dfb": 0,
        "batchB": shape.batchB if sparsity else 0,
        "bcast_A": int(sparsity.bcast_A) if sparsity else 1,
        "get_batch_from_reader": from_reader,
        "num_active": 0,
    }
    sender_tensors = [pd.TensorBindingDescriptor("in0", 0, 0)]
    sender_ct = emu.tensor_accessor_args(a.page_size, True)
    sender_common = [a.address]
    sender_dfbs = [("in0", cb_ids["in0"])]
    sender_defines = {"SKIP_MCAST": "1"} if num_cores == 1 else {}
    if sparsity:
        sender_values["sparsity_pagesize"] = sparsity.tensor.page_size
        sender_values["num_batch_compute"] = sparsity.num_batch_compute
        sender_tensors.append(pd.TensorBindingDescriptor("sparsity", len(sender_ct), 1))
        sender_ct = sender_ct + emu.tensor_accessor_args(sparsity.tensor.page_size, True)
        sender_common.append(sparsity.tensor.address)
        sender_dfbs.append(("sparsity", cb_ids["sparsity"]))
        sender_defines["SPARSITY"] = "1"
    sender = pd.KernelDescriptor(
        kernel_source=wheel_kernel_path(IN0_SENDER),
        core_ranges=_range_set(cores[:1]),
        compile_time_args=sender_ct,
        defines=sorted(sender_defines.items()),
        runtime_args=[(cores[0], [0, mcast_start.x, mcast_start.y, mcast_end.x, mcast_end.y, out_block_h])],
        common_runtime_args=sender_common,
        config=in0_cfg,
        bindings=pd.KernelBindingsDescriptor(
            runtime_args=list(IN0_SENDER_ARGS),
            compile_time_values=sorted(sender_values.items()),
            dataflow_buffers=sender_dfbs,
            semaphores=in0_semaphores,
            tensors=sender_tensors,
        ),
    )
    kernels = [sender]
    if num_cores > 1:
        receiver_values = {"in0_block_num_tiles": in0_block_num_tiles, **blocks, "batch": batch_compute}
        receiver_values["get_batch_from_reader"] = from_reader
        kernels.append(
            pd.KernelDescriptor(
                kernel_source=wheel_kernel_path(IN0_RECEIVER),
                core_ranges=_range_set(cores[1:]),
                runtime_args=[(c, [top_left.x, top_left.y]) for c in cores[1:]],
                config=in0_cfg,
                bindings=pd.KernelBindingsDescriptor(
                    runtime_args=list(IN0_RECEIVER_ARGS),
                    compile_time_values=sorted(receiver_values.items()),
                    dataflow_buffers=[("in0", cb_ids["in0"])],
                    semaphores=in0_semaphores,
                ),
            )
        )

    # ---- in1 sender / output writer (every core)
    writer_values = {
        **in1_block_values(Nt, in0_block_w, out_block_w),
        **blocks,
        "in1_mcast_num_dests": 0,
        "in1_mcast_num_cores": 0,
        "KtNt": Kt * Nt,
        "batch": shape.batchA,
        "bcast_B": 1,
        "batchB": shape.batchB if sparsity else 0,
        **out_block_values(Mt, Nt, out_block_w, out_block_h, out_subblock_w, out_subblock_h),
        "compact_output": int(bool(sparsity and sparsity.compact_output)),
        "num_active": 0,
    }
    writer_ct = emu.tensor_accessor_args(b.page_size, True)
    writer_tensors = [pd.TensorBindingDescriptor("in1", 0, 0)]
    writer_common = [b.address]
    writer_dfbs = [("in1", cb_ids["in1"]), ("out", cb_ids["out"])]
    writer_defines = {"SKIP_MCAST": "1"}
    if sparsity:
        writer_values["sparsity_pagesize"] = sparsity.tensor.page_size
        writer_tensors.append(pd.TensorBindingDescriptor("sparsity", len(writer_ct), len(writer_common)))
        writer_ct = writer_ct + emu.tensor_accessor_args(sparsity.tensor.page_size, True)
        writer_common.append(sparsity.tensor.address)
        writer_dfbs.append(("sparsity", cb_ids["in1_sparsity"]))
        writer_defines["SPARSITY"] = "1"
    writer_tensors.append(pd.TensorBindingDescriptor("out", len(writer_ct), len(writer_common)))
    writer_ct = writer_ct + emu.tensor_accessor_args(out.page_size, True)
    writer_common.append(out.address)
    kernels.append(
        pd.KernelDescriptor(
            kernel_source=wheel_kernel_path(IN1_SENDER_WRITER),
            core_ranges=all_cores,
            compile_time_args=writer_ct,
            defines=sorted(writer_defines.items()),
            runtime_args=[(c, _writer_args(i, Nt, config, out.data_format)) for i, c in enumerate(cores)],
            common_runtime_args=writer_common,
            config=in1_cfg,
            bindings=pd.KernelBindingsDescriptor(
                runtime_args=list(IN1_WRITER_ARGS),
                compile_time_values=sorted(writer_values.items()),
                dataflow_buffers=writer_dfbs,
                semaphores=[("in1_mcast_sender", SEM_IN0_SENDER), ("in1_mcast_receiver", SEM_IN0_RECEIVER)],
                tensors=writer_tensors,
            ),
        )
    )

    # ---- compute (every core)
    compute_values = {
        "in0_block_w": in0_block_w,
        "in0_num_subblocks": out_block_h // out_subblock_h,
        "in0_block_num_tiles": in0_block_num_tiles,
        "in0_subblock_num_tiles": out_subblock_h * in0_block_w,
        "in1_num_subblocks": out_block_w // out_subblock_w,
        "in1_block_num_tiles": out_block_w * in0_block_w,
        "in1_block_w": out_block_w,
        **blocks,
        "out_subblock_h": out_subblock_h,
        "out_subblock_w": out_subblock_w,
        "out_subblock_num_tiles": out_subblock_h * out_subblock_w,
        "batch": batch_compute,
        "out_block_num_tiles": out_tiles,
        "untilize_out": 0,
        "get_batch_from_reader": from_reader,
    }
    compute_defines = {"PACKER_L1_ACC": "1"} if packer_l1_acc else {}
    if sparsity:
        compute_defines["FUSE_ACTIVATION"] = "0"
    else:
        compute_values["bias_ntiles"] = out_block_w  # the dense factory names it; read only with a fused bias
    kernels.append(compute_kernel(all_cores, sorted(compute_defines.items()), compute_config, compute_values, cb_ids))
    return pd.ProgramDescriptor(kernels=kernels, semaphores=semaphores, cbs=cbs)


def compute_kernel(
    cores: pd.CoreRangeSet, defines: list, compute_config, compute_values: dict[str, int], cb_ids: dict[str, int]
) -> pd.KernelDescriptor:
    """The bmm compute kernel both multicast matmul programs run (fp32 accumulation off, as their factories set)."""
    return pd.KernelDescriptor(
        kernel_source=wheel_kernel_path(COMPUTE),
        core_ranges=cores,
        defines=defines,
        config=pd.ComputeConfigDescriptor(
            math_fidelity=math_fidelity(compute_config),
            fp32_dest_acc_en=False,
            dst_full_sync_en=bool(compute_config.dst_full_sync_en),
            math_approx_mode=bool(compute_config.math_approx_mode),
        ),
        bindings=pd.KernelBindingsDescriptor(
            compile_time_values=sorted(compute_values.items()),
            dataflow_buffers=[(n, cb_ids[n]) for n in ("in0", "in1", "out", "intermed0")],
        ),
    )


def _writer_args(i: int, Nt: int, config, out_format: pd.DataFormat) -> list[int]:
    """The in1 sender/writer's runtime args of output column block i: the last block may be narrower."""
    per_core_N, out_block_w = config.per_core_N, config.out_block_w
    out_subblock_h, out_subblock_w = config.out_subblock_h, config.out_subblock_w
    num_blocks_x = -(-Nt // per_core_N)
    last_x = i == num_blocks_x - 1
    subblocks_w = out_block_w // out_subblock_w
    args = {
        "in1_tensor_start_tile_id": per_core_N * i,
        "out_tensor_start_tile_id": per_core_N * i,
        "last_block_w": out_block_w,
        "out_num_nonzero_subblocks_h": config.out_block_h // out_subblock_h,
        "out_last_subblock_h": out_subblock_h,
        "out_num_nonzero_subblocks_w": subblocks_w,
        "out_last_num_nonzero_subblocks_w": subblocks_w,
        "out_last_subblock_w": out_subblock_w,
        "last_num_blocks_w_dim": per_core_N // out_block_w,
    }
    if last_x:
        last_per_core_N = Nt % per_core_N or per_core_N
        last_block_w = last_per_core_N % out_block_w or out_block_w
        last_subblocks_w = -(-last_block_w // out_subblock_w)
        last_subblock_w = last_block_w % out_subblock_w or out_subblock_w
        args.update(
            {
                "last_block_w": last_block_w,
                "out_last_num_nonzero_subblocks_w": last_subblocks_w,
                "out_last_subblock_w": last_subblock_w,
                "padded_subblock_tiles_addr_skip": _tile_bytes(out_format) * (out_subblock_w - last_subblock_w),
                "padded_block_tiles_w_skip": out_subblock_w * out_subblock_h * (subblocks_w - last_subblocks_w),
                "last_num_blocks_w_dim": -(-last_per_core_N // out_block_w),
            }
        )
    return [args.get(name, 0) for name in IN1_WRITER_ARGS]


def _check_config(shape: MatmulShape, config, compute_config, grid: tuple[int, int]) -> None:
    if not getattr(config, "mcast_in0", True):
        raise ValueError("only mcast_in0=True is described (in1 multicast from a column of senders is not)")
    if getattr(config, "fused_activation", None) is not None:
        raise ValueError(f"a fused activation is not described, got {config.fused_activation!r}")
    if compute_config.fp32_dest_acc_en:
        raise ValueError("fp32_dest_acc_en=True (Float32 partials) is not described")
    positive = ("in0_block_w", "out_subblock_h", "out_subblock_w", "out_block_h", "out_block_w", "per_core_M")
    for name in (*positive, "per_core_N"):
        if int(getattr(config, name)) < 1:
            raise ValueError(f"program config {name} must be >= 1, got {getattr(config, name)}")
    if shape.Kt % config.in0_block_w:
        raise ValueError(f"Kt ({shape.Kt}) must be divisible by in0_block_w ({config.in0_block_w})")
    if shape.Mt > config.per_core_M:
        raise ValueError(
            f"mcast_in0 multicasts all of A's {shape.Mt} tile rows: per_core_M must be >= Mt, got {config.per_core_M}"
        )
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
    cores = -(-shape.Nt // config.per_core_N)
    if cores > grid[0] * grid[1]:
        raise ValueError(
            f"{cores} output column blocks (Nt {shape.Nt} / per_core_N {config.per_core_N}) exceed the "
            f"{grid[0]}x{grid[1]} grid"
        )
