"""ttnn.all_to_all_dispatch (tt-metal 0.81.1) on an emulated mesh, with Tenstorrent's own kernels.

Every device sends each of its tokens to the devices (along `cluster_axis`) that hold one of
the token's top-k experts, and all-gathers the expert indices along the axis:

    output, metadata = all_to_all_dispatch(x, expert_indices, expert_mapping, cluster_axis=1)

Per device: x `[B, S, 1, H]` bfloat16, expert_indices `[B, S, 1, K]` uint16, expert_mapping
`[1, 1, E, D]` uint16 one-hot (D = all devices of the mesh, row-major), ROW_MAJOR DRAM.
Returns `[1, B*D[A], S, H]` (output_concat_dim=1; `[1, B, S*D[A], H]` for 2) and the metadata
`[1, B*D[A], S, K]`. Row `a * B*S + t` of the output holds token t of the device at position a
of the axis if one of its experts is here; every other row is left as it was (ttnn: "garbage").

`dispatch_program` reproduces the factory (all_to_all_dispatch_program_factory.cpp): the
reader_all_to_all_dispatch.cpp / writer_all_to_all_dispatch.cpp kernels on `num_links` cores
(one token range each), their 37 compile-time args + five TensorAccessorArgs, the AXIS,
DEST_CHIP_ID, DEST_MESH_ID and DIRECTIONS defines, CBs c_0..c_5 with the factory's sizes,
the init and cross-device global semaphores, and one fabric connection per neighbour.
With cluster_axis=None the factory still defines AXIS=-1 for the reader, which then takes the mesh
row as its dispatch group: it waits for mesh_cols metadata increments instead of all devices' and
copies only mesh_cols positions of the staged metadata, so that metadata is incomplete (the token
rows are right). Reproduced as is, like everything the factory builds.
Where it differs: the packet-header CB has format UInt32 (the factory says RawUInt32, which
the emulator's programs do not name; the kernels only use its bytes), and global semaphores
are program semaphores (see ccl_common).
"""

from __future__ import annotations

import enum
from typing import Any, Sequence

from ttnn_moe._C import program as pd
from ttnn_moe.emu import fabric as emu_fabric
from ttnn_moe.emu import types as emu_types
from ttnn_moe.emu.device import MeshDevice
from ttnn_moe.emu.generic_op import generic_op, last_run_counters
from ttnn_moe.emu.tensor import Tensor, allocate_tensor_on_device
from ttnn_moe.emu.ttmetal import ccl_common as ccl
from ttnn_moe.emu.ttmetal.profiling import record_op

_OP = "all_to_all_dispatch"
_KERNELS = "ttnn/cpp/ttnn/operations/ccl/all_to_all_dispatch/device/kernels/dataflow"
INPUT_CB, INDICES_CB, MAPPING_CB, PACKET_HEADER_CB, SEND_PREPARATION_CB, METADATA_CB = range(6)
NUM_PACKET_HEADERS = 2
BUFFERING_FACTOR = 2


class TransferType(enum.Enum):
    """AllToAllTransferType: metadata through an L1 staging buffer (FullPacket) or page by page."""

    FULL_PACKET = 0
    PAGE_BY_PAGE = 1


def _packet_header_bytes(topology) -> int:
    return 96 if topology == emu_fabric.Topology.Mesh else 64


def _rows(tensor: Tensor) -> int:
    shape = [int(d) for d in tensor.shape]
    rows = 1
    for d in shape[:-1]:
        rows *= d
    return rows


def _aligned_dram_page(tensor: Tensor) -> int:
    return ccl.align(tensor.page_size, int(tensor.to_arg().alignment))


def cb_sizes(x: Tensor, indices: Tensor, mapping: Tensor, num_links: int, axis, view: ccl.MeshView, topology):
    """get_cb_sizes: (total sizes, page sizes) of c_0 input, c_1 indices, c_2 mapping, c_4 send
    preparation, c_5 metadata staging, c_3 packet headers, in the factory's order."""
    tokens_per_device = _rows(x)
    tokens_per_core = ccl.div_up(tokens_per_device, num_links)
    aligned_input, aligned_indices, aligned_mapping = (_aligned_dram_page(t) for t in (x, indices, mapping))
    header = _packet_header_bytes(topology)
    sizes = [
        BUFFERING_FACTOR * aligned_input,
        tokens_per_core * aligned_indices,
        mapping.num_pages * aligned_mapping,
        view.num_devices * tokens_per_core,
        tokens_per_device * view.dispatch_devices(axis) * aligned_indices,
        NUM_PACKET_HEADERS * header,
    ]
    pages = [aligned_input, aligned_indices, aligned_mapping, tokens_per_core, aligned_indices, header]
    return sizes, pages


def output_shapes(x: Tensor, indices: Tensor, view: ccl.MeshView, axis, output_concat_dim: int):
    b, s, _, h = (int(d) for d in x.shape)
    k = int(indices.shape[-1])
    devices = view.dispatch_devices(axis)
    batch = b * devices if output_concat_dim == 1 else b
    seq = s * devices if output_concat_dim == 2 else s
    return [1, batch, seq, h], [1, batch, seq, k]


def dispatch_program(
    mesh: MeshDevice,
    x: Tensor,
    indices: Tensor,
    mapping: Tensor,
    output: Tensor,
    metadata: Tensor,
    *,
    axis: int | None,
    num_links: int,
    topology,
    impl: TransferType,
) -> pd.MeshProgramDescriptor:
    """The factory's per-device programs (one per mesh coordinate)."""
    view = ccl.mesh_view(mesh)
    return ccl.per_device_programs(
        view.rows,
        view.cols,
        lambda row, col: _device_program(
            mesh, view, row, col, x, indices, mapping, output, metadata,
            axis=axis, num_links=num_links, topology=topology, impl=impl,
        ),
    )  # fmt: skip


def _device_program(mesh, view, row, col, x, indices, mapping, output, metadata, *, axis, num_links, topology, impl):
    linearized = row * view.cols + col
    neighbor_coords, directions = ccl.neighbors(view, row, col, topology, axis)
    tokens_per_device = _rows(x)
    tokens_per_core = ccl.div_up(tokens_per_device, num_links)
    num_cores = min(num_links, ccl.div_up(tokens_per_device, tokens_per_core))
    cores = ccl.sender_cores(mesh, num_cores)
    grid = ccl.core_range_set(cores)
    sizes, pages = cb_sizes(x, indices, mapping, num_links, axis, view, topology)
    cbs = [
        ccl.cb(INPUT_CB, sizes[0], pages[0], grid, pd.DataFormat.Float16_b),
        ccl.cb(INDICES_CB, sizes[1], pages[1], grid, pd.DataFormat.UInt16),
        ccl.cb(MAPPING_CB, sizes[2], pages[2], grid, pd.DataFormat.UInt16),
        ccl.cb(PACKET_HEADER_CB, sizes[5], pages[5], grid, pd.DataFormat.UInt32),
        ccl.cb(SEND_PREPARATION_CB, sizes[3], pages[3], grid, pd.DataFormat.UInt8),
    ]
    if impl == TransferType.FULL_PACKET:
        cbs.append(ccl.cb(METADATA_CB, sizes[4], pages[4], grid, pd.DataFormat.UInt16))
    program = pd.ProgramDescriptor(kernels=[], semaphores=[], cbs=cbs)
    init_semaphore = ccl.global_semaphore(program, grid)
    cross_device_semaphore = ccl.global_semaphore(program, grid)

    tensors = (x, indices, mapping, output, metadata)
    aligned = [_aligned_dram_page(t) for t in tensors]
    compile_time_args = [
        INPUT_CB,
        INDICES_CB,
        MAPPING_CB,
        PACKET_HEADER_CB,
        SEND_PREPARATION_CB,
        *(t.num_pages for t in tensors),
        *(t.page_size for t in tensors),
        view.num_devices,
        int(x.shape[-1]),
        int(x.shape[0]) * view.dispatch_devices(axis),
        int(indices.shape[-1]),
        int(mapping.shape[-2]),
        tokens_per_device,
        num_links,
        ccl.topology_value(topology),
        view.mesh_ids[linearized],
        view.chip_ids[linearized],
        view.rows,
        view.cols,
        *aligned,
        int(emu_fabric.fabric_max_payload_size),
        ccl.L1_ALIGNMENT,
        METADATA_CB,
        1 if impl == TransferType.PAGE_BY_PAGE else 0,
        linearized,
    ]
    for t in tensors:
        compile_time_args += ccl.tensor_accessor_args(t)

    addresses = [t.buffer_address() for t in tensors]
    reader_rt, writer_rt = [], []
    start = 0
    for link, core in enumerate(cores):
        end = min(start + tokens_per_core, tokens_per_device)
        reader_rt.append((core, [*addresses, cross_device_semaphore, start, end]))
        args = [*addresses, cross_device_semaphore, init_semaphore, start, end]
        args += ccl.neighbor_connection_args(mesh, row, col, neighbor_coords, link, program, core)
        writer_rt.append((core, args))
        start = end

    reader_defines = [("AXIS", str(axis if axis is not None else -1))]
    writer_defines = [
        ("DEST_CHIP_ID", ccl.stringify(view.chip_ids)),
        ("DEST_MESH_ID", ccl.stringify(view.mesh_ids)),
        ("DIRECTIONS", ccl.stringify(directions)),
    ]
    if axis is not None:
        writer_defines.append(("AXIS", str(axis)))
    program.kernels = ccl.reader_writer_kernels(
        f"{_KERNELS}/reader_all_to_all_dispatch.cpp",
        f"{_KERNELS}/writer_all_to_all_dispatch.cpp",
        grid,
        (compile_time_args, reader_rt, reader_defines),
        (compile_time_args, writer_rt, writer_defines),
    )
    return program


def _validate(x: Tensor, indices: Tensor, mapping: Tensor, view: ccl.MeshView, output_concat_dim) -> None:
    for name, t, dtype in (
        ("input_tensor", x, emu_types.bfloat16),
        ("expert_indices_tensor", indices, emu_types.uint16),
        ("expert_mapping_tensor", mapping, emu_types.uint16),
    ):
        if not isinstance(t, Tensor):
            raise TypeError(f"{_OP}: {name} must be an emulator Tensor, got {type(t).__name__}")
        if t.layout != emu_types.ROW_MAJOR_LAYOUT:
            raise ValueError(f"{_OP}: {name} must be ROW_MAJOR, got {t.layout.name}")
        if t.dtype != dtype:
            raise ValueError(f"{_OP}: {name} must be {dtype.name}, got {t.dtype.name}")
        if len(t.shape) != 4:
            raise ValueError(f"{_OP}: {name} must be rank 4, got shape {list(t.shape)}")
    if list(x.shape)[:-1] != list(indices.shape)[:-1]:
        raise ValueError(
            f"{_OP}: input_tensor {list(x.shape)} and expert_indices_tensor {list(indices.shape)} must share "
            "every dim but the last"
        )
    if int(mapping.shape[-1]) != view.num_devices:
        raise ValueError(
            f"{_OP}: expert_mapping_tensor's last dim {int(mapping.shape[-1])} must be the mesh's "
            f"{view.num_devices} devices"
        )
    if output_concat_dim not in (1, 2):
        raise ValueError(f"{_OP}: output_concat_dim must be 1 or 2, got {output_concat_dim!r}")


def all_to_all_dispatch(
    input_tensor: Tensor,
    expert_indices_tensor: Tensor,
    expert_mapping_tensor: Tensor,
    *,
    cluster_axis: int | None = None,
    output_tensors: Sequence[Tensor] | None = None,
    num_links: int | None = None,
    topology: Any = None,
    memory_config: Any = None,
    subdevice_id: Any = None,
    output_concat_dim: int = 1,
    impl: TransferType | None = None,
) -> tuple[Tensor, Tensor]:
    """ttnn.all_to_all_dispatch's signature (0.81.1 nanobind); see the module docstring.

    num_links None: the emulated mesh's link count, as ttnn takes the routing planes available.
    subdevice_id must be None (the emulator has one sub-device: the whole grid).
    impl (not in ttnn): force the FullPacket or PageByPage transfer; None chooses as ttnn does,
    PageByPage only when the CBs and L1 outputs do not fit the free L1.
    """
    mesh = input_tensor.device() if isinstance(input_tensor, Tensor) else None
    view = ccl.mesh_view(mesh)
    axis = ccl.check_axis(_OP, cluster_axis)
    _validate(input_tensor, expert_indices_tensor, expert_mapping_tensor, view, output_concat_dim)
    if subdevice_id is not None:
        raise ValueError(f"{_OP}: subdevice_id must be None on the emulator, got {subdevice_id!r}")
    links = view.num_links if num_links is None else num_links
    if isinstance(links, bool) or not isinstance(links, int) or links < 1:
        raise ValueError(f"{_OP}: num_links must be a positive int, got {num_links!r}")
    usable = ccl.usable_topology(view, topology, axis)
    out_shape, md_shape = output_shapes(input_tensor, expert_indices_tensor, view, axis, output_concat_dim)
    if output_tensors is not None:
        output, metadata = output_tensors
        for name, t, shape, dtype in (
            ("output", output, out_shape, emu_types.bfloat16),
            ("metadata", metadata, md_shape, emu_types.uint16),
        ):
            if list(t.shape) != shape or t.dtype != dtype or t.layout != emu_types.ROW_MAJOR_LAYOUT:
                raise ValueError(
                    f"{_OP}: preallocated {name} must be {shape} {dtype.name} ROW_MAJOR, got "
                    f"{list(t.shape)} {t.dtype.name} {t.layout.name}"
                )
    else:
        output = allocate_tensor_on_device(
            out_shape, emu_types.bfloat16, emu_types.ROW_MAJOR_LAYOUT, mesh, memory_config
        )
        metadata = allocate_tensor_on_device(
            md_shape, emu_types.uint16, emu_types.ROW_MAJOR_LAYOUT, mesh, memory_config
        )
    if impl is None:
        sizes, _ = cb_sizes(input_tensor, expert_indices_tensor, expert_mapping_tensor, links, axis, view, usable)
        free_l1 = int(mesh.device_limits().l1_bytes_per_core)
        impl = TransferType.FULL_PACKET if sum(sizes) <= free_l1 else TransferType.PAGE_BY_PAGE
    ccl.use_kernel_includes()
    program = dispatch_program(
        mesh,
        input_tensor,
        expert_indices_tensor,
        expert_mapping_tensor,
        output,
        metadata,
        axis=axis,
        num_links=links,
        topology=usable,
        impl=impl,
    )
    io = [input_tensor, expert_indices_tensor, expert_mapping_tensor, output, metadata]
    generic_op(io, program)
    record_op(_OP, io[:3], io[3:], program, last_run_counters())
    return output, metadata
