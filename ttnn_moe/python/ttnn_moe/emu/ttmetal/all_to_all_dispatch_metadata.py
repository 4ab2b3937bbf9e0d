"""ttnn.experimental.all_to_all_dispatch_metadata (tt-metal 0.81.1) on an emulated mesh, with Tenstorrent's
own kernels: the dispatch of the optimized DeepSeek-V3 decode MoE path.

Every device sends each of its tokens to the devices along `cluster_axis` that hold one of the token's top-k
experts, and all-gathers the expert indices and scores along the axis into L1 on one core of every device:

    output, indices, scores = all_to_all_dispatch_metadata(x, expert_indices, expert_scores, expert_mapping,
                                                           cluster_axis=1, drain_sync_tilizer_core=(0, 0))

Per device: x `[B, S, 1, H]` bfloat16 (DRAM), expert_indices `[B, S, 1, K]` uint16 and expert_scores
`[B, S, 1, K]` bfloat16 (in L1: the reader stages their pages at the L1 page stride, which a DRAM source of
a 16-byte page does not keep aligned), expert_mapping `[D, E]` uint16 (row d: the device each expert lives on,
as device d sees it). Returns output `[1, T*D[A], H]` (DRAM; row a*T + t holds token t of the device at
position a of the axis if one of its experts is here, other rows keep what they held), indices and scores
`[1, T*D[A], K]` height-sharded as one shard in L1 of the drain core.

`dispatch_metadata_program` reproduces the factory (all_to_all_dispatch_metadata_program_factory.cpp) in its
direct-EDM worker mode: the reader / writer kernels on `num_links` cores of `worker_core_range_set` (one token
range each), their 45 compile-time args + seven TensorAccessorArgs, CBs c_0..c_6 with the factory's sizes, the
cross-device and init global semaphores, one fabric connection per neighbour along the axis, and the
DEST_CHIP_ID, DEST_MESH_ID, DIRECTIONS, DISPATCH_ALGORITHM and AXIS defines. The topology is the mesh's, as
0.81.1's invoke takes it (a Ring on an axis of two devices is a Line).
Where it differs: the packet-header CB has format UInt32 (the factory says RawUInt32; the kernels only use its
bytes), global semaphores are program semaphores (see ccl_common), and the sharded outputs' TensorAccessorArgs
are this module's encoding of a one-core shard (the kernels build those accessors but address the drain core
directly, so nothing reads them).
Not described (each a clear error): the fabric-mux worker modes, persistent mode (cross_device_semaphore),
shared_expert_ids, a 2D (Mesh) fabric, cluster_axis None (0.81.1 requires an axis).
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

_OP = "all_to_all_dispatch_metadata"
_KERNELS = "ttnn/cpp/ttnn/operations/experimental/ccl/all_to_all_dispatch_metadata/device/kernels/dataflow"
INPUT_CB, INDICES_CB, MAPPING_CB, PACKET_HEADER_CB, SEND_PREPARATION_CB, METADATA_CB, SCORES_CB = range(7)
NUM_PACKET_HEADERS = 8
BUFFERING_FACTOR = 2
TENSOR_ACCESSOR_SHARDED = 1  # ArgsConfig::Sharded
DEFAULT_WORKER_CORES = ((0, 0), (0, 7))  # 0.81.1's invoke: one column, 8 cores for 4 links


class WorkerMode(enum.Enum):
    """ttnn.WorkerMode: direct EDM connections (one worker per link) or through a fabric mux."""

    DIRECT = 0
    MUX_TOKEN_SPLIT = 1
    MUX_PAYLOAD_SPLIT = 2


class DispatchAlgorithm(enum.Enum):
    """ttnn.DispatchAlgorithm: how the writer routes a token to the devices holding its experts."""

    BROADCAST = 0
    SPARSE_UNICAST = 1
    SPARSE_MCAST_LINEAR = 2
    SPARSE_MCAST_SHORTEST_PATH = 3
    SPARSE_MCAST_SPLIT_BW = 4


def _rows(tensor: Tensor) -> int:
    rows = 1
    for d in list(tensor.shape)[:-1]:
        rows *= int(d)
    return rows


def _aligned_page(tensor: Tensor) -> int:
    return ccl.align(tensor.page_size, int(tensor.to_arg().alignment))


def output_shapes(x: Tensor, indices: Tensor, dispatch_devices: int):
    """compute_output_specs: tokens [1, T*D[A], H], indices and scores [1, T*D[A], K]."""
    total = _rows(x) * dispatch_devices
    return [1, total, int(x.shape[-1])], [1, total, int(indices.shape[-1])]


def cb_sizes(x: Tensor, metadata: Tensor, scores_out: Tensor, mapping: Tensor, num_links: int, topology):
    """get_cb_sizes: {cb: (total size, page size)} for c_0 .. c_6."""
    tokens_per_device = _rows(x)
    tokens_per_core = ccl.div_up(tokens_per_device, num_links)
    aligned_input, aligned_indices, aligned_scores, aligned_mapping = (
        _aligned_page(t) for t in (x, metadata, scores_out, mapping)
    )
    header = 96 if topology == emu_fabric.Topology.Mesh else 64
    view = ccl.mesh_view(x.device())
    return {
        INPUT_CB: (BUFFERING_FACTOR * aligned_input, aligned_input),
        INDICES_CB: (tokens_per_core * aligned_indices, aligned_indices),
        MAPPING_CB: (aligned_mapping, aligned_mapping),
        SEND_PREPARATION_CB: (view.num_devices * tokens_per_core, tokens_per_core),
        METADATA_CB: (tokens_per_device * (aligned_indices + aligned_scores), aligned_indices + aligned_scores),
        PACKET_HEADER_CB: (NUM_PACKET_HEADERS * header, header),
        SCORES_CB: (tokens_per_core * aligned_scores, aligned_scores),
    }


def one_core_shard_accessor_args(tensor: Tensor, noc_xy: tuple[int, int]) -> list[int]:
    """TensorAccessorArgs of a tensor held as one shard on one core: Sharded, the aligned page size, rank 2, one
    bank, the tensor and shard shapes in pages ([rows, 1] each) and the bank's packed NOC coordinates."""
    rows = tensor.num_pages
    page = ccl.align(int(tensor.page_size), ccl.L1_ALIGNMENT)
    return [TENSOR_ACCESSOR_SHARDED, page, 2, 1, rows, 1, rows, 1, (noc_xy[0] << 8) | noc_xy[1]]


def _sender_cores(worker_cores: pd.CoreRangeSet, num_cores: int) -> list[pd.CoreCoord]:
    """num_cores_to_corerangeset_in_subcoregrids(first core, n, worker cores, row-wise)."""
    cores = sorted(worker_cores.cores(), key=lambda c: (c.y, c.x))
    if len(cores) < num_cores:
        raise ValueError(f"{_OP}: not enough worker cores {len(cores)} to send all links {num_cores}")
    return cores[:num_cores]


def dispatch_metadata_program(
    mesh: MeshDevice,
    tensors: Sequence[Tensor],
    *,
    axis: int,
    num_links: int,
    topology,
    worker_cores: pd.CoreRangeSet,
    drain_core: tuple[int, int],
    algorithm: DispatchAlgorithm,
) -> pd.MeshProgramDescriptor:
    """The factory's per-device programs; tensors: input, indices, scores, mapping, output, metadata, scores_out."""
    view = ccl.mesh_view(mesh)
    return ccl.per_device_programs(
        view.rows,
        view.cols,
        lambda row, col: _device_program(
            mesh, view, row, col, tensors, axis=axis, num_links=num_links, topology=topology,
            worker_cores=worker_cores, drain_core=drain_core, algorithm=algorithm,
        ),
    )  # fmt: skip


def _device_program(mesh, view, row, col, tensors, *, axis, num_links, topology, worker_cores, drain_core, algorithm):
    x, indices, scores, mapping, output, metadata, scores_out = tensors
    linearized = row * view.cols + col
    neighbor_coords, directions = ccl.neighbors(view, row, col, topology, axis)
    dispatch_devices = view.dispatch_devices(axis)
    tokens_per_device = _rows(x)
    tokens_per_core = ccl.div_up(tokens_per_device, num_links)
    cores = _sender_cores(worker_cores, num_links)
    grid = ccl.core_range_set(cores)
    sizes = cb_sizes(x, metadata, scores_out, mapping, num_links, topology)
    formats = {
        INPUT_CB: pd.DataFormat.Float16_b,
        INDICES_CB: pd.DataFormat.UInt16,
        SCORES_CB: pd.DataFormat.Float16_b,
        MAPPING_CB: pd.DataFormat.UInt16,
        PACKET_HEADER_CB: pd.DataFormat.UInt32,
        SEND_PREPARATION_CB: pd.DataFormat.UInt8,
        METADATA_CB: pd.DataFormat.UInt16,
    }
    # The factory's CreateCircularBuffer order, which is the order of their L1 addresses.
    order = (INPUT_CB, INDICES_CB, SCORES_CB, MAPPING_CB, PACKET_HEADER_CB, SEND_PREPARATION_CB, METADATA_CB)
    cbs = [ccl.cb(i, *sizes[i], grid, formats[i]) for i in order]
    program = pd.ProgramDescriptor(kernels=[], semaphores=[], cbs=cbs)
    cross_device_semaphore = ccl.global_semaphore(program, grid)
    init_semaphore = ccl.global_semaphore(program, grid)

    noc = mesh.get_devices()[0].worker_core_from_logical_core(pd.CoreCoord(*drain_core))
    drain_noc = (int(noc.x), int(noc.y))
    compile_time_args = [
        INPUT_CB,
        INDICES_CB,
        MAPPING_CB,
        PACKET_HEADER_CB,
        SEND_PREPARATION_CB,
        x.num_pages,
        indices.num_pages,
        1,  # the mapping page of this device only
        output.num_pages,
        metadata.num_pages,
        *(t.page_size for t in (x, indices, mapping, output, metadata)),
        view.num_devices,
        int(x.shape[-1]),
        int(x.shape[0]) * dispatch_devices,
        int(indices.shape[-1]),
        int(mapping.shape[-1]),
        0,  # shared experts
        tokens_per_device,
        num_links,
        ccl.topology_value(topology),
        view.mesh_ids[linearized],
        view.chip_ids[linearized],
        view.rows,
        view.cols,
        *(_aligned_page(t) for t in (x, indices, mapping, output, metadata)),
        int(emu_fabric.fabric_max_payload_size),
        ccl.L1_ALIGNMENT,
        METADATA_CB,
        0,
        linearized,
        dispatch_devices,
        SCORES_CB,
        scores.num_pages,
        scores.page_size,
        _aligned_page(scores),
        scores_out.page_size,
        _aligned_page(scores_out),
    ]
    for t in (x, indices, scores, mapping, output):
        compile_time_args += ccl.tensor_accessor_args(t)
    for t in (metadata, scores_out):
        compile_time_args += one_core_shard_accessor_args(t, drain_noc)

    addresses = [t.buffer_address() for t in tensors]
    payload = [0, x.page_size, 1]  # direct mode: the whole page, every worker primary
    reader_rt, writer_rt = [], []
    start = 0
    for link, core in enumerate(cores):
        end = min(start + tokens_per_core, tokens_per_device)
        reader_rt.append((core, [*addresses, cross_device_semaphore, start, end, *payload, 0]))
        args = [*addresses, cross_device_semaphore, init_semaphore, start, end, *drain_noc, *payload]
        args += ccl.neighbor_connection_args(mesh, row, col, neighbor_coords, link, program, core)
        writer_rt.append((core, args))
        start = end

    writer_defines = [
        ("AXIS", str(axis)),
        ("DEST_CHIP_ID", ccl.stringify(view.chip_ids)),
        ("DEST_MESH_ID", ccl.stringify(view.mesh_ids)),
        ("DIRECTIONS", ccl.stringify(directions)),
        ("DISPATCH_ALGORITHM", str(algorithm.value)),
    ]
    program.kernels = ccl.reader_writer_kernels(
        f"{_KERNELS}/reader_all_to_all_dispatch_metadata.cpp",
        f"{_KERNELS}/writer_all_to_all_dispatch_metadata.cpp",
        grid,
        (compile_time_args, reader_rt, []),
        (compile_time_args, writer_rt, writer_defines),
    )
    return program


def _validate_inputs(x, indices, scores, mapping, view: ccl.MeshView) -> None:
    for name, t, dtype in (
        ("input_tensor", x, emu_types.bfloat16),
        ("expert_indices_tensor", indices, emu_types.uint16),
        ("expert_scores_tensor", scores, emu_types.bfloat16),
        ("expert_mapping_tensor", mapping, emu_types.uint16),
    ):
        if not isinstance(t, Tensor):
            raise TypeError(f"{_OP}: {name} must be an emulator Tensor, got {type(t).__name__}")
        if t.layout != emu_types.ROW_MAJOR_LAYOUT:
            raise ValueError(f"{_OP}: {name} must be ROW_MAJOR, got {t.layout.name}")
        if t.dtype != dtype:
            raise ValueError(f"{_OP}: {name} must be {dtype.name}, got {t.dtype.name}")
    if list(scores.shape) != list(indices.shape):
        raise ValueError(
            f"{_OP}: expert_scores_tensor shape {list(scores.shape)} must match expert_indices_tensor shape "
            f"{list(indices.shape)}"
        )
    if len(x.shape) != 4 or len(indices.shape) != 4:
        raise ValueError(
            f"{_OP}: input_tensor {list(x.shape)} and expert_indices_tensor {list(indices.shape)} must be rank 4"
        )
    if list(x.shape)[:-1] != list(indices.shape)[:-1]:
        raise ValueError(
            f"{_OP}: input_tensor {list(x.shape)} and expert_indices_tensor {list(indices.shape)} must share every "
            "dim but the last"
        )
    if len(mapping.shape) != 2 or int(mapping.shape[0]) != view.num_devices:
        raise ValueError(
            f"{_OP}: expert_mapping_tensor must be [devices, experts] with {view.num_devices} devices, got shape "
            f"{list(mapping.shape)}"
        )


def _drain_core_of(drain_sync_tilizer_core, output_tensors) -> tuple[int, int]:
    """0.81.1's invoke: the given core, else the single core the persistent indices tensor is sharded on."""
    if drain_sync_tilizer_core is not None:
        x, y = (int(v) for v in drain_sync_tilizer_core)
        return x, y
    if output_tensors is not None:
        spec = output_tensors[1].memory_config().shard_spec
        if spec is None:
            raise ValueError(f"{_OP}: the persistent indices tensor must be sharded on one core")
        [core] = spec.cores()
        return int(core.x), int(core.y)
    raise ValueError(
        f"{_OP}: drain_sync_tilizer_core must be given, or output_tensors whose indices tensor is sharded on it"
    )


def _metadata_memory_config(drain_core: tuple[int, int], rows: int, k: int) -> emu_types.MemoryConfig:
    core = pd.CoreCoord(*drain_core)
    spec = emu_types.ShardSpec(pd.CoreRangeSet([pd.CoreRange(core, core)]), (rows, k))
    return emu_types.MemoryConfig(emu_types.TensorMemoryLayout.HEIGHT_SHARDED, emu_types.BufferType.L1, spec)


def _outputs(mesh, x, indices, drain_core, dispatch_devices, output_tensors):
    out_shape, md_shape = output_shapes(x, indices, dispatch_devices)
    md_config = _metadata_memory_config(drain_core, md_shape[1], md_shape[2])
    wanted = (
        ("output", out_shape, emu_types.bfloat16, emu_types.DRAM_MEMORY_CONFIG),
        ("indices", md_shape, emu_types.uint16, md_config),
        ("scores", md_shape, emu_types.bfloat16, md_config),
    )
    if output_tensors is None:
        return [allocate_tensor_on_device(shape, dtype, emu_types.ROW_MAJOR_LAYOUT, mesh, config)
                for _, shape, dtype, config in wanted]  # fmt: skip
    if len(output_tensors) != 3:
        raise ValueError(f"{_OP}: output_tensors must be (output, indices, scores), got {len(output_tensors)} tensors")
    for t, (name, shape, dtype, config) in zip(output_tensors, wanted):
        got = (list(t.shape), t.dtype, t.layout, t.memory_config())
        if got != (shape, dtype, emu_types.ROW_MAJOR_LAYOUT, config):
            raise ValueError(
                f"{_OP}: preallocated {name} must be {shape} {dtype.name} ROW_MAJOR in {config}, got {got[0]} "
                f"{got[1].name} {got[2].name} in {got[3]}"
            )
    return list(output_tensors)


def all_to_all_dispatch_metadata(
    input_tensor: Tensor,
    expert_indices_tensor: Tensor,
    expert_scores_tensor: Tensor,
    expert_mapping_tensor: Tensor,
    *,
    shared_expert_ids: Sequence[int] | None = None,
    cluster_axis: int | None = None,
    output_tensors: Sequence[Tensor] | None = None,
    num_links: int | None = None,
    drain_sync_tilizer_core: Sequence[int] | None = None,
    worker_mode: WorkerMode = WorkerMode.DIRECT,
    dispatch_algorithm: DispatchAlgorithm = DispatchAlgorithm.SPARSE_MCAST_SHORTEST_PATH,
    worker_core_range_set: pd.CoreRangeSet | None = None,
    mux_core_range_set: Any = None,
    cross_device_semaphore: Any = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """ttnn.experimental.all_to_all_dispatch_metadata's signature (0.81.1 nanobind); see the module docstring.

    num_links None: the emulated mesh's link count, as ttnn takes the routing planes available.
    """
    mesh = input_tensor.device() if isinstance(input_tensor, Tensor) else None
    view = ccl.mesh_view(mesh)
    axis = ccl.check_axis(_OP, cluster_axis, required=True)
    _validate_inputs(input_tensor, expert_indices_tensor, expert_scores_tensor, expert_mapping_tensor, view)
    if shared_expert_ids is not None:
        raise NotImplementedError(f"{_OP}: shared_expert_ids is not described, got {shared_expert_ids!r}")
    if not isinstance(worker_mode, WorkerMode) or worker_mode != WorkerMode.DIRECT:
        raise NotImplementedError(f"{_OP}: worker_mode {worker_mode!r}: only WorkerMode.DIRECT (no fabric mux) runs")
    if not isinstance(dispatch_algorithm, DispatchAlgorithm):
        raise ValueError(f"{_OP}: dispatch_algorithm must be a DispatchAlgorithm, got {dispatch_algorithm!r}")
    if cross_device_semaphore is not None:
        raise NotImplementedError(f"{_OP}: persistent mode (cross_device_semaphore) is not described")
    links = view.num_links if num_links is None else num_links
    if isinstance(links, bool) or not isinstance(links, int) or links < 1:
        raise ValueError(f"{_OP}: num_links must be a positive int, got {num_links!r}")
    topology = ccl.usable_topology(view, None, axis)
    if topology == emu_fabric.Topology.Mesh:
        raise NotImplementedError(
            f"{_OP}: the writer routes over 1D (Linear or Ring) fabrics; the mesh's fabric is {topology}"
        )
    if worker_core_range_set is None:
        (x0, y0), (x1, y1) = DEFAULT_WORKER_CORES
        worker_core_range_set = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(x0, y0), pd.CoreCoord(x1, y1))])
    drain_core = _drain_core_of(drain_sync_tilizer_core, output_tensors)
    dispatch_devices = view.dispatch_devices(axis)
    output, indices_out, scores_out = _outputs(
        mesh, input_tensor, expert_indices_tensor, drain_core, dispatch_devices, output_tensors
    )
    ccl.use_kernel_includes()
    io = [
        input_tensor,
        expert_indices_tensor,
        expert_scores_tensor,
        expert_mapping_tensor,
        output,
        indices_out,
        scores_out,
    ]
    program = dispatch_metadata_program(
        mesh,
        io,
        axis=axis,
        num_links=links,
        topology=topology,
        worker_cores=worker_core_range_set,
        drain_core=drain_core,
        algorithm=dispatch_algorithm,
    )
    generic_op(io, program)
    record_op(_OP, io[:4], io[4:], program, last_run_counters())
    return output, indices_out, scores_out
