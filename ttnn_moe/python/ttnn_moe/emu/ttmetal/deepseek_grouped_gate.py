"""ttnn.experimental.deepseek_grouped_gate as tt-metal 0.81.1 builds it, its kernels unmodified from the wheel.

    deepseek_grouped_gate(scores, bias, *, n_groups=8, summed_experts_per_group=2, topk_groups=4,
                          n_activated_experts=8, route_scale=1.0, epsilon=1e-20, memory_config=None)
        -> (weights, indices)

scores and bias: the gate's logits and a bias of the same shape [..., S, 256], bfloat16 TILE in DRAM (the
bias is a full tensor, broadcast by the caller). weights [..., S, 8] bfloat16 and indices [..., S, 8] uint16,
TILE. Per token: sigmoid of the scores, plus the bias; the 256 experts in 8 groups of 32, a group scored by
the sum of its 2 best biased scores, the 4 best groups kept, the 8 best biased scores of their experts chosen
(best first); weights = the chosen unbiased sigmoid scores / (their sum + epsilon) * route_scale. The op
accepts exactly these counts (8, 2, 4, 8 and 256 experts), as its validation does.

The program (our reading of the factory's create_descriptor): row tiles of 32 tokens split over the grid
(split_work_to_cores, column-major), each core running three kernels over its range
(`experimental/reduction/deepseek_grouped_gate/device/kernels/`):
- reader: per row tile, the 8 score tiles and 8 bias tiles, one pair at a time;
- compute: sigmoid -> + bias -> per-group bitonic sort (transposed tiles, topk_local_sort) -> sum of the
  2 best (add_tiles accumulating onto DST) -> group order (topk_local_sort) -> top-32 over the 4 winning
  groups' tiles (topk_merge / topk_rebuild) -> the 8 chosen sigmoid scores' row sum (reduce, scaler 1 on
  the first 8 columns) + epsilon -> reciprocal -> times the scores -> times route_scale;
- writer: builds the expert / group index tiles and the scalar tiles, moves the sorted group rows and the
  winning groups' rows between CBs with L1-to-L1 NOC reads, gathers the chosen sigmoid scores, and writes
  both output tiles.
Compute config: fp32_dest_acc_en off (the factory needs a 16-bit DST for the uint16 index tiles), HiFi4.
Every CB is one bfloat16 tile page (2048 B) or a UInt16 one; the counts are the factory's.
"""

from __future__ import annotations

import torch

from ttnn_moe._C import emu as _emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu import types as emu_types
from ttnn_moe.emu.device import MeshDevice
from ttnn_moe.emu.generic_op import generic_op, last_run_counters
from ttnn_moe.emu.tensor import Tensor, allocate_tensor_on_device
from ttnn_moe.emu.ttmetal.ccl_common import cb, kernel_path, per_device_programs, tensor_accessor_args
from ttnn_moe.emu.ttmetal.profiling import record_op
from ttnn_moe.emu.ttmetal.wheel import kernel_include_dirs, wheel_root
from ttnn_moe.emu.ttmetal.work_split import core_range_set, split_work_to_cores

_OP = "deepseek_grouped_gate"
KERNELS = "ttnn/cpp/ttnn/operations/experimental/reduction/deepseek_grouped_gate/device/kernels"
READER = f"{KERNELS}/dataflow/reader_deepseek_grouped_gate.cpp"
WRITER = f"{KERNELS}/dataflow/writer_deepseek_grouped_gate.cpp"
COMPUTE = f"{KERNELS}/compute/deepseek_grouped_gate.cpp"
TILE = 32
EXPERTS = 256
# What the op's validation accepts in 0.81.1 (n_groups, summed_experts_per_group, topk_groups, n_activated).
SUPPORTED = {"n_groups": 8, "summed_experts_per_group": 2, "topk_groups": 4, "n_activated_experts": 8}

# The factory's CB indices (tt::CBIndex::c_0 .. c_22).
CB = {
    name: index
    for index, name in enumerate(
        [
            "cb_in_scores",
            "cb_in_bias",
            "cb_out_weights",
            "cb_out_indices",
            "cb_sigmoid_scores",
            "cb_biased_scores",
            "cb_sorted_group_scores",
            "cb_sorted_expert_indices_temp",
            "cb_expert_index_template",
            "cb_group_index_template",
            "cb_group_summed_scores",
            "cb_top_experts_per_group",
            "cb_sorted_group_order",
            "cb_winning_group_scores",
            "cb_winning_group_indices",
            "cb_reduce_intermediate",
            "cb_final_indices_transposed",
            "cb_reduce_ones_scalar",
            "cb_epsilon_scalar",
            "cb_route_scale_scalar",
            "cb_normalized_scores",
            "cb_reciprocal_sums",
            "cb_gathered_sigmoid",
        ]
    )
}


def _packed_bf16(value: float) -> int:
    """A float as the factory passes it: its bfloat16 bits (round to nearest even) in the upper half-word."""
    bits = torch.tensor([value], dtype=torch.float32).bfloat16().view(torch.int16).item() & 0xFFFF
    return bits << 16


def _log2(value: int, name: str) -> int:
    if value < 1 or value & (value - 1):
        raise ValueError(f"{_OP}: {name}={value} must be a power of two")
    return value.bit_length() - 1


def gate_program(
    scores: Tensor,
    bias: Tensor,
    weights: Tensor,
    indices: Tensor,
    *,
    n_groups: int,
    summed_experts_per_group: int,
    topk_groups: int,
    n_activated_experts: int,
    route_scale: float,
    epsilon: float,
    grid: tuple[int, int],
) -> pd.ProgramDescriptor:
    """The single-device program of the op over interleaved DRAM tensors."""
    experts = int(scores.shape[-1])
    width_tiles = int(scores.padded_shape[-1]) // TILE
    height_tiles = scores.num_pages // width_tiles
    seq_len = int(scores.shape[-2])
    tokens = 1
    for dim in scores.shape:
        tokens *= int(dim)
    tokens //= experts
    remainder = seq_len % TILE or TILE
    expert_tiles = -(-n_activated_experts // TILE)
    group_tiles = -(-n_groups // TILE)
    split = split_work_to_cores(grid, height_tiles, row_major=False)
    cores = core_range_set([core for core, _, _ in split])

    page = scores.page_size
    bias_page, weights_page, indices_page = bias.page_size, weights.page_size, indices.page_size
    scores_format = scores.dtype.data_format
    u16 = pd.DataFormat.UInt16
    # (cb, pages, page size, format), in the factory's order: the emulator places CBs in descriptor order.
    layout = [
        ("cb_in_scores", 2 * width_tiles, page, scores_format),
        ("cb_in_bias", 2 * width_tiles, bias_page, bias.dtype.data_format),
        ("cb_out_weights", 2 * expert_tiles, weights_page, weights.dtype.data_format),
        ("cb_out_indices", 2 * expert_tiles, indices_page, indices.dtype.data_format),
        ("cb_sigmoid_scores", width_tiles, page, scores_format),
        ("cb_biased_scores", width_tiles, page, scores_format),
        ("cb_sorted_group_scores", 2, page, scores_format),
        ("cb_sorted_expert_indices_temp", 2, page, u16),
        ("cb_expert_index_template", width_tiles, page, u16),
        ("cb_group_index_template", group_tiles, page, u16),
        ("cb_top_experts_per_group", summed_experts_per_group, page, scores_format),
        ("cb_group_summed_scores", group_tiles, page, scores_format),
        ("cb_sorted_group_order", group_tiles, indices_page, u16),
        ("cb_winning_group_scores", topk_groups, weights_page, scores_format),
        ("cb_winning_group_indices", topk_groups, indices_page, u16),
        ("cb_reduce_intermediate", 2 * expert_tiles, page, scores_format),
        ("cb_final_indices_transposed", 2 * expert_tiles, indices_page, u16),
        ("cb_reduce_ones_scalar", 1, page, scores_format),
        ("cb_epsilon_scalar", 1, page, scores_format),
        ("cb_route_scale_scalar", 1, page, scores_format),
        ("cb_normalized_scores", 2 * expert_tiles, page, scores_format),
        ("cb_reciprocal_sums", 2 * expert_tiles, page, scores_format),
        ("cb_gathered_sigmoid", 2 * expert_tiles, page, scores_format),
    ]
    cbs = [cb(CB[name], pages * size, size, cores, fmt) for name, pages, size, fmt in layout]

    counts = {
        "width_tiles": width_tiles,
        "topk_groups": topk_groups,
        "n_groups": n_groups,
        "summed_experts_per_group": summed_experts_per_group,
        "n_activated_experts": n_activated_experts,
        "n_activated_expert_tiles": expert_tiles,
        "num_group_tiles": group_tiles,
    }
    reader_named = {
        "cb_in_scores": CB["cb_in_scores"],
        "cb_in_bias": CB["cb_in_bias"],
        "cb_route_scale_scalar": CB["cb_route_scale_scalar"],
        "width_tiles": width_tiles,
        "scores_page_size": page,
        "bias_page_size": bias_page,
    }
    compute_named = {
        **{name: index for name, index in CB.items()},
        **counts,
        "scores_page_size": page,
        "bias_page_size": bias_page,
        "weights_page_size": weights_page,
        "indices_page_size": indices_page,
        "group_size": experts // n_groups,
        "log_group_size": _log2(experts // n_groups, "experts per group"),
        "log_topk_groups": _log2(topk_groups, "topk_groups"),
        "log_n_groups": _log2(n_groups, "n_groups"),
        "log_n_activated_experts": _log2(n_activated_experts, "n_activated_experts"),
    }
    writer_cbs = [
        "cb_out_weights",
        "cb_out_indices",
        "cb_expert_index_template",
        "cb_group_index_template",
        "cb_top_experts_per_group",
        "cb_gathered_sigmoid",
        "cb_sorted_group_scores",
        "cb_winning_group_scores",
        "cb_winning_group_indices",
        "cb_sorted_group_order",
        "cb_in_scores",
        "cb_sigmoid_scores",
        "cb_biased_scores",
        "cb_reduce_ones_scalar",
        "cb_epsilon_scalar",
        "cb_route_scale_scalar",
    ]
    writer_named = {
        **{name: CB[name] for name in writer_cbs},
        **counts,
        "weights_page_size": weights_page,
        "indices_page_size": indices_page,
        "experts": experts,
        "tile_width": TILE,
        "tile_height": TILE,
        "tokens": tokens,
        "packed_epsilon": _packed_bf16(epsilon),
        "packed_route_scale": _packed_bf16(route_scale),
        "seq_len_tiles": -(-seq_len // TILE),
        "remainder_tokens_per_tile": remainder,
    }
    reader_rt, writer_rt, compute_rt = [], [], []
    for core, count, start in split:
        end = start + count
        reader_rt.append((core, [scores.buffer_address(), bias.buffer_address(), start, end]))
        compute_rt.append((core, [start, end]))
        writer_rt.append((core, [weights.buffer_address(), indices.buffer_address(), start, end]))
    compute_config = pd.ComputeConfigDescriptor(
        math_fidelity=pd.MathFidelity.HiFi4, fp32_dest_acc_en=False, math_approx_mode=False, dst_full_sync_en=False
    )
    kernels = [
        pd.KernelDescriptor(
            kernel_source=kernel_path(READER),
            core_ranges=cores,
            compile_time_args=tensor_accessor_args(scores) + tensor_accessor_args(bias),
            named_compile_time_args=sorted(reader_named.items()),
            runtime_args=reader_rt,
            config=pd.ReaderConfigDescriptor(),
        ),
        pd.KernelDescriptor(
            kernel_source=kernel_path(WRITER),
            core_ranges=cores,
            compile_time_args=tensor_accessor_args(weights) + tensor_accessor_args(indices),
            named_compile_time_args=sorted(writer_named.items()),
            runtime_args=writer_rt,
            config=pd.WriterConfigDescriptor(),
        ),
        pd.KernelDescriptor(
            kernel_source=kernel_path(COMPUTE),
            core_ranges=cores,
            named_compile_time_args=sorted(compute_named.items()),
            runtime_args=compute_rt,
            config=compute_config,
        ),
    ]
    return pd.ProgramDescriptor(kernels=kernels, cbs=cbs)


def use_kernel_includes() -> None:
    """Kernel include dirs as tt-metal's JIT has them for these kernels: use_wheel's (wheel.kernel_include_dirs)
    plus its root, through which the kernels include the kernel
    library as `ttnn/cpp/ttnn/kernel_lib/...`."""
    root = wheel_root()
    wanted = [*kernel_include_dirs(root), str(root)]
    if list(_emu.kernel_include_dirs()) != wanted:
        _emu.set_kernel_include_dirs(wanted)


def _check_input(t: Tensor, name: str) -> None:
    if t.dtype != emu_types.bfloat16 or t.layout != emu_types.TILE_LAYOUT:
        raise ValueError(f"{_OP}: {name} must be a bfloat16 TILE_LAYOUT tensor, got {t.dtype.name} {t.layout!r}")
    if t.memory_config().buffer_type != emu_types.BufferType.DRAM:
        raise ValueError(f"{_OP}: {name} must be in interleaved DRAM, got {t.memory_config()}")


def deepseek_grouped_gate(
    scores: Tensor,
    bias: Tensor,
    *,
    n_groups: int = 8,
    summed_experts_per_group: int = 2,
    topk_groups: int = 4,
    n_activated_experts: int = 8,
    route_scale: float = 1.0,
    epsilon: float = 1e-20,
    memory_config=None,
) -> tuple[Tensor, Tensor]:
    """ttnn.experimental.deepseek_grouped_gate on the emulator: new (weights, indices) tensors."""
    _check_input(scores, "scores")
    _check_input(bias, "bias")
    if list(scores.shape) != list(bias.shape):
        raise ValueError(f"{_OP}: scores and bias must have the same shape, got {scores.shape} and {bias.shape}")
    given = {
        "n_groups": n_groups,
        "summed_experts_per_group": summed_experts_per_group,
        "topk_groups": topk_groups,
        "n_activated_experts": n_activated_experts,
    }
    for name, value in given.items():
        if value != SUPPORTED[name]:
            raise ValueError(f"{_OP}: {name} must be {SUPPORTED[name]} (as in tt-metal 0.81.1), got {value}")
    if int(scores.shape[-1]) != EXPERTS:
        raise ValueError(f"{_OP}: the scores' last dim (experts) must be {EXPERTS}, got {scores.shape[-1]}")
    device = scores.device()
    out_shape = list(scores.shape)[:-1] + [n_activated_experts]
    config = memory_config or scores.memory_config()
    weights = allocate_tensor_on_device(out_shape, emu_types.bfloat16, emu_types.TILE_LAYOUT, device, config)
    indices = allocate_tensor_on_device(out_shape, emu_types.uint16, emu_types.TILE_LAYOUT, device, config)
    grid = device.compute_with_storage_grid_size()
    device_program = gate_program(
        scores,
        bias,
        weights,
        indices,
        n_groups=n_groups,
        summed_experts_per_group=summed_experts_per_group,
        topk_groups=topk_groups,
        n_activated_experts=n_activated_experts,
        route_scale=route_scale,
        epsilon=epsilon,
        grid=(grid.x, grid.y),
    )
    # Every device of a mesh routes its own tokens with the same program.
    rows, cols = (int(v) for v in device.shape) if isinstance(device, MeshDevice) else (1, 1)
    program = per_device_programs(rows, cols, lambda row, col: device_program)
    use_kernel_includes()
    generic_op([scores, bias, weights, indices], program)
    record_op(_OP, [scores, bias], [weights, indices], program, last_run_counters())
    return weights, indices
