"""ttnn.experimental.selective_reduce_combine (tt-metal 0.81.1) on an emulated mesh, with its own kernels.

The combine of tt-metal's optimized DeepSeek-V3 decode path: moe_compute leaves each device's expert
outputs dense in L1 (per local expert, the tokens that chose it, split over worker cores), and this op
sends every (token, expert) row back to the token's device along `cluster_axis`, into row k of
`[K, T, H]`, k being the slot in which the token chose that expert:

    out = selective_reduce_combine(dense_input, dense_activations, dense_token_maps, dense_token_counts,
                                   hidden_size, batch_size, seq_size, select_experts_k, experts, cluster_axis,
                                   topology=..., num_links=..., token_parallel_core_dim=...,
                                   data_parallel_core_dim=..., worker_cores=[...], mux_core_range_set=...)

G = batch_size * seq_size tokens of one dispatch group (the D[A] devices along the axis, T = G / D[A] each),
E = experts / devices local experts. Per device (ROW_MAJOR uint32 DRAM unless said):
- dense_token_counts `[1, 4 E]`: entry e = how many tokens chose local expert e. The reader reads
  align(16 E, 32) bytes of page 0 (the counts, then room for the 3 E words of work split it stashes there),
  so the page must hold them; the rest is scratch.
- dense_token_maps `[E, (G + 1) * 8]`: for local expert e, the group index of its j-th token at [e, 8 j]
  (MAP_STRIDE).
- dense_activations `[1, G * S]`, S >= 2 E + 1 words per row: one row per token that chose a local expert,
  in the order of the maps: [token index, k of local expert 0 .. E-1 (K if not chosen), ...].
- dense_input: the L1 height-sharded expert outputs, here a DRAM bfloat16 tensor `[dp, tp, E * G / tp, P]`:
  [d, t] is the shard of the worker core that handles token-parallel slice t and hidden segment d, P the
  segment (H split into data-parallel segments of at most one fabric packet, the last padded). Within a shard,
  expert e's tokens start at row e * G / tp; core slice t holds expert e's dense tokens from
  sum_{c<t} n_c on, n_c = the even split of the count (earlier slices take the remainder).
Returns `[K, T, H]` bfloat16 per device, zero where no expert sent a row (the output starts as zeros;
a preallocated output_tensor is used as it is).

`selective_reduce_combine_program` builds what the factory builds (0.81.1: the reader.cpp / writer.cpp
kernels on the token-parallel x data-parallel worker cores, their named compile-time args, TensorAccessorArgs,
the DEST_CHIP_ID / DEST_MESH_ID / DIRECTIONS / REPLICATE_GROUP_AXIS defines, CBs c_1..c_4 and the data CB
c_15 over the input's L1 shard, the metadata and compute sync semaphores, the init and cross-device global
semaphores, a link sync semaphore and one fabric mux (V2) client per worker and direction). Emulator
differences, each stated where it is made: the L1 shard is the host's copy of the input's bytes, put in
the CB when the program starts; the mux cores run no kernel (a mux client is an emulated fabric connection
to the mux's neighbour, `fabric.setup_fabric_mux_connection`), with 8 buffers per channel.
Topologies: Linear or Ring (1D fabric); cluster_axis is required.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import torch

from ttnn_moe._C import emu as _emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu import fabric as emu_fabric
from ttnn_moe.emu import types as emu_types
from ttnn_moe.emu.device import MeshDevice
from ttnn_moe.emu.generic_op import generic_op, last_run_counters
from ttnn_moe.emu.mesh import ShardTensorToMesh
from ttnn_moe.emu.tensor import Tensor, device_shards, from_torch
from ttnn_moe.emu.ttmetal import ccl_common as ccl
from ttnn_moe.emu.ttmetal.profiling import record_op
from ttnn_moe.emu.ttmetal.wheel import kernel_include_dirs, wheel_root

_OP = "selective_reduce_combine"
KERNELS = "ttnn/cpp/ttnn/operations/experimental/ccl/moe/selective_reduce_combine/device/kernels/dataflow"
DENSE_TOKEN_MAPS_CB, TOKEN_COUNTS_CB, TOKEN_ACTIVATIONS_CB, CLIENT_INTERFACE_CB, DATA_CB = 1, 2, 3, 4, 15
NUM_PACKET_HEADERS = 3  # data unicast, and the two atomic-increment multicast headers
# Words per dense token map entry: the token index, then padding. The reader reads expert e's map (page e,
# (G + 1) entries) to L1 offset e * page; with 4-word (16 B) entries that page is an odd multiple of 16 B
# for even G, and those DRAM reads would be misaligned on Wormhole (32 B), so entries are 8 words here.
MAP_STRIDE = 8
DRAM_ALIGNMENT = 32  # hal::get_dram_alignment() on Wormhole
BFLOAT16_BYTES = 2
PACKET_HEADER_MAX_BYTES = 96  # HybridMeshPacketHeader, the larger of the two packet headers
# The emulated mux channel's buffer count: the emulated connection's slots (the real factory's own count
# sizes the mux core's L1, which the emulator does not run).
MUX_NUM_BUFFERS = int(emu_fabric.fabric_buffer_slots)


def data_parallel_split(token_bytes: int, max_packet_bytes: int, num_data_parallel_cores: int) -> list[int]:
    """The factory's data_parallel_split: the hidden dim in segments of at most one packet over the cores.
    The factory takes max(cores, token / packet) segments but only `cores` of them: a split that leaves part
    of the token unsent is refused here."""
    need = max(num_data_parallel_cores, token_bytes // max_packet_bytes)
    segment = token_bytes // need
    sizes, left = [], token_bytes
    for _ in range(num_data_parallel_cores):
        step = min(left, segment)
        sizes.append(step)
        left -= step
        if left == 0:
            break
    if left:
        raise ValueError(
            f"{_OP}: a token of {token_bytes} bytes needs {need} segments of at most {max_packet_bytes} bytes, "
            f"but data_parallel_core_dim is {num_data_parallel_cores}"
        )
    if any(s % ccl.L1_ALIGNMENT for s in sizes):
        raise ValueError(
            f"{_OP}: hidden segments of {sizes} bytes are not {ccl.L1_ALIGNMENT}-byte aligned "
            f"(hidden_size {token_bytes // BFLOAT16_BYTES}, data_parallel_core_dim {num_data_parallel_cores})"
        )
    return sizes


@dataclass(frozen=True)
class CombineShape:
    """The op's sizes, as the factory derives them."""

    tokens: int  # G, tokens of one dispatch group
    group_devices: int  # D[A]
    local_experts: int  # E
    k: int
    hidden: int
    token_parallel: int
    segments: tuple[int, ...]  # bytes of each data-parallel segment

    @property
    def tokens_per_device(self) -> int:
        return self.tokens // self.group_devices

    @property
    def segment_buffer_bytes(self) -> int:
        return max(self.segments)

    @property
    def expert_block_bytes(self) -> int:
        return self.segment_buffer_bytes * self.tokens // self.token_parallel

    @property
    def shard_rows(self) -> int:
        return self.local_experts * self.tokens // self.token_parallel


def even_split(count: int, parts: int) -> list[int]:
    """How moe_compute (and the reader) split an expert's dense tokens over the token-parallel cores."""
    return [count // parts + (1 if c < count % parts else 0) for c in range(parts)]


def dense_inputs_from_routing(
    contributions: torch.Tensor, chosen: list[list[list[tuple[int, int]]]], shape: CombineShape, activation_stride: int
) -> dict[str, torch.Tensor]:
    """The per-device input tensors moe_compute leaves, from a routing description, concatenated over devices
    on dim 0 (ShardTensorToMesh(dim=0) gives each device its own).

    contributions: `[devices, E, G, H]`, [d, e, t] the output of device d's local expert e for group token t.
    chosen[d][e]: the (group token, k) pairs of device d's local expert e, in the order its maps list them."""
    devices, experts, tokens, hidden = (int(v) for v in contributions.shape)
    tp, dp = shape.token_parallel, len(shape.segments)
    seg = shape.segment_buffer_bytes // BFLOAT16_BYTES
    counts = torch.zeros(devices, 4 * experts, dtype=torch.int64)
    maps = torch.zeros(devices, experts, (tokens + 1) * MAP_STRIDE, dtype=torch.int64)
    activations = torch.zeros(devices, tokens, activation_stride, dtype=torch.int64)
    dense = torch.zeros(devices, dp, tp, shape.shard_rows, seg, dtype=torch.bfloat16)
    padded = torch.zeros(devices, experts, tokens, dp * seg, dtype=torch.bfloat16)
    padded[..., :hidden] = contributions.to(torch.bfloat16)
    rows_per_expert = tokens // tp
    for d in range(devices):
        k_of: dict[int, list[int]] = {}
        for e in range(experts):
            pairs = chosen[d][e]
            counts[d, e] = len(pairs)
            for j, (t, k) in enumerate(pairs):
                maps[d, e, j * MAP_STRIDE] = t
                k_of.setdefault(t, [shape.k] * experts)[e] = k
            start = 0
            for c, n in enumerate(even_split(len(pairs), tp)):
                for j in range(n):
                    t = pairs[start + j][0]
                    for s in range(dp):
                        dense[d, s, c, e * rows_per_expert + j] = padded[d, e, t, s * seg : (s + 1) * seg]
                start += n
        for row, t in enumerate(sorted(k_of)):
            activations[d, row, 0] = t
            activations[d, row, 1 : 1 + experts] = torch.tensor(k_of[t])
    return {
        "dense_input": dense.reshape(devices * dp, tp, shape.shard_rows, seg),
        "dense_activations": activations.reshape(devices, tokens * activation_stride),
        "dense_token_maps": maps.reshape(devices * experts, (tokens + 1) * MAP_STRIDE),
        "dense_token_counts": counts,
    }


def _group_devices(view: ccl.MeshView, axis: int) -> int:
    return view.rows if axis == 0 else view.cols


def selective_reduce_combine_program(
    mesh: MeshDevice,
    dense_input: Tensor,
    activations: Tensor,
    maps: Tensor,
    counts: Tensor,
    output: Tensor,
    shape: CombineShape,
    *,
    axis: int,
    num_links: int,
    topology,
    worker_cores: Sequence[pd.CoreCoord],
    mux_cores: Sequence[pd.CoreCoord],
) -> pd.MeshProgramDescriptor:
    view = ccl.mesh_view(mesh)
    shards = device_shards(dense_input)
    return ccl.per_device_programs(
        view.rows,
        view.cols,
        lambda row, col: _device_program(
            mesh, view, row, col, shards[row * view.cols + col], activations, maps, counts, output, shape,
            axis=axis, num_links=num_links, topology=topology, worker_cores=worker_cores, mux_cores=mux_cores,
        ),
    )  # fmt: skip


def _noc(mesh: MeshDevice, core: pd.CoreCoord) -> pd.CoreCoord:
    """A worker's NOC coordinates (the same on every device of the mesh)."""
    return mesh.get_devices()[0].worker_core_from_logical_core(core)


def noc_bounding_box(mesh: MeshDevice, cores: Sequence[pd.CoreCoord]) -> tuple[Any, Any, int]:
    xs, ys = [c.x for c in cores], [c.y for c in cores]
    start = _noc(mesh, pd.CoreCoord(min(xs), min(ys)))
    end = _noc(mesh, pd.CoreCoord(max(xs), max(ys)))
    return start, end, (max(xs) - min(xs) + 1) * (max(ys) - min(ys) + 1)


@dataclass(frozen=True)
class WriterFabric:
    """The writer kernel's view of the fabric on one device: its defines, the mesh's part of its named
    compile-time args, and the neighbour each direction's mux client connects to."""

    defines: list[tuple[str, str]]
    named_args: list[tuple[str, int]]
    neighbor_coords: list[tuple[int, int]]
    src_node: Any


def writer_fabric(mesh: MeshDevice, view: ccl.MeshView, row: int, col: int, *, axis: int, topology) -> WriterFabric:
    linearized = row * view.cols + col
    neighbor_coords, directions = ccl.neighbors(view, row, col, topology, axis)
    return WriterFabric(
        defines=[
            ("DEST_CHIP_ID", ccl.stringify(view.chip_ids)),
            ("DEST_MESH_ID", ccl.stringify(view.mesh_ids)),
            ("DIRECTIONS", ccl.stringify(directions)),
            ("REPLICATE_GROUP_AXIS", str(axis)),
        ],
        named_args=[
            ("num_devices", view.num_devices),
            ("src_chip_id", view.chip_ids[linearized]),
            ("mesh_rows", view.rows),
            ("mesh_cols", view.cols),
            ("fabric_max_packet_size_bytes", ccl.max_packet_bytes()),
            ("linearized_mesh_coord", linearized),
            ("topology", ccl.topology_value(topology)),
        ],
        neighbor_coords=list(neighbor_coords),
        src_node=mesh.get_fabric_node_id(pd.MeshCoordinate(row, col)),
    )


def mux_client_args(
    mesh: MeshDevice, program: pd.ProgramDescriptor, core: pd.CoreCoord, fabric: WriterFabric, *,
    link: int, worker_in_link: int, mux_cores: Sequence[pd.CoreCoord],
) -> list[int]:  # fmt: skip
    """A writer core's runtime args for its mux clients: per direction, channel worker_in_link of its link's mux."""
    channel_bytes = ccl.max_packet_bytes() + PACKET_HEADER_MAX_BYTES  # a payload behind its header, as on hardware
    args: list[int] = []
    for n, (r, c) in enumerate(fabric.neighbor_coords):
        mux = _noc(mesh, mux_cores[link * len(fabric.neighbor_coords) + n])
        dst_node = mesh.get_fabric_node_id(pd.MeshCoordinate(r, c))
        args += emu_fabric.setup_fabric_mux_connection(
            fabric.src_node, dst_node, link, program, core, mux_core=mux, channel_id=worker_in_link,
            num_buffers=MUX_NUM_BUFFERS, channel_buffer_size_bytes=channel_bytes,
        )  # fmt: skip
    return args


def _device_program(
    mesh, view, row, col, input_shard, activations, maps, counts, output, shape: CombineShape, *,
    axis, num_links, topology, worker_cores, mux_cores,
):  # fmt: skip
    experts = shape.local_experts
    num_dp = len(shape.segments)
    cores = list(worker_cores[: shape.token_parallel * num_dp])
    grid = ccl.core_range_set(cores)
    maps_page = ccl.align(maps.page_size, ccl.L1_ALIGNMENT)
    counts_bytes = ccl.align(16 * experts, DRAM_ALIGNMENT)
    activations_page = int(activations.page_size)
    aligned_activations_page = ccl.align(activations_page, ccl.L1_ALIGNMENT)
    activation_stride = int(activations.shape[-1]) // shape.tokens
    data_bytes = shape.expert_block_bytes * experts

    data_cb = ccl.cb(DATA_CB, data_bytes, data_bytes, grid, pd.DataFormat.Float16_b)
    # The CB aliases the input's L1 shard: core i holds token-parallel slice i // dp, segment i % dp.
    for i, core in enumerate(cores):
        shard = input_shard[i % num_dp, i // num_dp].contiguous()
        data_cb.add_shard(core, shard.view(torch.int16).numpy().tobytes())
    cbs = [
        data_cb,
        ccl.cb(DENSE_TOKEN_MAPS_CB, ccl.align(experts * maps_page, ccl.L1_ALIGNMENT), maps_page, grid,
               pd.DataFormat.UInt32),
        ccl.cb(TOKEN_COUNTS_CB, counts_bytes, counts_bytes, grid, pd.DataFormat.UInt32),
        ccl.cb(TOKEN_ACTIVATIONS_CB, aligned_activations_page, aligned_activations_page, grid, pd.DataFormat.UInt32),
        ccl.cb(CLIENT_INTERFACE_CB, NUM_PACKET_HEADERS * ccl.CLIENT_INTERFACE_SIZE, ccl.CLIENT_INTERFACE_SIZE, grid,
               pd.DataFormat.UInt32),
    ]  # fmt: skip
    program = pd.ProgramDescriptor(kernels=[], semaphores=[], cbs=cbs)
    init_semaphore = ccl.global_semaphore(program, grid)
    cross_device_semaphore = ccl.global_semaphore(program, grid)
    metadata_sync_sem = _semaphore(program, grid, 1)
    compute_sync_sem = _semaphore(program, grid, 0)
    link_sync_sem = _semaphore(program, grid, 0)

    start, end, box_size = noc_bounding_box(mesh, cores)
    reader_named = [
        ("dense_token_maps_cb_id", DENSE_TOKEN_MAPS_CB),
        ("token_counts_cb_id", TOKEN_COUNTS_CB),
        ("token_activations_cb_id", TOKEN_ACTIVATIONS_CB),
        ("token_activations_page_size_bytes", activations_page),
        ("aligned_token_activations_page_size_bytes", aligned_activations_page),
        ("activations_stride_elm", activation_stride),
        ("dense_token_maps_page_size_bytes", maps_page),
        ("token_counts_page_size_bytes", counts_bytes),
        ("dense_token_maps_stride_elm", MAP_STRIDE),
        ("num_local_experts", experts),
        ("num_token_parallel_cores", shape.token_parallel),
        ("num_data_parallel_cores", num_dp),
        ("global_num_tokens", shape.tokens),
        ("select_experts_k", shape.k),
        ("sync_semaphore_id", metadata_sync_sem),
        ("noc_x_start", start.x),
        ("noc_y_start", start.y),
        ("noc_x_end", end.x),
        ("noc_y_end", end.y),
        ("worker_bounding_box_size", box_size),
    ]
    reader_ct = [*ccl.tensor_accessor_args(maps), *ccl.tensor_accessor_args(counts)]
    reader_ct += ccl.tensor_accessor_args(activations)
    use_init_semaphore = 1  # no preallocated output together with a cross-device semaphore
    writer_named = [
        ("dense_token_maps_cb_id", DENSE_TOKEN_MAPS_CB),
        ("token_counts_cb_id", TOKEN_COUNTS_CB),
        ("data_cb_id", DATA_CB),
        ("token_activations_cb_id", TOKEN_ACTIVATIONS_CB),
        ("activations_stride_elm", activation_stride),
        ("num_token_parallel_cores", shape.token_parallel),
        ("num_data_parallel_cores", num_dp),
        ("use_init_semaphore", use_init_semaphore),
        ("num_local_experts", experts),
        ("global_num_tokens", shape.tokens),
        ("source_token_segment_buffer_size_bytes", shape.segment_buffer_bytes),
        ("source_expert_block_size_bytes", shape.expert_block_bytes),
        ("dense_token_maps_stride_elm", MAP_STRIDE),
        ("alignment", ccl.L1_ALIGNMENT),
        ("compute_sync_semaphore_id", compute_sync_sem),
        ("double_buffer_source", 0),
        ("packet_header_cb_id", CLIENT_INTERFACE_CB),
        ("num_workers_per_link", len(cores) // num_links),
        ("noc_x_start", start.x),
        ("noc_y_start", start.y),
        ("noc_x_end", end.x),
        ("noc_y_end", end.y),
    ]
    fabric = writer_fabric(mesh, view, row, col, axis=axis, topology=topology)
    writer_named += fabric.named_args
    workers_per_link = len(cores) // num_links
    reader_rt, writer_rt = [], []
    offset = 0
    for i, core in enumerate(cores):
        link, worker_in_link = divmod(i, workers_per_link)
        sync_core = _noc(mesh, cores[link * workers_per_link])
        is_first = int(i == 0)
        reader_rt.append((core, [maps.buffer_address(), counts.buffer_address(), activations.buffer_address(),
                                 i // num_dp, is_first]))  # fmt: skip
        segment = shape.segments[i % num_dp]
        args = [output.buffer_address(), segment, offset, init_semaphore, cross_device_semaphore, is_first]
        args += [int(worker_in_link == 0), link_sync_sem, sync_core.x, sync_core.y]
        args += mux_client_args(mesh, program, core, fabric, link=link, worker_in_link=worker_in_link,
                                mux_cores=mux_cores)  # fmt: skip
        writer_rt.append((core, args))
        offset = 0 if (i + 1) % num_dp == 0 else offset + segment
    # Both kernels on NOC 1 (the factory's NOC::NOC_1; its DM_DYNAMIC_NOC mode only matters to kernels that
    # pick a NOC per call, and these name NOC 1 themselves).
    program.kernels = [
        pd.KernelDescriptor(
            kernel_source=ccl.kernel_path(f"{KERNELS}/reader.cpp"),
            core_ranges=grid,
            compile_time_args=reader_ct,
            named_compile_time_args=reader_named,
            runtime_args=reader_rt,
            config=pd.DataMovementConfigDescriptor(pd.DataMovementProcessor.RISCV_1, pd.NOC.RISCV_1_default),
        ),
        pd.KernelDescriptor(
            kernel_source=ccl.kernel_path(f"{KERNELS}/writer.cpp"),
            core_ranges=grid,
            compile_time_args=ccl.tensor_accessor_args(output),
            named_compile_time_args=writer_named,
            defines=fabric.defines,
            runtime_args=writer_rt,
            config=pd.DataMovementConfigDescriptor(pd.DataMovementProcessor.RISCV_0, pd.NOC.RISCV_1_default),
        ),
    ]
    return program


def _semaphore(program: pd.ProgramDescriptor, cores: pd.CoreRangeSet, initial: int) -> int:
    """CreateSemaphore: the next id on the worker cores."""
    sem_id = len(program.semaphores)
    program.semaphores = [*program.semaphores, pd.SemaphoreDescriptor(sem_id, pd.CoreType.WORKER, cores, initial)]
    return sem_id


def _use_kernel_includes() -> None:
    """The CCL kernels' include dirs (ccl_common.use_kernel_includes) and the wheel's root, as tt-metal's JIT has
    it: the writer includes the MoE helpers as `ttnn/cpp/ttnn/operations/...`."""
    root = wheel_root()
    wanted = [*kernel_include_dirs(root), str(root / "ttnn"), str(root)]
    if list(_emu.kernel_include_dirs()) != wanted:
        _emu.set_kernel_include_dirs(wanted)


def _check_tensor(name: str, t, dtype, shape: list[int]) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{_OP}: {name} must be an emulator Tensor, got {type(t).__name__}")
    if t.layout != emu_types.ROW_MAJOR_LAYOUT or t.dtype != dtype or list(t.shape) != shape:
        raise ValueError(
            f"{_OP}: {name} must be a ROW_MAJOR {dtype.name} tensor of shape {shape} per device, got "
            f"{list(t.shape)} {t.dtype.name} {t.layout.name}"
        )


def _check_int(name: str, value, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{_OP}: {name} must be an int >= {low}, got {value!r}")
    return value


def _cores_of(name: str, cores) -> list[pd.CoreCoord]:
    if isinstance(cores, pd.CoreRangeSet):
        return list(cores.cores())
    listed = list(cores)
    if not all(isinstance(c, pd.CoreCoord) for c in listed):
        raise TypeError(f"{_OP}: {name} must be CoreCoords or a CoreRangeSet, got {cores!r}")
    return listed


def selective_reduce_combine(
    dense_input_tensor: Tensor,
    dense_activations_tensor: Tensor,
    dense_token_maps_tensor: Tensor,
    dense_token_counts_tensor: Tensor,
    hidden_size: int,
    batch_size: int,
    seq_size: int,
    select_experts_k: int,
    experts: int,
    cluster_axis: int | None,
    *,
    topology: Any = None,
    num_links: int,
    token_parallel_core_dim: int,
    data_parallel_core_dim: int,
    worker_cores: Any,
    mux_core_range_set: Any,
    memory_config: Any = None,
    output_tensor: Tensor | None = None,
    optional_cross_device_semaphore: Any = None,
) -> Tensor:
    """ttnn.experimental.selective_reduce_combine's signature (0.81.1 nanobind); see the module docstring."""
    mesh = dense_input_tensor.device() if isinstance(dense_input_tensor, Tensor) else None
    view = ccl.mesh_view(mesh)
    axis = ccl.check_axis(_OP, cluster_axis, required=True)
    if optional_cross_device_semaphore is not None:
        raise ValueError(f"{_OP}: optional_cross_device_semaphore is not emulated (the op makes its own)")
    usable = ccl.usable_topology(view, topology, axis)
    if usable not in (emu_fabric.Topology.Linear, emu_fabric.Topology.Ring):
        raise ValueError(f"{_OP}: topology must be Linear or Ring (the writer's routes are 1D), got {usable!r}")
    for name, value in (("hidden_size", hidden_size), ("batch_size", batch_size), ("seq_size", seq_size),
                        ("select_experts_k", select_experts_k), ("experts", experts), ("num_links", num_links),
                        ("token_parallel_core_dim", token_parallel_core_dim),
                        ("data_parallel_core_dim", data_parallel_core_dim)):  # fmt: skip
        _check_int(name, value)
    if experts % view.num_devices:
        raise ValueError(f"{_OP}: {experts} experts do not split evenly over {view.num_devices} devices")
    group = _group_devices(view, axis)
    tokens = batch_size * seq_size
    if tokens % group:
        raise ValueError(f"{_OP}: batch_size * seq_size = {tokens} tokens must divide by the {group} devices of axis")
    if tokens % token_parallel_core_dim:
        raise ValueError(f"{_OP}: {tokens} tokens must divide by token_parallel_core_dim {token_parallel_core_dim}")
    segments = data_parallel_split(hidden_size * BFLOAT16_BYTES, ccl.max_packet_bytes(), data_parallel_core_dim)
    local_experts = experts // view.num_devices
    shape = CombineShape(tokens, group, local_experts, select_experts_k, hidden_size, token_parallel_core_dim,
                         tuple(segments))  # fmt: skip
    workers = _cores_of("worker_cores", worker_cores)
    num_workers = token_parallel_core_dim * len(segments)
    if len(workers) < num_workers:
        raise ValueError(f"{_OP}: worker_cores has {len(workers)} cores, the op needs {num_workers}")
    if num_workers % num_links:
        raise ValueError(f"{_OP}: {num_workers} worker cores do not split evenly over num_links {num_links}")
    if num_links > view.num_links:
        raise ValueError(f"{_OP}: num_links {num_links} exceeds the mesh's {view.num_links} fabric links")
    mux = _cores_of("mux_core_range_set", mux_core_range_set)
    directions = max(
        len(ccl.neighbors(view, r, c, usable, axis)[0]) for r in range(view.rows) for c in range(view.cols)
    )
    need_mux = num_links * directions
    if len(mux) < need_mux:
        raise ValueError(f"{_OP}: mux_core_range_set has {len(mux)} cores, {num_links} links need {need_mux}")
    overlap = {(c.x, c.y) for c in mux} & {(c.x, c.y) for c in workers[:num_workers]}
    if overlap:
        raise ValueError(f"{_OP}: mux cores {sorted(overlap)} are also worker cores")

    seg = shape.segment_buffer_bytes // BFLOAT16_BYTES
    _check_tensor("dense_input_tensor", dense_input_tensor, emu_types.bfloat16,
                  [len(segments), token_parallel_core_dim, shape.shard_rows, seg])  # fmt: skip
    activation_width = int(dense_activations_tensor.shape[-1]) if isinstance(dense_activations_tensor, Tensor) else 0
    if activation_width % tokens or activation_width // tokens < 1 + local_experts:
        raise ValueError(
            f"{_OP}: dense_activations_tensor's last dim ({activation_width}) must be {tokens} tokens times a row "
            f"of at least {1 + local_experts} words"
        )
    _check_tensor("dense_activations_tensor", dense_activations_tensor, emu_types.uint32, [1, activation_width])
    _check_tensor("dense_token_maps_tensor", dense_token_maps_tensor, emu_types.uint32,
                  [local_experts, (tokens + 1) * MAP_STRIDE])  # fmt: skip
    _check_tensor("dense_token_counts_tensor", dense_token_counts_tensor, emu_types.uint32, [1, 4 * local_experts])

    out_shape = [select_experts_k, shape.tokens_per_device, hidden_size]
    if output_tensor is None:
        output_tensor = from_torch(
            torch.zeros([view.num_devices * select_experts_k, *out_shape[1:]], dtype=torch.bfloat16),
            dtype=emu_types.bfloat16,
            layout=emu_types.ROW_MAJOR_LAYOUT,
            device=mesh,
            memory_config=memory_config,
            mesh_mapper=ShardTensorToMesh(mesh, dim=0),
        )
    else:
        _check_tensor("output_tensor", output_tensor, emu_types.bfloat16, out_shape)
    _use_kernel_includes()
    program = selective_reduce_combine_program(
        mesh, dense_input_tensor, dense_activations_tensor, dense_token_maps_tensor, dense_token_counts_tensor,
        output_tensor, shape, axis=axis, num_links=num_links, topology=usable, worker_cores=workers, mux_cores=mux,
    )  # fmt: skip
    io = [dense_input_tensor, dense_activations_tensor, dense_token_maps_tensor, dense_token_counts_tensor]
    generic_op([*io, output_tensor], program)
    record_op(_OP, io, [output_tensor], program, last_run_counters())
    return output_tensor
