"""The combine moe_compute's factory builds into its own program on the FullCcl path (tt-metal 0.81.1).

When the dispatch group (the devices along the cluster axis) has more than one device, moe_compute's dm1 stages
every token's W2 rows on the combine cores, double buffered by expert, and the factory adds
selective_reduce_combine's reader.cpp / writer.cpp (build_selective_reduce_combine_program_artifacts with the ring
cores as the data's producers) on those cores: they send each row to its token's device, page k T/D + t of the
`[K, T/D, H]` output. What differs from the standalone op (selective_reduce_combine.py):
- the CBs start at c_3 (the data, c_4 the e_t pages, c_5 the counts, c_6 the activation rows, c_7 the packet
  headers), clear of the ring's on the same program;
- the data CB is the shared L1 buffer (moe_compute's c_0 / c_1) on the combine cores, two halves of
  token_expert_row_offset rows (double_buffer_source): here a third format of the shared CB's descriptor on the
  combine cores, at the same address as on hardware where both CBs alias the one tensor;
- the metadata sync semaphore is the tilize stage's combine_sync (the drain increments it once the e_t pages and
  activation rows are out), the compute sync semaphore is matmul_combine_sync: the writer waits per expert for
  every ring core that feeds its column and releases them by an increment (their NOC coordinates follow the
  writer's own runtime args);
- the dense maps are the e_t tensor (16-byte entries: a stride of 4 words), the counts the per-expert counts
  tensor, the activations the expert-activation rows.

The per-expert counts tensor is, on hardware, an L1 tensor HEIGHT_SHARDED one page per core over the grid that
backs CB c_2 (the drain multicasts the counts into c_2 on every worker core); the reader takes its page 0, on
logical core (0, 0). The emulator's CB is not placed at a tensor's address, so the description owns that
region: the reader's counts address is c_2's L1 offset (the second CB of every worker core), and its accessor is
the interleaved L1 encoding, whose page 0 is also on logical core (0, 0), a ring core that holds c_2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ttnn_moe._C import emu as _emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu.ttmetal import ccl_common as ccl
from ttnn_moe.emu.ttmetal import selective_reduce_combine as src

_OP = "moe_compute"
DATA_CB, MAPS_CB, COUNTS_CB, ACTIVATIONS_CB, HEADERS_CB = 3, 4, 5, 6, 7
DOUBLE_BUFFER = 2
E_T_ENTRY_WORDS = 4


@dataclass(frozen=True)
class FusedCombineShape:
    tokens: int  # T, tokens of the dispatch group
    local_experts: int
    k: int
    hidden: int
    token_parallel: int
    data_parallel: int
    shared_cb_bytes: int  # the shared L1 buffer on every core: 2 x 32 tokens x H bfloat16

    @property
    def segment_bytes(self) -> int:
        """A token row's slice on one combine column (the hidden dim split evenly: one tile-column shard)."""
        return self.hidden * 2 // self.data_parallel

    @property
    def token_expert_row_offset(self) -> int:
        """Rows of one half of the shared buffer as the factory counts them (the shard's elements over half a
        segment's, per token-parallel core)."""
        return (
            (self.shared_cb_bytes // 2) // (self.hidden // self.data_parallel // DOUBLE_BUFFER) // self.token_parallel
        )

    @property
    def expert_block_bytes(self) -> int:
        return self.segment_bytes * self.token_expert_row_offset


def check_shape(shape: FusedCombineShape) -> None:
    """The limits the staging imposes: a segment fits one fabric packet, both halves fit the shared buffer, every
    combine core's share of an expert fits a half."""
    segments = src.data_parallel_split(shape.hidden * 2, ccl.max_packet_bytes(), shape.data_parallel)
    if len(segments) != shape.data_parallel or any(s != shape.segment_bytes for s in segments):
        raise ValueError(
            f"{_OP}: hidden {shape.hidden} splits into packet segments {segments}, not {shape.data_parallel} equal "
            "combine columns"
        )
    if DOUBLE_BUFFER * shape.expert_block_bytes > shape.shared_cb_bytes:
        raise ValueError(
            f"{_OP}: output_height_shard_dim {shape.token_parallel} stages halves of {shape.token_expert_row_offset} "
            f"rows ({shape.expert_block_bytes} bytes each), past the combine cores' {shape.shared_cb_bytes}-byte "
            "shared buffer; it needs output_height_shard_dim >= 4"
        )
    most = -(-shape.tokens // shape.token_parallel)
    if most > shape.token_expert_row_offset:
        raise ValueError(
            f"{_OP}: {shape.tokens} tokens put up to {most} rows of one expert on a combine core, more than the "
            f"{shape.token_expert_row_offset} of a staging half"
        )


def shared_cb_descriptors(shared: pd.CBDescriptor, grid: pd.CoreCoord, combine: Sequence[pd.CoreCoord],
                          data_page_bytes: int) -> list[pd.CBDescriptor]:  # fmt: skip
    """The shared buffer's descriptor split in two, both first on their cores (so at the same address): the grid
    less the combine cores, and the combine cores with the combine's data CB as a third format."""
    on_combine = {(c.x, c.y) for c in combine}
    rest = [pd.CoreCoord(x, y) for y in range(grid.y) for x in range(grid.x) if (x, y) not in on_combine]
    formats = list(shared.format_descriptors)
    data = pd.CBFormatDescriptor(DATA_CB, pd.DataFormat.Float16_b, data_page_bytes)
    return [
        pd.CBDescriptor(shared.total_size, ccl.core_range_set(rest), formats),
        pd.CBDescriptor(shared.total_size, ccl.core_range_set(list(combine)), [*formats, data]),
    ]


def contributors(w2_offsets: Sequence[int], w2_widths: Sequence[int], column: int, column_tiles: int) -> list[int]:
    """Ring positions whose W2 slice (offset, width in tiles) feeds combine column `column` (moe_ring_common.h's
    w2_combine_col_begin / _end)."""
    found = []
    for pos, (offset, width) in enumerate(zip(w2_offsets, w2_widths)):
        begin = offset // column_tiles
        end = begin if width == 0 else (offset + width - 1) // column_tiles + 1
        if begin <= column < end:
            found.append(pos)
    return found


def _smallest_free_semaphore(program: pd.ProgramDescriptor, cores: Sequence[pd.CoreCoord]) -> int:
    """CreateSemaphore's id: the smallest free on every core of the set."""
    keys = {(c.x, c.y) for c in cores}
    used = {s.id for s in program.semaphores for c in s.core_ranges.cores() if (c.x, c.y) in keys}
    sem_id = min(set(range(len(used) + 1)) - used)
    program.semaphores = [*program.semaphores, pd.SemaphoreDescriptor(sem_id, pd.CoreType.WORKER,
                                                                      ccl.core_range_set(list(cores)), 0)]  # fmt: skip
    return sem_id


def add_combine_stage(
    program: pd.ProgramDescriptor,
    mesh,
    row: int,
    col: int,
    shape: FusedCombineShape,
    *,
    combine: Sequence[pd.CoreCoord],
    combine_range: Sequence[pd.CoreCoord],
    ring_by_position: Sequence[pd.CoreCoord],
    w2_offsets: Sequence[int],
    w2_widths: Sequence[int],
    metadata_sync_semaphore: int,
    compute_sync_semaphore: int,
    counts_address: int,
    counts_page_bytes: int,
    e_t,
    activation,
    output,
    axis: int,
    topology,
    num_links: int,
    mux_cores: Sequence[pd.CoreCoord],
) -> None:
    """Adds the combine's CBs, semaphores and kernels to one device's moe_compute program (the shared CB already
    split by shared_cb_descriptors)."""
    view = ccl.mesh_view(mesh)
    device = mesh.get_devices()[0]
    noc = device.worker_core_from_logical_core
    experts, tp, dp = shape.local_experts, shape.token_parallel, shape.data_parallel
    cores = list(combine[: tp * dp])
    grid = ccl.core_range_set(cores)
    maps_page = ccl.align(int(e_t.page_size), ccl.L1_ALIGNMENT)
    counts_cb_bytes = ccl.align(counts_page_bytes + 3 * 4 * experts, ccl.L1_ALIGNMENT)
    activations_page = int(activation.page_size)
    activation_stride = int(activation.shape[-1]) // shape.tokens
    u32 = pd.DataFormat.UInt32
    program.cbs = [
        *program.cbs,
        ccl.cb(MAPS_CB, ccl.align(experts * maps_page, ccl.L1_ALIGNMENT), maps_page, grid, u32),
        ccl.cb(COUNTS_CB, counts_cb_bytes, counts_cb_bytes, grid, u32),
        ccl.cb(ACTIVATIONS_CB, ccl.align(activations_page, ccl.L1_ALIGNMENT), activations_page, grid, u32),
        ccl.cb(HEADERS_CB, src.NUM_PACKET_HEADERS * ccl.CLIENT_INTERFACE_SIZE, ccl.CLIENT_INTERFACE_SIZE, grid, u32),
    ]
    # The factory's global semaphores cover the whole combine range.
    init_semaphore = ccl.global_semaphore(program, ccl.core_range_set(list(combine_range)))
    cross_device_semaphore = ccl.global_semaphore(program, ccl.core_range_set(list(combine_range)))
    link_sync_semaphore = _smallest_free_semaphore(program, cores)

    start, end, box_size = src.noc_bounding_box(mesh, cores)
    reader_named = sorted({
        "dense_token_maps_cb_id": MAPS_CB, "token_counts_cb_id": COUNTS_CB, "token_activations_cb_id": ACTIVATIONS_CB,
        "token_activations_page_size_bytes": activations_page,
        "aligned_token_activations_page_size_bytes": ccl.align(activations_page, ccl.L1_ALIGNMENT),
        "activations_stride_elm": activation_stride, "dense_token_maps_page_size_bytes": maps_page,
        "token_counts_page_size_bytes": counts_page_bytes, "dense_token_maps_stride_elm": E_T_ENTRY_WORDS,
        "num_local_experts": experts, "num_token_parallel_cores": tp, "num_data_parallel_cores": dp,
        "global_num_tokens": shape.tokens, "select_experts_k": shape.k, "sync_semaphore_id": metadata_sync_semaphore,
        "noc_x_start": start.x, "noc_y_start": start.y, "noc_x_end": end.x, "noc_y_end": end.y,
        "worker_bounding_box_size": box_size,
    }.items())  # fmt: skip
    counts_accessor = list(_emu.tensor_accessor_args(counts_page_bytes, False))
    reader_ct = [*ccl.tensor_accessor_args(e_t), *counts_accessor, *ccl.tensor_accessor_args(activation)]
    writer_named = sorted({
        "dense_token_maps_cb_id": MAPS_CB, "token_counts_cb_id": COUNTS_CB, "data_cb_id": DATA_CB,
        "token_activations_cb_id": ACTIVATIONS_CB, "activations_stride_elm": activation_stride,
        "num_token_parallel_cores": tp, "num_data_parallel_cores": dp, "use_init_semaphore": 1,
        "num_local_experts": experts, "global_num_tokens": shape.tokens,
        "source_token_segment_buffer_size_bytes": shape.segment_bytes,
        "source_expert_block_size_bytes": shape.expert_block_bytes, "dense_token_maps_stride_elm": E_T_ENTRY_WORDS,
        "alignment": ccl.L1_ALIGNMENT, "compute_sync_semaphore_id": compute_sync_semaphore,
        "double_buffer_source": 1, "packet_header_cb_id": HEADERS_CB, "num_workers_per_link": len(cores) // num_links,
        "noc_x_start": start.x, "noc_y_start": start.y, "noc_x_end": end.x, "noc_y_end": end.y,
    }.items())  # fmt: skip
    fabric = src.writer_fabric(mesh, view, row, col, axis=axis, topology=topology)
    writer_named = sorted([*writer_named, *fabric.named_args])
    workers_per_link = len(cores) // num_links
    column_tiles = shape.hidden // 32 // dp
    reader_rt, writer_rt = [], []
    for i, core in enumerate(cores):
        link, worker_in_link = divmod(i, workers_per_link)
        sync_core = noc(cores[link * workers_per_link])
        reader_rt.append((core, [e_t.buffer_address(), counts_address, activation.buffer_address(), i // dp,
                                 int(i == 0)]))  # fmt: skip
        feeding = [noc(ring_by_position[p]) for p in contributors(w2_offsets, w2_widths, i % dp, column_tiles)]
        args = [output.buffer_address(), shape.segment_bytes, (i % dp) * shape.segment_bytes, init_semaphore,
                cross_device_semaphore, int(i == 0), len(feeding), *[v for c in feeding for v in (c.x, c.y)],
                int(worker_in_link == 0), link_sync_semaphore, sync_core.x, sync_core.y]  # fmt: skip
        args += src.mux_client_args(mesh, program, core, fabric, link=link, worker_in_link=worker_in_link,
                                    mux_cores=mux_cores)  # fmt: skip
        writer_rt.append((core, args))
    program.kernels = [
        *program.kernels,
        pd.KernelDescriptor(
            kernel_source=ccl.kernel_path(f"{src.KERNELS}/reader.cpp"), core_ranges=grid, compile_time_args=reader_ct,
            named_compile_time_args=reader_named, runtime_args=reader_rt,
            config=pd.DataMovementConfigDescriptor(pd.DataMovementProcessor.RISCV_1, pd.NOC.RISCV_1_default),
        ),
        pd.KernelDescriptor(
            kernel_source=ccl.kernel_path(f"{src.KERNELS}/writer.cpp"), core_ranges=grid,
            compile_time_args=ccl.tensor_accessor_args(output), named_compile_time_args=writer_named,
            defines=fabric.defines, runtime_args=writer_rt,
            config=pd.DataMovementConfigDescriptor(pd.DataMovementProcessor.RISCV_0, pd.NOC.RISCV_1_default),
        ),
    ]  # fmt: skip


__all__ = ["FusedCombineShape", "add_combine_stage", "check_shape", "contributors", "shared_cb_descriptors"]
