"""ttnn.all_to_all_combine (tt-metal 0.81.1) on an emulated mesh, with Tenstorrent's own kernels.

The inverse of all_to_all_dispatch: each device sends its experts' output rows back to the
devices (along `cluster_axis`) the tokens came from:

    combined = all_to_all_combine(expert_out, metadata, expert_mapping, cluster_axis=1)

Per device: expert_out `[E/D, B*D[A], S, H]` bfloat16 (or `[1, B*D[A], S, H]` with
local_reduce), the dispatch's metadata `[1, B*D[A], S, K]` uint16, expert_mapping
`[1, 1, E, D]` uint16 one-hot, ROW_MAJOR DRAM. Returns `[K, B, S, H]` (output_shard_dim=1;
`[K, B*D[A], S/D[A], H]` for 2) per device: row (k, t) is the output of the token's k-th
expert, sent by the device holding it (the first k if the token chose that expert twice; with
local_reduce only the k of the first of a device's experts the token chose). The output starts
as zeros (ttnn creates it with moreh_full(0)), so rows nobody sends are 0; a preallocated
output_tensor is used as it is.

`combine_program` reproduces the factory (all_to_all_combine_program_factory.cpp): the
reader/writer_all_to_all_combine.cpp kernels on `num_links` cores, their compile-time args +
TensorAccessorArgs, the DEST_CHIP_ID / DEST_MESH_ID / DIRECTIONS / REPLICATE_GROUP_AXIS
defines, CBs c_0..c_4 (data CB of E/D pages: fewer deadlock, says the factory), the two global
semaphores and one fabric connection per neighbour. On 1D fabrics the writer's completion
credits are a bidirectional line multicast of an atomic increment (emulated).
"""

from __future__ import annotations

from typing import Any

import torch

from ttnn_moe._C import program as pd
from ttnn_moe.emu import types as emu_types
from ttnn_moe.emu.device import MeshDevice
from ttnn_moe.emu.generic_op import generic_op, last_run_counters
from ttnn_moe.emu.mesh import ReplicateTensorToMesh
from ttnn_moe.emu.tensor import Tensor, from_torch
from ttnn_moe.emu.ttmetal import ccl_common as ccl
from ttnn_moe.emu.ttmetal.profiling import record_op

_OP = "all_to_all_combine"
_KERNELS = "ttnn/cpp/ttnn/operations/ccl/all_to_all_combine/device/kernels/dataflow"
DATA_CB, MAPPING_CB, LOCAL_EXPERTS_CB, METADATA_CB, CLIENT_INTERFACE_CB = range(5)
NUM_PACKET_HEADERS = 3


def output_shape(x: Tensor, metadata: Tensor, view: ccl.MeshView, axis: int, output_shard_dim: int):
    batch, seq, k = (int(metadata.shape[i]) for i in (1, 2, 3))
    replicate = view.cols if axis == 0 else view.rows
    if output_shard_dim == 1:
        batch = batch * replicate // view.num_devices
    else:
        seq = seq * replicate // view.num_devices
    return [k, batch, seq, int(x.shape[-1])]


def combine_program(
    mesh: MeshDevice,
    x: Tensor,
    mapping: Tensor,
    metadata: Tensor,
    output: Tensor,
    *,
    axis: int,
    num_links: int,
    topology,
    local_reduce: bool,
) -> pd.MeshProgramDescriptor:
    view = ccl.mesh_view(mesh)
    return ccl.per_device_programs(
        view.rows,
        view.cols,
        lambda row, col: _device_program(
            mesh, view, row, col, x, mapping, metadata, output,
            axis=axis, num_links=num_links, topology=topology, local_reduce=local_reduce,
        ),
    )  # fmt: skip


def _device_program(mesh, view, row, col, x, mapping, metadata, output, *, axis, num_links, topology, local_reduce):
    linearized = row * view.cols + col
    batch, seq, k = (int(metadata.shape[i]) for i in (1, 2, 3))
    experts = int(mapping.shape[-2])
    experts_per_device = experts // view.num_devices
    dram_alignment = int(x.to_arg().alignment)
    aligned_input = ccl.align(x.page_size, dram_alignment)
    aligned_mapping = ccl.align(mapping.page_size, ccl.L1_ALIGNMENT)
    aligned_metadata = ccl.align(metadata.page_size, ccl.L1_ALIGNMENT)
    aligned_local_experts = ccl.align(experts_per_device * 2, ccl.L1_ALIGNMENT)

    tokens_per_device = batch * seq
    tokens_per_core = ccl.div_up(tokens_per_device, num_links)
    num_cores = min(num_links, ccl.div_up(tokens_per_device, tokens_per_core))
    cores = ccl.sender_cores(mesh, num_cores)
    grid = ccl.core_range_set(cores)
    cbs = [
        ccl.cb(DATA_CB, experts_per_device * aligned_input, aligned_input, grid, pd.DataFormat.Float16_b),
        ccl.cb(MAPPING_CB, aligned_mapping, aligned_mapping, grid, pd.DataFormat.UInt16),
        ccl.cb(LOCAL_EXPERTS_CB, aligned_local_experts, aligned_local_experts, grid, pd.DataFormat.UInt16),
        ccl.cb(METADATA_CB, aligned_metadata, aligned_metadata, grid, pd.DataFormat.UInt16),
        ccl.cb(
            CLIENT_INTERFACE_CB,
            NUM_PACKET_HEADERS * ccl.CLIENT_INTERFACE_SIZE,
            ccl.CLIENT_INTERFACE_SIZE,
            grid,
            pd.DataFormat.UInt32,
        ),
    ]
    program = pd.ProgramDescriptor(kernels=[], semaphores=[], cbs=cbs)
    init_semaphore = ccl.global_semaphore(program, grid)
    cross_device_semaphore = ccl.global_semaphore(program, grid)

    reader_ct = [
        MAPPING_CB,
        LOCAL_EXPERTS_CB,
        METADATA_CB,
        DATA_CB,
        experts_per_device,
        batch,
        seq,
        experts,
        linearized,
        x.page_size,
        k,
        mapping.page_size,
        metadata.page_size,
        int(local_reduce),
    ]
    for t in (x, mapping, metadata):
        reader_ct += ccl.tensor_accessor_args(t)
    writer_ct = [
        METADATA_CB,
        LOCAL_EXPERTS_CB,
        CLIENT_INTERFACE_CB,
        DATA_CB,
        batch,
        seq,
        k,
        experts_per_device,
        view.num_devices,
        view.chip_ids[linearized],
        x.page_size,
        ccl.L1_ALIGNMENT,
        view.rows,
        view.cols,
        ccl.max_packet_bytes(),
        linearized,
        ccl.topology_value(topology),
        int(local_reduce),
        *ccl.tensor_accessor_args(output),
    ]
    neighbor_coords, directions = ccl.neighbors(view, row, col, topology, axis)
    writer_defines = [
        ("DEST_CHIP_ID", ccl.stringify(view.chip_ids)),
        ("DEST_MESH_ID", ccl.stringify(view.mesh_ids)),
        ("DIRECTIONS", ccl.stringify(directions)),
        ("REPLICATE_GROUP_AXIS", str(axis)),
    ]
    reader_rt, writer_rt = [], []
    start = 0
    for link, core in enumerate(cores):
        end = min(start + tokens_per_core, tokens_per_device)
        reader_rt.append((core, [mapping.buffer_address(), metadata.buffer_address(), x.buffer_address(), start, end]))
        args = [output.buffer_address(), cross_device_semaphore, init_semaphore, start, end]
        args += ccl.neighbor_connection_args(mesh, row, col, neighbor_coords, link, program, core)
        writer_rt.append((core, args))
        start = end
    program.kernels = ccl.reader_writer_kernels(
        f"{_KERNELS}/reader_all_to_all_combine.cpp",
        f"{_KERNELS}/writer_all_to_all_combine.cpp",
        grid,
        (reader_ct, reader_rt, []),
        (writer_ct, writer_rt, writer_defines),
    )
    return program


def _validate(x, metadata, mapping, view: ccl.MeshView, axis: int, local_reduce: bool, output_shard_dim) -> None:
    for name, t, dtype in (
        ("input_tensor", x, emu_types.bfloat16),
        ("expert_metadata_tensor", metadata, emu_types.uint16),
        ("expert_mapping_tensor", mapping, emu_types.uint16),
    ):
        if not isinstance(t, Tensor):
            raise TypeError(f"{_OP}: {name} must be an emulator Tensor, got {type(t).__name__}")
        if t.layout != emu_types.ROW_MAJOR_LAYOUT or t.dtype != dtype or len(t.shape) != 4:
            raise ValueError(
                f"{_OP}: {name} must be a rank-4 ROW_MAJOR {dtype.name} tensor, got {list(t.shape)} "
                f"{t.dtype.name} {t.layout.name}"
            )
    experts = int(mapping.shape[-2])
    if experts % view.num_devices:
        raise ValueError(f"{_OP}: {experts} experts do not split evenly over {view.num_devices} devices")
    if int(mapping.shape[-1]) != view.num_devices:
        raise ValueError(f"{_OP}: expert_mapping_tensor's last dim must be the mesh's {view.num_devices} devices")
    want = 1 if local_reduce else experts // view.num_devices
    if int(x.shape[0]) != want:
        raise ValueError(
            f"{_OP}: input_tensor's dim 0 is {int(x.shape[0])}, expected {want} (local_reduce={local_reduce})"
        )
    if list(x.shape)[1:3] != list(metadata.shape)[1:3]:
        raise ValueError(
            f"{_OP}: input_tensor {list(x.shape)} and expert_metadata_tensor {list(metadata.shape)} "
            "must share dims 1 and 2"
        )
    if output_shard_dim not in (1, 2):
        raise ValueError(f"{_OP}: output_shard_dim must be 1 or 2, got {output_shard_dim!r}")
    group = view.dispatch_devices(axis)
    if int(metadata.shape[output_shard_dim]) % group:
        raise ValueError(
            f"{_OP}: metadata dim {output_shard_dim} ({int(metadata.shape[output_shard_dim])}) must divide by the "
            f"{group} devices of axis {axis}"
        )


def all_to_all_combine(
    input_tensor: Tensor,
    expert_metadata_tensor: Tensor,
    expert_mapping_tensor: Tensor,
    *,
    local_reduce: bool = False,
    output_shard_dim: int = 1,
    cluster_axis: int | None = None,
    subdevice_id: Any = None,
    memory_config: Any = None,
    output_tensor: Tensor | None = None,
    num_links: int | None = None,
    topology: Any = None,
) -> Tensor:
    """ttnn.all_to_all_combine's signature (0.81.1 nanobind); see the module docstring.
    cluster_axis is required (ttnn asserts it too); num_links None: the emulated mesh's link count."""
    mesh = input_tensor.device() if isinstance(input_tensor, Tensor) else None
    view = ccl.mesh_view(mesh)
    axis = ccl.check_axis(_OP, cluster_axis, required=True)
    _validate(input_tensor, expert_metadata_tensor, expert_mapping_tensor, view, axis, local_reduce, output_shard_dim)
    if subdevice_id is not None:
        raise ValueError(f"{_OP}: subdevice_id must be None on the emulator, got {subdevice_id!r}")
    links = view.num_links if num_links is None else num_links
    if isinstance(links, bool) or not isinstance(links, int) or links < 1:
        raise ValueError(f"{_OP}: num_links must be a positive int, got {num_links!r}")
    usable = ccl.usable_topology(view, topology, axis)
    shape = output_shape(input_tensor, expert_metadata_tensor, view, axis, output_shard_dim)
    if output_tensor is None:
        output_tensor = from_torch(
            torch.zeros(shape, dtype=torch.bfloat16),
            dtype=emu_types.bfloat16,
            layout=emu_types.ROW_MAJOR_LAYOUT,
            device=mesh,
            memory_config=memory_config,
            mesh_mapper=ReplicateTensorToMesh(mesh),
        )
    elif list(output_tensor.shape) != shape or output_tensor.dtype != emu_types.bfloat16:
        raise ValueError(
            f"{_OP}: output_tensor must be {shape} bfloat16, got {list(output_tensor.shape)} {output_tensor.dtype.name}"
        )
    ccl.use_kernel_includes()
    program = combine_program(
        mesh,
        input_tensor,
        expert_mapping_tensor,
        expert_metadata_tensor,
        output_tensor,
        axis=axis,
        num_links=links,
        topology=usable,
        local_reduce=bool(local_reduce),
    )
    io = [input_tensor, expert_mapping_tensor, expert_metadata_tensor, output_tensor]
    generic_op(io, program)
    record_op(_OP, io[:3], io[3:], program, last_run_counters())
    return output_tensor
