"""ttnn.experimental.deepseek_moe_fast_reduce_nc_fused (tt-metal 0.81.1) on the emulator, with its own kernels.

The weighted expert sum of tt-metal's optimized DeepSeek-V3 decode path: the activations (rank 4, TILE, bfloat16
or bfloat8_b, typically [K, 1, tokens, hidden] with the K expert slots on `reduce_dim`) are multiplied by each
token's score of each slot and summed over `reduce_dim`; the result, with that dim kept as 1, is split on the
last dim into `hidden // split_size` tensors of width `split_size`:

    outputs = deepseek_moe_fast_reduce_nc_fused(input, expert_indices, expert_mapping, reduce_dim,
                                                split_size=..., cluster_axis=..., output_memory_config=...,
                                                scores_tensor=..., num_shared_experts=0, shared_expert_scale=1.0,
                                                compute_kernel_config=None)

    outputs[s][.., t, c] = sum_e input[e, .., t, s * split_size + c] * w[e, t]

with w[e, t] = scores[t, 0, 0, e] for the routed slots e < K - num_shared_experts whose expert
(expert_indices[t, e]) lives on this device's cluster axis (its owner expert_mapping[row, expert], a linearized
device id, in this device's mesh column for cluster_axis 0, its mesh row for 1; row 0 of a one-row mapping, else
this device's row), 0 for the other routed slots, and shared_expert_scale (cut to bf16 by dropping the low 16
bits of its float32, as the factory does) for the trailing shared slots. Without scores_tensor it is
deepseek_moe_fast_reduce_nc (the indices, mapping and cluster axis unused).

`fused_program` builds what the factory (deepseek_moe_fast_reduce_nc_fused_program_factory.cpp) builds for a mesh
coordinate: the unfused op's work split and writer; a reader that first copies the whole indices and mapping
tensors and the scores' token rows into L1, writes one bf16 score tile per (row tile, slot) (column 0: the 32
tokens' weights, broadcast across columns by the compute kernel) into c_1 and then streams the activation tiles of
each output tile into c_0 in groups of `input_granularity`; a compute kernel that multiplies every slot's
activation tile by its score tile (mul_tiles_bcast_cols) into one DST tile, accumulating as the FPU's ELWMUL
does (Dst += A * B), and packs it to c_16. The default compute config is Wormhole's HiFi4 with fp32 DST
accumulation (the op's default), so each output is the fp32 sum of exact bf16 products rounded once.
Interleaved tensors only (DRAM or L1).
"""

from __future__ import annotations

import math
import struct

from ttnn_moe._C import program as pd
from ttnn_moe.emu.device import MeshDevice
from ttnn_moe.emu.generic_op import generic_op, last_run_counters
from ttnn_moe.emu.tensor import Tensor, allocate_tensor_on_device
from ttnn_moe.emu.ttmetal import ccl_common as ccl
from ttnn_moe.emu.ttmetal import deepseek_moe_fast_reduce_nc as unfused
from ttnn_moe.emu.ttmetal.matmul_config import WormholeComputeKernelConfig
from ttnn_moe.emu.ttmetal.profiling import record_op
from ttnn_moe.emu.ttmetal.wheel import use_kernel_library_includes
from ttnn_moe.emu.ttmetal.work_split import core_range_set, split_work_to_cores
from ttnn_moe.emu.types import (
    DRAM_MEMORY_CONFIG,
    ROW_MAJOR_LAYOUT,
    TensorMemoryLayout,
    bfloat16,
    uint16,
)

_OP = "deepseek_moe_fast_reduce_nc_fused"
KERNELS = "ttnn/cpp/ttnn/operations/experimental/reduction/deepseek_moe_fast_reduce_nc_fused/device/kernels"
READER = f"{KERNELS}/deepseek_moe_fast_reduce_nc_fused_reader.cpp"
COMPUTE = f"{KERNELS}/deepseek_moe_fast_reduce_nc_fused_compute.cpp"
CB_ACT, CB_SCORES, CB_SCORES_RM, CB_INDICES, CB_MAPPING = 0, 1, 2, 3, 4
CB_OUTPUT = unfused.CB_OUTPUT
TILE = unfused.TILE


def bf16_bits_truncated(value: float) -> int:
    """The factory's float -> bf16: the upper 16 bits of the float32 (no rounding)."""
    return struct.unpack("<I", struct.pack("<f", value))[0] >> 16


def _l1_page(tensor: Tensor) -> int:
    """A CB page holding one of the tensor's pages: its aligned page size, rounded up to the L1 alignment."""
    aligned = ccl.align(int(tensor.page_size), int(tensor.to_arg().alignment))
    return ccl.align(aligned, ccl.L1_ALIGNMENT)


def fused_program(
    input_tensor: Tensor,
    scores: Tensor,
    indices: Tensor,
    mapping: Tensor,
    outputs: list[Tensor],
    dim: int,
    cluster_axis: int,
    num_shared_experts: int,
    shared_expert_scale: float,
    coord: tuple[int, int],
    mesh_cols: int,
    grid: tuple[int, int],
    compute_config: WormholeComputeKernelConfig,
) -> pd.ProgramDescriptor:
    """The program of the device at mesh coordinate `coord` (row, col) of a mesh `mesh_cols` wide."""
    shape = [int(v) for v in input_tensor.padded_shape]
    reduced = shape[dim]
    inner_tiles = math.prod(shape[dim + 1 :]) // (TILE * TILE)
    input_wt = shape[-1] // TILE
    output_tiles = math.prod(shape) // (TILE * TILE) // reduced
    granularity = unfused.input_granularity(reduced)
    num_tokens = int(scores.shape[0])
    num_row_tiles = -(-num_tokens // TILE)
    split = split_work_to_cores(grid, output_tiles, row_major=True)
    num_cores = len(split)
    cores = core_range_set([core for core, _, _ in split])
    in_page = int(input_tensor.page_size)
    score_tile = pd.tile_size_bytes(bfloat16.data_format)
    scores_cb_page, indices_cb_page, mapping_cb_page = (_l1_page(t) for t in (scores, indices, mapping))

    reader_ct = [
        CB_ACT, CB_SCORES, CB_SCORES_RM, in_page, int(scores.page_size), score_tile, num_cores, granularity, dim,
        reduced, inner_tiles, inner_tiles * reduced, num_tokens, num_row_tiles * TILE, scores_cb_page,
        int(indices.page_size), int(mapping.page_size), cluster_axis, CB_INDICES, CB_MAPPING, indices_cb_page,
        mapping_cb_page, int(indices.num_pages), int(mapping.num_pages), mesh_cols, num_shared_experts,
        bf16_bits_truncated(shared_expert_scale),
    ]  # fmt: skip
    for t in (input_tensor, scores, indices, mapping):
        reader_ct += unfused.accessor_args(t)
    addresses = [t.buffer_address() for t in (input_tensor, scores)]
    reader_rt = [
        (core, [*addresses, i, i + n * num_cores, *coord, indices.buffer_address(), mapping.buffer_address()])
        for i, (core, n, _) in enumerate(split)
    ]
    kernels = [
        unfused.data_movement_kernel(READER, cores, reader_ct, reader_rt, pd.ReaderConfigDescriptor()),
        unfused.writer_kernel(outputs, split, input_wt),
        *unfused.compute_kernels(
            COMPUTE,
            split,
            lambda n: [n, reduced, granularity, CB_ACT, CB_SCORES, CB_OUTPUT, num_cores, input_wt, num_row_tiles],
            compute_config,
            start_tile_arg=True,
        ),
    ]

    def cb(index: int, pages: int, page: int, fmt) -> pd.CBDescriptor:
        return pd.CBDescriptor(pages * page, cores, [pd.CBFormatDescriptor(index, fmt, page)])

    cbs = [
        cb(CB_ACT, 2 * granularity, in_page, input_tensor.dtype.data_format),
        cb(CB_SCORES, num_row_tiles * reduced, score_tile, scores.dtype.data_format),
        cb(CB_SCORES_RM, num_tokens, scores_cb_page, scores.dtype.data_format),
        cb(CB_INDICES, int(indices.num_pages), indices_cb_page, indices.dtype.data_format),
        cb(CB_MAPPING, int(mapping.num_pages), mapping_cb_page, mapping.dtype.data_format),
        cb(CB_OUTPUT, 2, int(outputs[0].page_size), outputs[0].dtype.data_format),
    ]
    return pd.ProgramDescriptor(kernels=kernels, cbs=cbs)


def _check_fused_args(input_tensor, scores, indices, mapping, dim, cluster_axis, num_shared_experts, num_devices):
    rank = len(input_tensor.padded_shape)
    if rank != 4:
        raise ValueError(f"{_OP}: the input must be rank 4 with scores, got rank {rank}")
    if isinstance(cluster_axis, bool) or cluster_axis not in (0, 1):
        raise ValueError(f"{_OP}: cluster_axis must be 0 or 1, got {cluster_axis!r}")
    for name, t, dtype in (("scores_tensor", scores, bfloat16), ("expert_indices_tensor", indices, uint16),
                           ("expert_mapping_tensor", mapping, uint16)):  # fmt: skip
        if not isinstance(t, Tensor):
            raise TypeError(f"{_OP}: {name} must be an emulator Tensor, got {type(t).__name__}")
        if t.dtype != dtype or t.layout != ROW_MAJOR_LAYOUT:
            raise ValueError(f"{_OP}: {name} must be a {dtype.name} ROW_MAJOR tensor, got {t.dtype.name} "
                             f"{t.layout.name}")  # fmt: skip
        if t.memory_config().memory_layout is not TensorMemoryLayout.INTERLEAVED:
            raise ValueError(f"{_OP}: {name} must be interleaved (DRAM or L1), got {t.memory_config()}")
    reduced = int(input_tensor.padded_shape[dim])
    if isinstance(num_shared_experts, bool) or not isinstance(num_shared_experts, int):
        raise ValueError(f"{_OP}: num_shared_experts must be an int, got {num_shared_experts!r}")
    if not 0 <= num_shared_experts <= reduced:
        raise ValueError(f"{_OP}: num_shared_experts ({num_shared_experts}) must be between 0 and the reduced dim's "
                         f"size ({reduced})")  # fmt: skip
    routed = reduced - num_shared_experts
    if len(scores.shape) != 4 or int(scores.shape[-1]) != routed:
        raise ValueError(f"{_OP}: scores_tensor must be [tokens, 1, 1, {routed}] (the routed slots: reduced dim "
                         f"{reduced} - num_shared_experts {num_shared_experts}), got {list(scores.shape)}")  # fmt: skip
    rows = int(input_tensor.padded_shape[-2])
    tokens = int(scores.shape[0])
    if int(scores.shape[1]) * int(scores.shape[2]) != 1 or not rows - TILE < tokens <= rows:
        raise ValueError(f"{_OP}: scores_tensor {list(scores.shape)} must hold one row per token, between "
                         f"{rows - TILE + 1} and {rows} tokens (the rows of the input's last row tile)")  # fmt: skip
    if int(indices.num_pages) < tokens or int(indices.page_size) < 2 * routed:
        raise ValueError(f"{_OP}: expert_indices_tensor {list(indices.shape)} must hold a row of {routed} expert "
                         f"ids for each of the {tokens} tokens")  # fmt: skip
    if int(mapping.num_pages) not in (1, num_devices):
        raise ValueError(f"{_OP}: expert_mapping_tensor {list(mapping.shape)} must have one row (replicated) or "
                         f"one per device ({num_devices}), each mapping expert ids to device ids")  # fmt: skip


def deepseek_moe_fast_reduce_nc_fused(
    input_tensor: Tensor,
    expert_indices_tensor: Tensor,
    expert_mapping_tensor: Tensor,
    reduce_dim: int,
    *,
    split_size: int,
    cluster_axis: int,
    output_memory_config=DRAM_MEMORY_CONFIG,
    scores_tensor: Tensor | None = None,
    num_shared_experts: int = 0,
    shared_expert_scale: float = 1.0,
    compute_kernel_config: WormholeComputeKernelConfig | None = None,
) -> list[Tensor]:
    """ttnn.experimental.deepseek_moe_fast_reduce_nc_fused's signature (0.81.1); see the module docstring."""
    if scores_tensor is None:
        return unfused.deepseek_moe_fast_reduce_nc(
            input_tensor, reduce_dim, split_size=split_size, output_memory_config=output_memory_config,
            compute_kernel_config=compute_kernel_config,
        )  # fmt: skip
    dim, num_outputs = unfused.check_args(input_tensor, reduce_dim, split_size, _OP)
    unfused.check_interleaved(input_tensor, output_memory_config, _OP)
    device = input_tensor.device()
    rows, cols = (int(v) for v in device.shape) if isinstance(device, MeshDevice) else (1, 1)
    _check_fused_args(input_tensor, scores_tensor, expert_indices_tensor, expert_mapping_tensor, dim, cluster_axis,
                      num_shared_experts, rows * cols)  # fmt: skip
    out_shape = [1 if i == dim else int(v) for i, v in enumerate(input_tensor.shape)]
    out_shape[-1] = int(input_tensor.padded_shape[-1]) // num_outputs
    outputs = [
        allocate_tensor_on_device(out_shape, input_tensor.dtype, unfused.TILE_LAYOUT, device, output_memory_config)
        for _ in range(num_outputs)
    ]
    grid = device.compute_with_storage_grid_size()
    config = compute_kernel_config or unfused.DEFAULT_COMPUTE_CONFIG
    program = ccl.per_device_programs(
        rows,
        cols,
        lambda row, col: fused_program(
            input_tensor,
            scores_tensor,
            expert_indices_tensor,
            expert_mapping_tensor,
            outputs,
            dim,
            cluster_axis,
            num_shared_experts,
            float(shared_expert_scale),
            (row, col),
            cols,
            (grid.x, grid.y),
            config,
        ),  # fmt: skip
    )
    use_kernel_library_includes()
    inputs = [input_tensor, scores_tensor, expert_indices_tensor, expert_mapping_tensor]
    generic_op([*inputs, *outputs], program)
    record_op(_OP, inputs, outputs, program, last_run_counters())
    return outputs
