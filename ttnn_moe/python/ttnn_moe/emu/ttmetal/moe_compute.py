"""ttnn.experimental.moe_compute (tt-metal 0.81.1) on the emulator, with the wheel's kernels.

How a layer calls it (per device: tokens `[1, T, H]` bfloat16, indices `[1, T, K]` uint16, scores `[1, T, K]`
bfloat16 as all_to_all_dispatch_metadata leaves them, the mapping `[D, E]` uint16 replicated):

    weights = place_weights(mesh, w0, w1, w2)  # [D, 1, E, H, N], [D, 1, E, H, N], [D, 1, E, N, H], once
    # FullCcl: the dispatch group along cluster_axis has several devices (TG, QUAD: cluster_axis=0)
    out, activation, e_t = moe_compute_full_ccl(tokens, indices, scores, mapping, weights, cluster_axis=0,
                                                mux_core_range_set=mux_cores, num_links=1,
                                                output_height_shard_dim=4, optional_output_tensor=None)
    # out: [K, T/D, H] per device, what selective_reduce_combine returns: row (k, t) the output of the expert
    # token t chose in slot k where its group holds it, else zero; the layer weights by the scores and sums.
    # LocalOutput: the cluster axis has one device
    out, activation, e_t = moe_compute_local_output(tokens, indices, scores, mapping, weights, cluster_axis=0)

moe_compute is the expert stage of tt-metal's optimized DeepSeek-V3 decode path (all_to_all_dispatch_metadata ->
moe_compute -> selective_reduce_combine -> deepseek_moe_reduce_scatter). On every device it finds the tokens the
dispatch delivered to its local experts, tilizes them 32 tokens (one chunk) at a time and streams the chunks to a
ring of 12 matmul cores (one beside each DRAM bank on a Wormhole), which run SwiGLU(x W0, x W1) W2 per expert
against the weights prepared for that ring.

This module builds what its factory builds for the tilize stage (moe_compute_program_factory.cpp, 0.81.1 kernels
tilize_reader.cpp / tilize_writer.cpp / tilize_compute.cpp on the tilize cores): the Wormhole core layout
(tilize cores (6, 9), (6, 8), (5, 9), (5, 8), the first the drain, pruned until they split the hidden dim; the
matmul ring beside the DRAM banks; the combine cores in (5, 0) - (6, 7)), the tilize CBs c_3 .. c_14, the
shared chunk CB c_0 on every core of the grid and the per-expert count CB c_2 on every worker core, the tilize,
metadata and chunk semaphores with tt-metal's id allocation, the kernels' named compile-time args, their seven
TensorAccessorArgs and the per-core runtime args (work split of the hidden dim, token ranges, mcast groups).

Per device: the tokens `[1, T, H]` bfloat16 (DRAM, the dispatch's output: T tokens of the dispatch group along the
cluster axis), expert indices and scores `[1, T, K]` uint16 / bfloat16 (the dispatch's L1 shard on the drain
core), the expert mapping `[D, E]` uint16. What the stage produces: the per-expert token counts (in CB c_2 of
every worker core), the e_t tensor (per local expert the (token, k) entries of the tokens that chose it, 16-byte
entries, ended by -1) and the expert-activation rows (per activated token: its id, the k slot of each local expert,
the score bits) in L1, and the tilized chunks the matmul cores receive in c_0 (double buffered).

Emulator differences: the indices and scores CBs hold a host copy of the L1 shard's bytes (added when the
program starts) instead of aliasing the shard's buffer, and the chunk and count CBs are not bound to the L1
output tensors that back them on hardware (the emulator's CBs are not placed at a buffer's address), so those
two outputs are read where the matmul cores receive them. On FullCcl the combine's kernels are built into the
same program (moe_compute_combine: the CB, semaphore and argument facts of that part).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import torch

from ttnn_moe._C import emu as _emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu import fabric as emu_fabric
from ttnn_moe.emu import types as emu_types
from ttnn_moe.emu.generic_op import generic_op, last_run_counters
from ttnn_moe.emu.mesh import ShardTensorToMesh
from ttnn_moe.emu.tensor import Tensor, device_shards, from_torch
from ttnn_moe.emu.ttmetal import ccl_common as ccl
from ttnn_moe.emu.ttmetal import moe_compute_combine as fused
from ttnn_moe.emu.ttmetal import moe_compute_weights as mw
from ttnn_moe.emu.ttmetal.profiling import record_op
from ttnn_moe.emu.ttmetal.selective_reduce_combine import _cores_of

_OP = "moe_compute"
_KERNELS = "ttnn/cpp/ttnn/operations/experimental/ccl/moe_compute/device/kernels"
TILE = 32
TILE_BYTES = 2048  # a bfloat16 tile
TOKENS_PER_CHUNK = 32  # the factory's chunk: one tile row of tokens
E_T_ENTRY_BYTES = 16  # an e_t entry: token id, k slot, padding to the L1 alignment
RING_CORES = 12  # the Wormhole matmul ring: one core per DRAM bank
NUM_DRAM_BANKS = 12
DRAM_ALIGNMENT = 32  # Wormhole

# CB indices of the factory.
TILIZE_OUTPUT_CB = 0  # c_0: tilize output on the tilize cores, the chunk input of the matmul cores
MATMUL_WRITER_CB = 1  # c_1: the ring's W2 output, in the same memory as c_0
PER_EXPERT_TOKENS_CB = 2
TOTAL_CHUNKS_CB = 3
INDICES_CB = 4
MAPPING_CB = 5
SCORES_CB = 6
E_T_CB = 7
TILIZE_INPUT_CB = 8
EXPERT_ACTIVATION_CB = 9
BRISC_E_T_CB = 10
BRISC_EXPERT_COUNTS_CB = 11
BRISC_EXPERT_ACTIVATION_CB = 12
BRISC_ACTIVATED_COUNT_CB = 13
REMOTE_COUNTS_CB = 14

# Wormhole layout (the factory's get_layout): the tilize cores, the drain first, and the combine cores' range.
WORMHOLE_TILIZE_CORES = ((6, 9), (6, 8), (5, 9), (5, 8))
WORMHOLE_COMBINE_RANGE = ((5, 0), (6, 7))


def _coord(xy) -> pd.CoreCoord:
    return pd.CoreCoord(int(xy[0]), int(xy[1]))


def dram_bank_worker_cores(device) -> list[pd.CoreCoord]:
    """The worker core beside each DRAM bank, by bank id (get_optimal_dram_bank_to_logical_worker_assignment on a
    Wormhole): bank b's NOC column is 0 (b < 6) or 5, its row 1 + 2 (b mod 6); its worker is the next column."""
    grid = device.compute_with_storage_grid_size()
    by_noc = {}
    for y in range(grid.y):
        for x in range(grid.x):
            noc = device.worker_core_from_logical_core(pd.CoreCoord(x, y))
            by_noc[(noc.x, noc.y)] = pd.CoreCoord(x, y)
    cores = []
    for bank in range(NUM_DRAM_BANKS):
        noc = (1 if bank < 6 else 6, 1 + 2 * (bank % 6))
        if noc not in by_noc:
            raise ValueError(
                f"{_OP}: the {grid.x}x{grid.y} grid has no worker beside DRAM bank {bank} (NOC {noc}); the matmul "
                "ring needs the full Wormhole grid (8x10)"
            )
        cores.append(by_noc[noc])
    return cores


def ring_banks(device, matmul: Sequence[pd.CoreCoord]) -> list[int]:
    """The factory's ring order: the DRAM banks (matmul cores by bank id) sorted by their core's NOC coordinates,
    descending y, then descending x, so the ring flows along NOC 1's routes. Ring position i holds bank [i]'s core;
    its neighbour is position i + 1."""
    nocs = [device.worker_core_from_logical_core(core) for core in matmul]
    return sorted(range(len(matmul)), key=lambda bank: (-nocs[bank].y, -nocs[bank].x))


@dataclass(frozen=True)
class CoreLayout:
    """The factory's get_cores: every core set the program uses, in the factory's order."""

    tilize: tuple[pd.CoreCoord, ...]  # [0] the drain; the first half the primary mcast group
    matmul: tuple[pd.CoreCoord, ...]  # by DRAM bank id
    combine: tuple[pd.CoreCoord, ...]  # sorted by (x, y)
    grid: pd.CoreCoord

    def noc(self, device, core: pd.CoreCoord) -> pd.CoreCoord:
        return device.worker_core_from_logical_core(core)


def core_layout(device, hidden_size: int, token_parallel: int, data_parallel: int) -> CoreLayout:
    grid = device.compute_with_storage_grid_size()
    tilize = [_coord(c) for c in WORMHOLE_TILIZE_CORES if c[0] < grid.x and c[1] < grid.y]
    if not tilize:
        raise ValueError(f"{_OP}: no tilize core fits the {grid.x}x{grid.y} grid")
    hidden_tiles = hidden_size // TILE
    while len(tilize) > 1 and hidden_tiles % len(tilize):
        tilize.pop()
    matmul = dram_bank_worker_cores(device)
    (x0, y0), (x1, y1) = WORMHOLE_COMBINE_RANGE
    box = [pd.CoreCoord(x, y) for y in range(y0, y1 + 1) for x in range(x0, x1 + 1)]  # select_from_corerangeset
    count = token_parallel * data_parallel
    if count > len(box):
        raise ValueError(f"{_OP}: {count} combine cores do not fit the {len(box)} of the combine range")
    combine = sorted(box[:count], key=lambda c: (c.x, c.y))
    layout = CoreLayout(tuple(tilize), tuple(matmul), tuple(combine), grid)
    for a, b in (("tilize", "matmul"), ("combine", "tilize"), ("combine", "matmul")):
        if _boxes_intersect(_bounding_box(getattr(layout, a)), _bounding_box(getattr(layout, b))):
            raise ValueError(f"{_OP}: the {a} and {b} bounding boxes overlap")
    return layout


def _bounding_box(cores: Sequence[pd.CoreCoord]) -> tuple[int, int, int, int]:
    xs, ys = [c.x for c in cores], [c.y for c in cores]
    return min(xs), min(ys), max(xs), max(ys)


def _boxes_intersect(a, b) -> bool:
    return not (a[2] < b[0] or b[2] < a[0] or a[3] < b[1] or b[3] < a[1])


def _box_size(box) -> int:
    return (box[2] - box[0] + 1) * (box[3] - box[1] + 1)


class _SemaphoreAllocator:
    """CreateSemaphore's id choice: the smallest id free on every core of the range."""

    def __init__(self):
        self.used: dict[tuple[int, int], set[int]] = {}
        self.descriptors: list[pd.SemaphoreDescriptor] = []

    def create(self, cores: Sequence[pd.CoreCoord], initial: int = 0) -> int:
        keys = [(c.x, c.y) for c in cores]
        sem_id = 0
        while any(sem_id in self.used.get(k, set()) for k in keys):
            sem_id += 1
        for k in keys:
            self.used.setdefault(k, set()).add(sem_id)
        self.descriptors.append(pd.SemaphoreDescriptor(sem_id, pd.CoreType.WORKER, ccl.core_range_set(cores), initial))
        return sem_id


@dataclass(frozen=True)
class TilizeShape:
    tokens: int  # T: tokens of the dispatch group
    hidden: int
    k: int
    experts: int  # all experts (the mapping's width)
    local_experts: int
    num_devices: int  # the mapping's rows

    @property
    def hidden_tiles(self) -> int:
        return self.hidden // TILE

    @property
    def activation_row_bytes(self) -> int:
        return ccl.align((2 * self.local_experts + 1) * 4, ccl.L1_ALIGNMENT)

    @property
    def e_t_page_bytes(self) -> int:
        return (self.tokens + 1) * E_T_ENTRY_BYTES

    @property
    def counts_page_bytes(self) -> int:
        return ccl.align(self.local_experts * 4, ccl.L1_ALIGNMENT)


@dataclass
class TilizeStage:
    """The tilize stage of one device's program, and what the matmul side needs of it."""

    program: pd.ProgramDescriptor
    semaphores: dict[str, int]
    layout: CoreLayout
    drain_noc: pd.CoreCoord
    shared_cb_pages: int


def _l1_aligned_rows(rows: torch.Tensor, row_bytes: int) -> bytes:
    """A [T, n] 16-bit tensor as the L1 shard holds it: each row padded to the L1 page stride."""
    raw = rows.contiguous().view(torch.int16).numpy().tobytes()
    stride = rows.shape[-1] * 2
    return b"".join(raw[i * stride : (i + 1) * stride].ljust(row_bytes, b"\0") for i in range(rows.shape[0]))


def tilize_stage_program(
    device,
    linearized: int,
    mesh_rows: int,
    mesh_cols: int,
    cluster_axis: int,
    tokens_tensor: Tensor,
    indices: torch.Tensor,
    scores: torch.Tensor,
    mapping: Tensor,
    expert_activation: Tensor,
    e_t: Tensor,
    shape: TilizeShape,
    layout: CoreLayout,
    compute_only: bool = True,
    local_output: bool = False,
) -> TilizeStage:
    """One device's tilize stage (the factory's tilize CBs, semaphores and kernels, and the chunk and count CBs it
    shares with the matmul cores). `indices` and `scores`: this device's `[T, K]` rows (uint16 / bfloat16)."""
    tilize, matmul, combine = list(layout.tilize), list(layout.matmul), list(layout.combine)
    grid_cores = [pd.CoreCoord(x, y) for y in range(layout.grid.y) for x in range(layout.grid.x)]
    workers = _unique(tilize + matmul + combine)
    n_tilize, tokens, experts = len(tilize), shape.tokens, shape.local_experts
    tilize_set = ccl.core_range_set(tilize)

    sems = _SemaphoreAllocator()
    names = {}
    names["partial_metadata_ready"] = sems.create(tilize)
    names["tilize_chunk_ready"] = sems.create(tilize)
    names["previous_chunk_sent"] = sems.create(tilize)
    names["initial_gather"] = sems.create(tilize)
    names["ring"] = sems.create(matmul)
    names["metadata_ready"] = sems.create(tilize + matmul)
    names["matmul_chunk_available"] = sems.create(tilize + matmul)
    names["matmul_chunk_ready"] = sems.create(tilize + matmul)
    # Without combine kernels (ComputeOnly, LocalOutput) the combine semaphores exist on the matmul cores only (the
    # kernels look up their addresses).
    (x0, y0), (x1, y1) = WORMHOLE_COMBINE_RANGE
    combine_range = [pd.CoreCoord(x, y) for y in range(y0, y1 + 1) for x in range(x0, x1 + 1)]
    no_combine = compute_only or local_output
    names["combine_sync"] = sems.create(matmul if no_combine else combine_range)
    names["matmul_combine_sync"] = sems.create(matmul if no_combine else _unique(combine + matmul))

    # Work split of a token over the tilize cores (split_work_to_cores of equal subtokens: H splits evenly).
    input_page = int(tokens_tensor.page_size)
    subtoken = ccl.align(ccl.div_up(input_page, n_tilize), ccl.L1_ALIGNMENT)
    if subtoken * n_tilize != input_page:
        raise ValueError(f"{_OP}: a token of {input_page} bytes does not split into {n_tilize} aligned subtokens")
    tile_width_bytes = TILE * 2
    shared_cb_pages = 2 * shape.hidden_tiles  # [2, 32, H] of one core's shard of the shared output, in tiles
    indices_page = ccl.align(shape.k * 2, ccl.L1_ALIGNMENT)
    mapping_page = ccl.align(int(mapping.page_size), ccl.L1_ALIGNMENT)
    if shape.num_devices > 1 and mapping_page % DRAM_ALIGNMENT:
        raise ValueError(
            f"{_OP}: the reader reads the expert mapping's {shape.num_devices} rows of {shape.experts} experts into L1 "
            f"at a {mapping_page}-byte stride, which breaks Wormhole's {DRAM_ALIGNMENT}-byte DRAM read alignment; "
            "the mapping needs a multiple of 16 experts"
        )
    remote_entry = ccl.align((experts + 1) * 4, ccl.L1_ALIGNMENT)
    u32 = pd.DataFormat.UInt32

    # The shared output buffer backs two CBs on every core of the grid: c_0 (the tilize output, the ring's chunk
    # input) and c_1 (the ring's W2 output), one memory as on the hardware.
    shared_cb = ccl.cb(TILIZE_OUTPUT_CB, shared_cb_pages * TILE_BYTES, TILE_BYTES, ccl.core_range_set(grid_cores),
                       pd.DataFormat.Float16_b)  # fmt: skip
    shared_cb.format_descriptors = [
        *shared_cb.format_descriptors,
        pd.CBFormatDescriptor(MATMUL_WRITER_CB, pd.DataFormat.Float16_b, TILE_BYTES),
    ]
    indices_cb = ccl.cb(INDICES_CB, tokens * indices_page, indices_page, tilize_set, pd.DataFormat.UInt16)
    indices_cb.add_shard(tilize[0], _l1_aligned_rows(indices.to(torch.int32).to(torch.int16), indices_page))
    scores_cb = ccl.cb(SCORES_CB, tokens * indices_page, indices_page, tilize_set, pd.DataFormat.Float16_b)
    scores_cb.add_shard(tilize[0], _l1_aligned_rows(scores.to(torch.bfloat16), indices_page))
    cbs = [
        shared_cb,
        ccl.cb(PER_EXPERT_TOKENS_CB, shape.counts_page_bytes, shape.counts_page_bytes, ccl.core_range_set(workers),
               u32),
        ccl.cb(TOTAL_CHUNKS_CB, ccl.L1_ALIGNMENT, ccl.L1_ALIGNMENT, tilize_set, u32),
        indices_cb,
        ccl.cb(MAPPING_CB, shape.num_devices * mapping_page, mapping_page, tilize_set, pd.DataFormat.UInt16),
        scores_cb,
        ccl.cb(E_T_CB, experts * shape.e_t_page_bytes, shape.e_t_page_bytes, tilize_set, u32),
        ccl.cb(TILIZE_INPUT_CB, TOKENS_PER_CHUNK * subtoken, subtoken, tilize_set, pd.DataFormat.Float16_b),
        ccl.cb(EXPERT_ACTIVATION_CB, tokens * shape.activation_row_bytes, shape.activation_row_bytes, tilize_set, u32),
        ccl.cb(BRISC_E_T_CB, (tokens // 2) * E_T_ENTRY_BYTES * experts, (tokens // 2) * E_T_ENTRY_BYTES * experts,
               tilize_set, u32),
        ccl.cb(BRISC_EXPERT_COUNTS_CB, 4 * experts, 4 * experts, tilize_set, u32),
        ccl.cb(BRISC_EXPERT_ACTIVATION_CB, shape.activation_row_bytes * (tokens // 2),
               shape.activation_row_bytes * (tokens // 2), tilize_set, u32),
        ccl.cb(BRISC_ACTIVATED_COUNT_CB, 4, 4, tilize_set, u32),
        ccl.cb(REMOTE_COUNTS_CB, remote_entry * max(n_tilize - 1, 1), remote_entry, tilize_set, u32),
    ]  # fmt: skip

    noc = lambda core: layout.noc(device, core)  # noqa: E731
    tilize_box, matmul_box = _bounding_box(tilize), _bounding_box(matmul)
    all_box = _bounding_box(workers)
    drain = noc(tilize[0])
    combine_sync = noc(combine[0])

    def corners(box):
        start, end = noc(pd.CoreCoord(box[0], box[1])), noc(pd.CoreCoord(box[2], box[3]))
        return start.x, start.y, end.x, end.y

    named = {
        "tilize_input_cb_id": TILIZE_INPUT_CB,
        "tilize_output_cb_id": TILIZE_OUTPUT_CB,
        "total_chunks_cb_id": TOTAL_CHUNKS_CB,
        "indices_tensor_cb_id": INDICES_CB,
        "scores_tensor_cb_id": SCORES_CB,
        "mapping_tensor_cb_id": MAPPING_CB,
        "e_t_cb_id": E_T_CB,
        "expert_activation_cb_id": EXPERT_ACTIVATION_CB,
        "per_expert_total_tokens_cb_id": PER_EXPERT_TOKENS_CB,
        "brisc_e_t_cb_id": BRISC_E_T_CB,
        "brisc_expert_counts_cb_id": BRISC_EXPERT_COUNTS_CB,
        "brisc_expert_activation_cb_id": BRISC_EXPERT_ACTIVATION_CB,
        "brisc_activated_count_cb_id": BRISC_ACTIVATED_COUNT_CB,
        "remote_counts_cb_id": REMOTE_COUNTS_CB,
        "l1_alignment": ccl.L1_ALIGNMENT,
        "e_t_entry_size": E_T_ENTRY_BYTES,
        "mapping_pages": shape.num_devices,
        "shared_cb_num_pages": shared_cb_pages,
        "indices_page_size": shape.k * 2,
        "per_expert_total_tokens_output_page_size": shape.counts_page_bytes,
        "expert_activation_output_page_size": int(expert_activation.page_size),
        "e_t_output_page_size": shape.e_t_page_bytes,
        "tilize_output_page_size": TILE_BYTES,
        "aligned_indices_page_size": indices_page,
        "aligned_mapping_page_size": mapping_page,
        "aligned_scores_page_size": indices_page,
        "tokens": tokens,
        "hidden_size": shape.hidden,
        "remote_counts_entry_size": remote_entry,
        "experts": shape.experts,
        "experts_per_device": experts,
        "selected_experts_k": shape.k,
        "tokens_per_chunk": TOKENS_PER_CHUNK,
        "num_devices": mesh_rows * mesh_cols,
        "mesh_rows": mesh_rows,
        "mesh_cols": mesh_cols,
        "linearized_mesh_coord": linearized,
        "cluster_axis": cluster_axis,
        "drain_core_noc_x": drain.x,
        "drain_core_noc_y": drain.y,
        "primary_mcast_gather_group_num_cores": n_tilize // 2,
        "secondary_mcast_gather_group_num_cores": n_tilize - n_tilize // 2,
        "num_tilize_cores": n_tilize,
        "tilize_bounding_box_num_cores": _box_size(tilize_box),
        "num_matmul_cores": len(matmul),
        "matmul_bounding_box_num_cores": _box_size(matmul_box),
        "all_worker_cores_bounding_box_num_cores": _box_size(all_box),
        "partial_metadata_ready_semaphore_id": names["partial_metadata_ready"],
        "metadata_ready_semaphore_id": names["metadata_ready"],
        "matmul_chunk_available_semaphore_id": names["matmul_chunk_available"],
        "tilize_chunk_ready_semaphore_id": names["tilize_chunk_ready"],
        "matmul_chunk_ready_semaphore_id": names["matmul_chunk_ready"],
        "previous_chunk_sent_semaphore_id": names["previous_chunk_sent"],
        "initial_gather_semaphore_id": names["initial_gather"],
        "combine_sync_semaphore_id": names["combine_sync"],
        "combine_sync_noc_x": combine_sync.x,
        "combine_sync_noc_y": combine_sync.y,
        "compute_only": int(compute_only),
        "local_output": int(local_output),
    }
    for prefix, box in (
        ("tilize_mcast", tilize_box),
        ("matmul_mcast", matmul_box),
        ("all_worker_cores_mcast", all_box),
    ):
        sx, sy, ex, ey = corners(box)
        named.update({f"{prefix}_start_x": sx, f"{prefix}_start_y": sy, f"{prefix}_end_x": ex, f"{prefix}_end_y": ey})
    ct = []
    for t in (tokens_tensor, None, None, mapping, None, expert_activation, e_t):
        # The indices, scores and count tensors are L1 shards the kernels reach through their CBs, never through
        # these accessors: they get an interleaved L1 encoding of their page.
        ct += ccl.tensor_accessor_args(t) if t is not None else list(_l1_accessor_args(indices_page))

    primary = n_tilize // 2
    group_sizes = [subtoken * primary, subtoken * (n_tilize - primary)]
    reader_rt, writer_rt, compute_rt = [], [], []
    per_core_tokens = tokens // n_tilize
    noc_list = [v for core in tilize for v in (noc(core).x, noc(core).y)]
    for i, core in enumerate(tilize):
        gather = noc(tilize[0] if i < primary else tilize[primary])
        args = [
            tokens_tensor.buffer_address(), 0, 0, mapping.buffer_address(), 0,
            expert_activation.buffer_address(), e_t.buffer_address(),
            int(i == 0), int(i == primary), gather.x, gather.y,
            i * subtoken, (i if i < primary else i - primary) * subtoken, group_sizes[0 if i < primary else 1],
            subtoken, i * per_core_tokens, tokens if i == n_tilize - 1 else (i + 1) * per_core_tokens, i,
        ]  # fmt: skip
        reader_rt.append((core, args + noc_list))
        writer_rt.append((core, args + noc_list))
        compute_rt.append((core, [subtoken // tile_width_bytes]))
    named_list = sorted(named.items())
    program = pd.ProgramDescriptor(kernels=[], semaphores=sems.descriptors, cbs=cbs)
    program.kernels = [
        pd.KernelDescriptor(
            kernel_source=ccl.kernel_path(f"{_KERNELS}/tilize_reader.cpp"), core_ranges=tilize_set,
            compile_time_args=ct, named_compile_time_args=named_list, runtime_args=reader_rt,
            config=pd.DataMovementConfigDescriptor(pd.DataMovementProcessor.RISCV_1, pd.NOC.RISCV_1_default),
        ),
        pd.KernelDescriptor(
            kernel_source=ccl.kernel_path(f"{_KERNELS}/tilize_writer.cpp"), core_ranges=tilize_set,
            compile_time_args=ct, named_compile_time_args=named_list, runtime_args=writer_rt,
            config=pd.DataMovementConfigDescriptor(pd.DataMovementProcessor.RISCV_0, pd.NOC.RISCV_1_default),
        ),
        pd.KernelDescriptor(
            kernel_source=ccl.kernel_path(f"{_KERNELS}/tilize_compute.cpp"), core_ranges=tilize_set,
            named_compile_time_args=sorted({
                "tilize_input_cb_id": TILIZE_INPUT_CB, "tilize_output_cb_id": TILIZE_OUTPUT_CB,
                "total_chunks_cb_id": TOTAL_CHUNKS_CB, "tokens_per_chunk": TOKENS_PER_CHUNK,
                "max_tiles_per_local_chunk": subtoken // tile_width_bytes, "shared_cb_num_pages": shared_cb_pages,
            }.items()),
            runtime_args=compute_rt, config=pd.ComputeConfigDescriptor(),
        ),
    ]  # fmt: skip
    return TilizeStage(program, names, layout, drain, shared_cb_pages)


# Matmul-ring CBs of the factory (c_0, c_1 and c_2 are set up with the tilize stage).
WEIGHT_CB = 3
COMPUTE_READY_CB = 4
WRITER_READY_CB = 5
IN2_CB = 6
METADATA_CB = 7
LOCAL_OUTPUT_MAP_CB = 9
BFP4_TILE_BYTES = 576
NOC_MAX_BURST_BYTES = 8192  # Wormhole
SILU = 0  # MoEActivationFunction::SILU: silu(x W0) * (x W1)


def add_matmul_stage(
    stage: TilizeStage,
    device,
    weights: mw.RingWeights,
    e_t: Tensor,
    output: Tensor,
    shape: TilizeShape,
    token_parallel: int,
    data_parallel: int,
    token_expert_row_offset: int | None = None,
) -> pd.ProgramDescriptor:
    """The factory's matmul ring on a tilize stage: dm0 streams the weights, compute runs SwiGLU per chunk of 32
    tokens and the ring all-to-all of the intermediate slices. With `token_expert_row_offset` None (LocalOutput,
    a cluster axis of extent 1) dm1 writes every token's rows into `output` `[K, T, H]` (page k T + t) from the
    e_t entries; else (FullCcl) it stages them on the combine cores, halves of that many rows, for the combine
    kernels (moe_compute_combine), and `output` is not used."""
    local_output = token_expert_row_offset is None
    program, layout = stage.program, stage.layout
    ring = list(layout.matmul)
    cores = ccl.core_range_set(ring)
    ht, nt, n = weights.hidden_tiles, weights.intermediate_tiles, len(ring)
    tiles_per_block = 2 * weights.tiles_per_txn
    widest = ccl.div_up(nt, n)
    stride = max(widest + widest % 2, 4)
    in2_tiles = max(widest, 2) if widest < stride else stride  # a2a_exchange_tiles: the slice each core passes on
    f32, u32 = pd.DataFormat.Float32, pd.DataFormat.UInt32
    program.cbs = [
        *program.cbs,
        ccl.cb(WEIGHT_CB, 3 * tiles_per_block * BFP4_TILE_BYTES, BFP4_TILE_BYTES, cores, pd.DataFormat.Bfp4_b),
        ccl.cb(COMPUTE_READY_CB, ccl.L1_ALIGNMENT, ccl.L1_ALIGNMENT, cores, f32),
        ccl.cb(WRITER_READY_CB, ccl.L1_ALIGNMENT, ccl.L1_ALIGNMENT, cores, f32),
        ccl.cb(IN2_CB, in2_tiles * n * TILE_BYTES, TILE_BYTES, cores, pd.DataFormat.Float16_b),
        ccl.cb(METADATA_CB, 2 * ccl.L1_ALIGNMENT, ccl.L1_ALIGNMENT, cores, u32),
    ]
    if local_output:
        map_bytes = TOKENS_PER_CHUNK * E_T_ENTRY_BYTES
        program.cbs = [*program.cbs, ccl.cb(LOCAL_OUTPUT_MAP_CB, map_bytes, map_bytes, cores, u32)]
    sems = stage.semaphores
    drain = stage.drain_noc
    named = sorted({
        "num_experts": weights.experts, "num_shared_experts": 0, "shared_expert_tp_factor": 1, "layer_id": 0,
        "has_bias": 0, "num_cores": n, "num_banks": NUM_DRAM_BANKS, "hidden_tiles": ht, "intermediate_tiles": nt,
        "tiles_per_txn": weights.tiles_per_txn,
        "w2_pages_per_ring_core_total": weights.experts * weights.w2_blocks_per_expert * tiles_per_block,
        "activation_function": SILU, "activation_limit_bits": 0,
        "metadata_ready_semaphore_id": sems["metadata_ready"],
        "matmul_chunk_ready_semaphore_id": sems["matmul_chunk_ready"],
        "matmul_chunk_available_semaphore_id": sems["matmul_chunk_available"],
        "matmul_combine_sync_semaphore_id": sems["matmul_combine_sync"],
        "per_expert_total_tokens_cb_id": PER_EXPERT_TOKENS_CB, "tokens_per_chunk": TOKENS_PER_CHUNK,
        "tilize_drain_core_noc_x": drain.x, "tilize_drain_core_noc_y": drain.y,
        "combine_shard_width_tiles": ht // data_parallel, "tile_height": TILE, "tile_width": TILE,
        "tile_width_size_bytes": TILE * 2, "token_expert_row_offset": 0 if local_output else token_expert_row_offset,
        "height_shard_dim": token_parallel, "width_shard_dim": data_parallel,
        "noc_max_burst_bytes": NOC_MAX_BURST_BYTES, "compute_only": 0, "local_output": int(local_output),
        "local_output_map_cb_id": LOCAL_OUTPUT_MAP_CB, "total_tokens": shape.tokens, "e_t_entry_size": E_T_ENTRY_BYTES,
    }.items())  # fmt: skip
    accessors = [
        *_l1_accessor_args(BFP4_TILE_BYTES),
        *_l1_accessor_args(BFP4_TILE_BYTES),
        *_l1_accessor_args(TILE_BYTES),
    ]
    dm1_ct = (
        [*accessors, *ccl.tensor_accessor_args(e_t), *ccl.tensor_accessor_args(output)] if local_output else accessors
    )
    noc = lambda core: device.worker_core_from_logical_core(core)  # noqa: E731
    combine_map = ccl.stringify([v for core in layout.combine for v in (noc(core).x, noc(core).y)])
    dm0_rt, dm1_rt, compute_rt = [], [], []
    for pos, bank in enumerate(weights.banks):
        neighbor = noc(ring[weights.banks[(pos + 1) % n]])
        base = [bank, bank & 3, weights.w0_w1_address, weights.w2_address, 0, sems["ring"], pos, neighbor.x,
                neighbor.y]  # fmt: skip
        dm0_rt.append((ring[bank], [*base, *weights.banks]))
        tail = [output.buffer_address(), e_t.buffer_address()] if local_output else []
        dm1_rt.append((ring[bank], [*base, *weights.banks, *tail]))
        compute_rt.append((ring[bank], base))
    program.kernels = [
        *program.kernels,
        pd.KernelDescriptor(
            kernel_source=ccl.kernel_path(f"{_KERNELS}/dm0.cpp"), core_ranges=cores, compile_time_args=accessors,
            named_compile_time_args=named, runtime_args=dm0_rt,
            config=pd.DataMovementConfigDescriptor(pd.DataMovementProcessor.RISCV_1, pd.NOC.RISCV_0_default),
        ),
        pd.KernelDescriptor(
            kernel_source=ccl.kernel_path(f"{_KERNELS}/dm1.cpp"), core_ranges=cores, compile_time_args=dm1_ct,
            named_compile_time_args=named, defines=[("OUTPUT_SHARD_CORE_MAP", combine_map)], runtime_args=dm1_rt,
            config=pd.DataMovementConfigDescriptor(pd.DataMovementProcessor.RISCV_0, pd.NOC.RISCV_1_default),
        ),
        pd.KernelDescriptor(
            kernel_source=ccl.kernel_path(f"{_KERNELS}/compute.cpp"), core_ranges=cores,
            compile_time_args=accessors, named_compile_time_args=named, runtime_args=compute_rt,
            config=pd.ComputeConfigDescriptor(math_fidelity=pd.MathFidelity.LoFi, math_approx_mode=True),
        ),
    ]  # fmt: skip
    return program


def _l1_accessor_args(page_size: int) -> list[int]:
    return list(_emu.tensor_accessor_args(page_size, False))


def _unique(cores: Sequence[pd.CoreCoord]) -> list[pd.CoreCoord]:
    seen, out = set(), []
    for c in cores:
        if (c.x, c.y) not in seen:
            seen.add((c.x, c.y))
            out.append(c)
    return out


def device_rows(tensor: Tensor) -> list[torch.Tensor]:
    """Each device's rows of a `[1, T, n]` tensor as `[T, n]`."""
    return [s.reshape(-1, s.shape[-1]) for s in device_shards(tensor)]


def place_weights(mesh, w0: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> list[mw.RingWeights]:
    """Each device's prepared bfloat4_b weights, placed for its ring: w0, w1 `[D, 1, E, H, N]`, w2 `[D, 1, E, N, H]`
    (device d's E local experts of one layer)."""
    return place_expert_weights(mesh, lambda d: zip(w0[d, 0], w1[d, 0], w2[d, 0]))


def place_expert_weights(
    mesh, device_experts: Callable[[int], Iterable[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]]
) -> list[mw.RingWeights]:
    """Each device's prepared bfloat4_b weights, placed for its ring device by device: `device_experts(d)` yields
    device d's local experts of one layer in slot order as (w0 `[H, N]`, w1 `[H, N]`, w2 `[N, H]`), taken one at a
    time (`moe_compute_weights.prepare_experts`), so the host holds one expert and one device's prepared bytes."""
    device = mesh.get_devices()[0]
    banks = ring_banks(device, dram_bank_worker_cores(device))
    return [
        mw.place_prepared(chip, mw.prepare_experts(device_experts(d), len(banks)), banks)
        for d, chip in enumerate(mesh.chips)
    ]


def place_same_weights(mesh, w0: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> list[mw.RingWeights]:
    """The same prepared weights on every device (prepared once): w0, w1 `[1, E, H, N]`, w2 `[1, E, N, H]`."""
    device = mesh.get_devices()[0]
    banks = ring_banks(device, dram_bank_worker_cores(device))
    prepared = mw.prepare_ring_weights(w0, w1, w2, len(banks))
    return [mw.place_prepared(chip, prepared, banks) for chip in mesh.chips]


def _l1_zeros(mesh, devices: int, rows: int, width: int) -> Tensor:
    return from_torch(
        torch.zeros(devices * rows, width, dtype=torch.int64), dtype=emu_types.uint32,
        layout=emu_types.ROW_MAJOR_LAYOUT, device=mesh, memory_config=emu_types.L1_MEMORY_CONFIG,
        mesh_mapper=ShardTensorToMesh(mesh, dim=0),
    )  # fmt: skip


def _checked_sizes(tokens, indices, weights, devices: int):
    """(tokens per device, hidden, k, the first device's weights) once the weights fit the mesh and the tokens."""
    if len(weights) != devices:
        raise ValueError(f"{_OP}: {len(weights)} weight sets for {devices} devices")
    _, t, hidden = (int(v) for v in tokens.shape)
    w = weights[0]
    if w.hidden_tiles * TILE != hidden:
        raise ValueError(f"{_OP}: the weights' hidden size {w.hidden_tiles * TILE} is not the tokens' {hidden}")
    check_intermediate_size(w.intermediate_tiles * TILE)
    return t, hidden, int(indices.shape[-1]), w


def check_intermediate_size(intermediate: int) -> None:
    """ttnn 0.81.1 refuses an intermediate size of fewer tiles than the ring has cores: its validation
    (MoEComputeDeviceOperation::validate_on_program_cache_miss) holds TT_FATAL(intermediate_tiles >=
    matmul_num_cores). The ring's compute.cpp relies on it: its W2 walk moves on to the previous ring core's slice
    (one pop of the ring-ready CB c_5) when the current one is used up and then takes a tile from it without
    checking that slice's size, so once a ring core owns no intermediate column the cores' walks pop c_5 fewer
    times than the 12 signals dm1 pushes into that 1-page CB per a2a iteration (2 or 3 at 2 tiles), and the ring's
    dm1 and compute end up waiting on each other for good."""
    tiles = intermediate // TILE
    if tiles < RING_CORES:
        raise ValueError(
            f"{_OP}: intermediate size {intermediate} is {tiles} tiles, fewer than the {RING_CORES} cores of the "
            f"matmul ring; ttnn 0.81.1 refuses it too (MoEComputeDeviceOperation::validate_on_program_cache_miss: "
            f"TT_FATAL(intermediate_tiles >= matmul_num_cores), 'at least 1 tile per ring core'): the smallest size "
            f"it runs is {RING_CORES * TILE}"
        )


def moe_compute_local_output(
    tokens: Tensor,
    indices: Tensor,
    scores: Tensor,
    mapping: Tensor,
    weights: Sequence[mw.RingWeights],
    *,
    cluster_axis: int,
    output_height_shard_dim: int = 1,
) -> tuple[Tensor, Tensor, Tensor]:
    """moe_compute's LocalOutput path (`cluster_axis` of extent 1: each device's dispatch group is itself).

    Per device: tokens `[1, T, H]` bfloat16, indices `[1, T, K]` uint16, scores `[1, T, K]` bfloat16, the mapping
    `[D, E]` uint16 (E a multiple of 16 on a mesh), `weights` from place_weights. Returns the `[K, T, H]` bfloat16
    output (row k of token t: the output of the local expert t chose in slot k; rows of no local expert zero), the
    expert-activation rows and the e_t entries (L1)."""
    mesh = tokens.device()
    rows, cols = mesh.shape
    if cluster_axis not in (0, 1) or (rows, cols)[cluster_axis] != 1:
        raise ValueError(
            f"{_OP}: cluster_axis {cluster_axis} of the {rows}x{cols} mesh has more than one device: that is the "
            "FullCcl path (moe_compute_full_ccl)"
        )
    devices = rows * cols
    t, hidden, k, w = _checked_sizes(tokens, indices, weights, devices)
    device = mesh.get_devices()[0]
    data_parallel = next(d for d in (4, 3, 2, 1) if (hidden // TILE) % d == 0 and RING_CORES % d == 0)
    layout = core_layout(device, hidden, output_height_shard_dim, data_parallel)
    shape = TilizeShape(t, hidden, k, int(mapping.shape[-1]), w.experts, int(mapping.shape[0]))
    activation = _l1_zeros(mesh, devices, 1, t * shape.activation_row_bytes // 4)
    e_t = _l1_zeros(mesh, devices, w.experts, shape.e_t_page_bytes // 4)
    output = from_torch(
        torch.zeros(devices * k, t, hidden, dtype=torch.bfloat16), dtype=emu_types.bfloat16,
        layout=emu_types.ROW_MAJOR_LAYOUT, device=mesh, mesh_mapper=ShardTensorToMesh(mesh, dim=0),
    )  # fmt: skip
    index_rows, score_rows = device_rows(indices), device_rows(scores)

    def build(r, c):
        lin = r * cols + c
        dev = mesh.get_devices()[lin]
        stage = tilize_stage_program(
            dev, lin, rows, cols, cluster_axis, tokens, index_rows[lin], score_rows[lin], mapping, activation, e_t,
            shape, layout, compute_only=False, local_output=True,
        )  # fmt: skip
        return add_matmul_stage(stage, dev, weights[lin], e_t, output, shape, output_height_shard_dim, data_parallel)

    ccl.use_kernel_includes()
    program = ccl.per_device_programs(rows, cols, build)
    io = [tokens, indices, scores, mapping, activation, e_t, output]
    generic_op(io, program)
    record_op(_OP, io[:4], io[4:], program, last_run_counters())
    return output, activation, e_t


def full_ccl_combine_shape(
    tokens: int, local_experts: int, k: int, hidden: int, output_height_shard_dim: int
) -> fused.FusedCombineShape:
    """The fused combine's staging for `tokens` tokens of a dispatch group, checked against its limits (ValueError
    naming the one it breaks)."""
    data_parallel = next(d for d in (4, 3, 2, 1) if (hidden // TILE) % d == 0 and RING_CORES % d == 0)
    shared_cb_bytes = 2 * (hidden // TILE) * TILE_BYTES
    shape = fused.FusedCombineShape(tokens, local_experts, k, hidden, output_height_shard_dim, data_parallel,
                                    shared_cb_bytes)  # fmt: skip
    fused.check_shape(shape)
    return shape


def check_full_ccl_mesh(mesh, tokens: int, local_experts: int, k: int, hidden: int, output_height_shard_dim: int):
    """Before any weight is placed: what moe_compute_full_ccl would refuse for this dispatch group's `tokens`, and
    whether the emulator can hold its program. The devices of a dispatch line (mesh axis 0) exchange rows within the
    program, so every core of each of their grids needs an emulated L1 slot at once (the slots lie below 4 GiB,
    where the kernels' 32-bit L1 pointers must land); the emulator runs the lines one at a time when the whole mesh
    does not fit (a QUAD: 8 lines of 16 devices x 80 cores)."""
    full_ccl_combine_shape(tokens, local_experts, k, hidden, output_height_shard_dim)
    grid = mesh.get_devices()[0].compute_with_storage_grid_size()
    line_devices = tuple(mesh.shape)[0]
    cores = line_devices * grid.x * grid.y
    slots = int(_emu.runtime_state()["l1_slots"])
    if cores > slots:
        raise NotImplementedError(
            f"{_OP}: its FullCcl program on a dispatch line of {line_devices} devices takes {cores} cores at once; "
            f"the emulator holds {slots} emulated L1 slots"
        )


def moe_compute_full_ccl(
    tokens: Tensor,
    indices: Tensor,
    scores: Tensor,
    mapping: Tensor,
    weights: Sequence[mw.RingWeights],
    *,
    cluster_axis: int,
    mux_core_range_set,
    num_links: int = 1,
    topology=None,
    output_height_shard_dim: int = 4,
    optional_output_tensor: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """moe_compute's FullCcl path (`cluster_axis` of extent > 1): the matmul ring stages each token's rows on the
    combine cores and selective_reduce_combine's kernels, in the same program, send them to the token's device.

    Per device: tokens `[1, T, H]` bfloat16 (T tokens of the dispatch group), indices `[1, T, K]` uint16, scores
    `[1, T, K]` bfloat16, the mapping `[D, E]` uint16, `weights` from place_weights; `mux_core_range_set` the cores
    of the combine's fabric muxes (num_links per direction, clear of the tilize, ring and combine cores).
    Returns the `[K, T/D, H]` bfloat16 output of each device (D devices along the axis; row (k, t) the output of
    the expert its token t chose in slot k where a device of the group holds it, else what the output held:
    zeros, or `optional_output_tensor`'s rows), the expert-activation rows and the e_t entries (L1)."""
    mesh = tokens.device()
    view = ccl.mesh_view(mesh)
    rows, cols = view.rows, view.cols
    axis = ccl.check_axis(_OP, cluster_axis, required=True)
    group = view.dispatch_devices(axis)
    if group == 1:
        raise ValueError(
            f"{_OP}: cluster_axis {axis} of the {rows}x{cols} mesh has one device: that is the LocalOutput path "
            "(moe_compute_local_output)"
        )
    usable = ccl.usable_topology(view, topology, axis)
    if usable not in (emu_fabric.Topology.Linear, emu_fabric.Topology.Ring):
        raise ValueError(f"{_OP}: the combine's routes are 1D: topology must be Linear or Ring, got {usable!r}")
    if isinstance(num_links, bool) or not isinstance(num_links, int) or not 1 <= num_links <= view.num_links:
        raise ValueError(f"{_OP}: num_links must be an int in 1..{view.num_links}, got {num_links!r}")
    devices = rows * cols
    t, hidden, k, w = _checked_sizes(tokens, indices, weights, devices)
    if t % group:
        raise ValueError(f"{_OP}: {t} tokens do not split over the {group} devices of cluster_axis {axis}")
    device = mesh.get_devices()[0]
    combine_shape = full_ccl_combine_shape(t, w.experts, k, hidden, output_height_shard_dim)
    data_parallel = combine_shape.data_parallel
    layout = core_layout(device, hidden, output_height_shard_dim, data_parallel)
    shape = TilizeShape(t, hidden, k, int(mapping.shape[-1]), w.experts, int(mapping.shape[0]))
    mux = _cores_of("mux_core_range_set", mux_core_range_set)
    need_mux = num_links * max(len(ccl.neighbors(view, r, c, usable, axis)[0]) for r in range(rows)
                               for c in range(cols))  # fmt: skip
    if len(mux) < need_mux:
        raise ValueError(f"{_OP}: mux_core_range_set has {len(mux)} cores, {num_links} links need {need_mux}")
    taken = {(c.x, c.y) for c in (*layout.tilize, *layout.matmul, *layout.combine)}
    overlap = sorted({(c.x, c.y) for c in mux[:need_mux]} & taken)
    if overlap:
        raise ValueError(f"{_OP}: mux cores {overlap} are tilize, ring or combine cores")
    if len(layout.combine) % num_links:
        raise ValueError(f"{_OP}: {len(layout.combine)} combine cores do not split over num_links {num_links}")

    activation = _l1_zeros(mesh, devices, 1, t * shape.activation_row_bytes // 4)
    e_t = _l1_zeros(mesh, devices, w.experts, shape.e_t_page_bytes // 4)
    out_shape = [k, t // group, hidden]
    if optional_output_tensor is None:
        output = from_torch(
            torch.zeros(devices * k, *out_shape[1:], dtype=torch.bfloat16), dtype=emu_types.bfloat16,
            layout=emu_types.ROW_MAJOR_LAYOUT, device=mesh, mesh_mapper=ShardTensorToMesh(mesh, dim=0),
        )  # fmt: skip
    elif list(optional_output_tensor.shape) != out_shape or optional_output_tensor.dtype != emu_types.bfloat16:
        raise ValueError(
            f"{_OP}: optional_output_tensor must be a bfloat16 {out_shape} tensor per device, got "
            f"{list(optional_output_tensor.shape)} {optional_output_tensor.dtype.name}"
        )
    else:
        output = optional_output_tensor
    index_rows, score_rows = device_rows(indices), device_rows(scores)
    ring_by_position = [layout.matmul[bank] for bank in w.banks]
    geometry = mw.RingGeometry(w.hidden_tiles, w.intermediate_tiles, RING_CORES)
    w2_offsets = [geometry.w2_offset(p) for p in range(RING_CORES)]
    w2_widths = [mw.w2_shard_tiles(geometry.ht, p, geometry.nt, RING_CORES) for p in range(RING_CORES)]
    (x0, y0), (x1, y1) = WORMHOLE_COMBINE_RANGE
    combine_range = [pd.CoreCoord(x, y) for y in range(y0, y1 + 1) for x in range(x0, x1 + 1)]
    counts_address = int(_emu.cb_l1_addresses([combine_shape.shared_cb_bytes, shape.counts_page_bytes])[1])

    def build(r, c):
        lin = r * cols + c
        dev = mesh.get_devices()[lin]
        stage = tilize_stage_program(
            dev, lin, rows, cols, axis, tokens, index_rows[lin], score_rows[lin], mapping, activation, e_t, shape,
            layout, compute_only=False, local_output=False,
        )  # fmt: skip
        program = add_matmul_stage(stage, dev, weights[lin], e_t, output, shape, output_height_shard_dim,
                                   data_parallel, combine_shape.token_expert_row_offset)  # fmt: skip
        shared, *others = program.cbs
        data_page = fused.DOUBLE_BUFFER * combine_shape.expert_block_bytes
        program.cbs = [*fused.shared_cb_descriptors(shared, layout.grid, layout.combine, data_page), *others]
        fused.add_combine_stage(
            program, mesh, r, c, combine_shape, combine=layout.combine, combine_range=combine_range,
            ring_by_position=ring_by_position, w2_offsets=w2_offsets, w2_widths=w2_widths,
            metadata_sync_semaphore=stage.semaphores["combine_sync"],
            compute_sync_semaphore=stage.semaphores["matmul_combine_sync"], counts_address=counts_address,
            counts_page_bytes=shape.counts_page_bytes, e_t=e_t, activation=activation, output=output, axis=axis,
            topology=usable, num_links=num_links, mux_cores=mux,
        )  # fmt: skip
        return program

    ccl.use_kernel_includes()
    program = ccl.per_device_programs(rows, cols, build)
    io = [tokens, indices, scores, mapping, activation, e_t, output]
    generic_op(io, program)
    record_op(_OP, io[:4], io[4:], program, last_run_counters())
    return output, activation, e_t


__all__ = [
    "CoreLayout",
    "TilizeShape",
    "TilizeStage",
    "core_layout",
    "dram_bank_worker_cores",
    "ring_banks",
    "add_matmul_stage",
    "moe_compute_full_ccl",
    "moe_compute_local_output",
    "place_same_weights",
    "place_weights",
    "check_intermediate_size",
    "tilize_stage_program",
    "device_rows",
]
