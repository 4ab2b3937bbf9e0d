"""ttnn.moe_expert_token_remap (tt-metal 0.81.1) on the emulator, with Tenstorrent's own kernels.

From the dispatch's metadata (global expert ids per token), each device builds its local view:

    mapping, reduced = moe_expert_token_remap(topk, expert_mapping, metadata)

Per device: topk `[1, B, S, E]` (a score per expert), expert_mapping `[1, 1, E, D]` uint16
one-hot, metadata `[1, B, S, K]` uint16, ROW_MAJOR DRAM. Returns mapping `[1, B, S, E/D]` (topk's
dtype): row t holds the token's topk score of each local expert it chose (ascending expert id),
0 elsewhere; and reduced `[1, 1, B*S/reduction_size, E/D]` uint16: 1 where a token of the chunk
of reduction_size tokens chose that local expert (the 32-token block mask sparse_matmul skips by).

`remap_program` reproduces the factory (moe_expert_token_remap_program_factory.cpp): the
combine reader (reader_all_to_all_combine.cpp with locally_reduced = 1: one topk page per token
that chose a local expert) and writer_moe_expert_token_remap.cpp, CBs c_0..c_5, the metadata
pages split over the grid in multiples of reduction_size (split_work_to_cores_even_multiples,
column-major). One deviation: the factory places both kernels on the whole grid and gives runtime
args only to the cores with work; here the kernels run on those cores only (an idle core's
kernels would read the mapping from address 0, which the emulator rejects as outside every
buffer).
"""

from __future__ import annotations

from typing import Any

from ttnn_moe._C import program as pd
from ttnn_moe.emu import types as emu_types
from ttnn_moe.emu.device import MeshDevice
from ttnn_moe.emu.generic_op import generic_op, last_run_counters
from ttnn_moe.emu.tensor import Tensor, allocate_tensor_on_device
from ttnn_moe.emu.ttmetal import ccl_common as ccl
from ttnn_moe.emu.ttmetal.profiling import record_op

_OP = "moe_expert_token_remap"
REDUCTION_SIZE = 16  # MoeExpertTokenRemapDeviceOperation::REDUCTION_SIZE
MAPPING_CB, LOCAL_EXPERTS_CB, METADATA_CB, TOPK_CB, OUTPUT_MAPPING_CB, OUTPUT_REDUCED_CB = range(6)
_READER = "ttnn/cpp/ttnn/operations/ccl/all_to_all_combine/device/kernels/dataflow/reader_all_to_all_combine.cpp"
_WRITER = (
    "ttnn/cpp/ttnn/operations/data_movement/moe_expert_token_remap/device/kernels/dataflow/"
    "writer_moe_expert_token_remap.cpp"
)


def split_even_multiples(grid: pd.CoreCoord, units: int, multiple: int) -> list[tuple[pd.CoreCoord, int]]:
    """split_work_to_cores_even_multiples: `units` in chunks of `multiple` dealt round-robin to at most
    every core of the grid, cores taken column-major from (0, 0); [(core, units of that core)]."""
    batches = units // multiple
    num_cores = min(batches, grid.x * grid.y)
    increments = [0] * num_cores
    for batch in range(batches):
        increments[batch % num_cores] += multiple
    return [(pd.CoreCoord(i // grid.y, i % grid.y), n) for i, n in enumerate(increments)]


def remap_program(
    mesh, topk: Tensor, mapping: Tensor, metadata: Tensor, out_mapping: Tensor, out_reduced: Tensor, reduction_size: int
) -> pd.MeshProgramDescriptor:
    rows, cols = (int(v) for v in mesh.shape) if isinstance(mesh, MeshDevice) else (1, 1)
    return ccl.per_device_programs(
        rows,
        cols,
        lambda row, col: _device_program(
            mesh, row * cols + col, topk, mapping, metadata, out_mapping, out_reduced, reduction_size
        ),
    )


def _device_program(mesh, flat_mesh_idx, topk, mapping, metadata, out_mapping, out_reduced, reduction_size):
    batch, seq, k = (int(metadata.shape[i]) for i in (1, 2, 3))
    experts = int(mapping.shape[-2])
    experts_per_device = int(out_mapping.shape[-1])
    aligned_mapping = ccl.align(mapping.page_size, ccl.L1_ALIGNMENT)
    aligned_metadata = ccl.align(metadata.page_size, ccl.L1_ALIGNMENT)
    aligned_topk = ccl.align(topk.page_size, ccl.L1_ALIGNMENT)
    aligned_local_experts = ccl.align(experts_per_device * 2, ccl.L1_ALIGNMENT)
    grid = mesh.compute_with_storage_grid_size()
    total = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(0, 0), pd.CoreCoord(grid.x - 1, grid.y - 1))])
    out_format = out_mapping.dtype.data_format
    cbs = [
        ccl.cb(MAPPING_CB, aligned_mapping, aligned_mapping, total, pd.DataFormat.UInt16),
        ccl.cb(LOCAL_EXPERTS_CB, aligned_local_experts, aligned_local_experts, total, pd.DataFormat.UInt16),
        ccl.cb(METADATA_CB, aligned_metadata, aligned_metadata, total, pd.DataFormat.UInt16),
        ccl.cb(TOPK_CB, 2 * aligned_topk, aligned_topk, total, topk.dtype.data_format),
        ccl.cb(OUTPUT_MAPPING_CB, out_mapping.page_size, out_mapping.page_size, total, out_format),
        ccl.cb(OUTPUT_REDUCED_CB, out_reduced.page_size, out_reduced.page_size, total, pd.DataFormat.UInt16),
    ]
    reader_ct = [
        MAPPING_CB,
        LOCAL_EXPERTS_CB,
        METADATA_CB,
        TOPK_CB,
        experts_per_device,
        batch,
        seq,
        experts,
        flat_mesh_idx,
        topk.page_size,
        k,
        mapping.page_size,
        metadata.page_size,
        1,  # local_reduce: at most one topk page per token
    ]
    for t in (topk, mapping, metadata):
        reader_ct += ccl.tensor_accessor_args(t)
    writer_ct = [
        LOCAL_EXPERTS_CB,
        METADATA_CB,
        TOPK_CB,
        OUTPUT_MAPPING_CB,
        OUTPUT_REDUCED_CB,
        k,
        experts_per_device,
        out_mapping.page_size,
        out_mapping.dtype.element_bytes,
        out_reduced.page_size,
        reduction_size,
        *ccl.tensor_accessor_args(out_mapping),
        *ccl.tensor_accessor_args(out_reduced),
    ]
    reader_rt, writer_rt, used = [], [], []
    start = 0
    for core, increment in split_even_multiples(grid, metadata.num_pages, reduction_size):
        end = start + increment
        reader_rt.append(
            (core, [mapping.buffer_address(), metadata.buffer_address(), topk.buffer_address(), start, end])
        )
        writer_rt.append(
            (core, [out_mapping.buffer_address(), start, end, out_reduced.buffer_address(), start // reduction_size])
        )
        used.append(core)
        start = end
    cores = ccl.core_range_set(used)
    kernels = [
        pd.KernelDescriptor(
            kernel_source=ccl.kernel_path(_READER),
            core_ranges=cores,
            compile_time_args=reader_ct,
            runtime_args=reader_rt,
            config=pd.ReaderConfigDescriptor(),
        ),
        pd.KernelDescriptor(
            kernel_source=ccl.kernel_path(_WRITER),
            core_ranges=cores,
            compile_time_args=writer_ct,
            runtime_args=writer_rt,
            config=pd.WriterConfigDescriptor(),
        ),
    ]
    return pd.ProgramDescriptor(kernels=kernels, semaphores=[], cbs=cbs)


def moe_expert_token_remap(
    topk_tensor: Tensor,
    expert_mapping_tensor: Tensor,
    expert_metadata_tensor: Tensor,
    *,
    memory_config: Any = None,
    optional_output_mapping_tensor: Tensor | None = None,
    optional_output_reduced_tensor: Tensor | None = None,
    reduction_size: int = REDUCTION_SIZE,
) -> tuple[Tensor, Tensor]:
    """ttnn.moe_expert_token_remap's signature (0.81.1 nanobind); see the module docstring."""
    for name, t in (
        ("topk_tensor", topk_tensor),
        ("expert_mapping_tensor", expert_mapping_tensor),
        ("expert_metadata_tensor", expert_metadata_tensor),
    ):
        if not isinstance(t, Tensor):
            raise TypeError(f"{_OP}: {name} must be an emulator Tensor, got {type(t).__name__}")
        if t.layout != emu_types.ROW_MAJOR_LAYOUT or len(t.shape) != 4:
            raise ValueError(f"{_OP}: {name} must be a rank-4 ROW_MAJOR tensor, got {list(t.shape)} {t.layout.name}")
    for name, t in (
        ("expert_mapping_tensor", expert_mapping_tensor),
        ("expert_metadata_tensor", expert_metadata_tensor),
    ):
        if t.dtype != emu_types.uint16:
            raise ValueError(f"{_OP}: {name} must be uint16, got {t.dtype.name}")
    mesh = topk_tensor.device()
    num_devices = mesh.get_num_devices()
    experts, devices = int(expert_mapping_tensor.shape[-2]), int(expert_mapping_tensor.shape[-1])
    if devices != num_devices:
        raise ValueError(f"{_OP}: expert_mapping_tensor's last dim {devices} must be the {num_devices} devices")
    if experts != int(topk_tensor.shape[-1]):
        raise ValueError(
            f"{_OP}: expert_mapping_tensor has {experts} experts, topk_tensor {int(topk_tensor.shape[-1])}"
        )
    batch, seq = int(expert_metadata_tensor.shape[1]), int(expert_metadata_tensor.shape[2])
    if batch != int(topk_tensor.shape[1]):
        raise ValueError(f"{_OP}: metadata batch {batch} differs from topk_tensor's {int(topk_tensor.shape[1])}")
    if isinstance(reduction_size, bool) or not isinstance(reduction_size, int) or reduction_size <= 0:
        raise ValueError(f"{_OP}: reduction_size must be a positive int, got {reduction_size!r}")
    dram_read_alignment = int(topk_tensor.to_arg().alignment)
    if topk_tensor.page_size % dram_read_alignment:
        raise ValueError(
            f"{_OP}: topk_tensor's rows of {topk_tensor.page_size} bytes must be a multiple of {dram_read_alignment}: "
            "the factory strides its double-buffered topk CB by the L1 alignment, so the DRAM read into the second "
            "page would be misaligned"
        )
    if (batch * seq) % reduction_size:
        raise ValueError(f"{_OP}: batch * seq ({batch * seq}) must be divisible by reduction_size ({reduction_size})")
    local = experts // num_devices
    out_mapping = optional_output_mapping_tensor or allocate_tensor_on_device(
        [1, batch, seq, local], topk_tensor.dtype, emu_types.ROW_MAJOR_LAYOUT, mesh, memory_config
    )
    out_reduced = optional_output_reduced_tensor or allocate_tensor_on_device(
        [1, 1, batch * seq // reduction_size, local], emu_types.uint16, emu_types.ROW_MAJOR_LAYOUT, mesh, memory_config
    )
    ccl.use_kernel_includes()
    program = remap_program(
        mesh, topk_tensor, expert_mapping_tensor, expert_metadata_tensor, out_mapping, out_reduced, reduction_size
    )
    io = [topk_tensor, expert_mapping_tensor, expert_metadata_tensor, out_mapping, out_reduced]
    generic_op(io, program)
    record_op(_OP, io[:3], io[3:], program, last_run_counters())
    return out_mapping, out_reduced
