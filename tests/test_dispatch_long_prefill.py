"""all_to_all_dispatch_dense past the L1 size of its whole tables: this device's ids and weights,
its routing lists, the token_idx_map / routed_token_weights images, the slot_source entries and the
fan-out copies stream through bounded L1 windows (docs/ops/all_to_all_dispatch_dense.md, "Long
prefill"). Just below, at and just above the largest whole tables, at the image-window limit and at
a 16k-token prefill (top-8, 256 experts, a 1x8 line), every output exact against the golden, with
the windows counted from the emulator's DRAM counters (summed over the mesh's devices)."""

from __future__ import annotations

import math

import pytest
import torch
from test_op_dispatch_combine import rows_in_blocks
from ttnn_moe.emu.tensor import device_shards, from_shards
from ttnn_moe.paths import kernels_dir

from ttnn_moe import _C, all_to_all_dispatch_dense, emu, expert_mapping, golden

L1_BUDGET = 1024 * 1024  # the op's circular buffers per core
PREFILL = 16384  # tokens per device of a long-context prefill
# The streamed windows (docs/ops/all_to_all_dispatch_dense.md): 64 KiB of ids and weights (6 B an
# assignment, a multiple of 32 tokens) and 64 Ki rows of the token_idx_map / weights images.
OWN_WINDOW_BYTES = 64 * 1024
IMAGE_WINDOW_ROWS = 64 * 1024
CB_OWN, CB_IDX_IMAGE, CB_SLOT_IMAGE = 1, 6, 13
DF = _C.program.DataFormat
RM = _C.program.Layout.ROW_MAJOR


def own_window_tokens(top_k: int) -> int:
    return OWN_WINDOW_BYTES // (6 * top_k) // 32 * 32


def tensor_arg(shape, dtype):
    element = {DF.Float16_b: 2, DF.UInt32: 4, DF.Int32: 4}[dtype]
    return _C.program.TensorArg(
        shape=list(shape),
        dtype=dtype,
        layout=RM,
        address=4096,
        page_size=shape[-1] * element,
        num_pages=math.prod(shape[:-1]),
        is_dram=True,
        alignment=32,
    )


def program_cbs(tokens, top_k, experts, line, hidden, capacity=0) -> dict[int, int]:
    """{CB index: total size} of the main core's program at these shapes on a 1 x line mesh."""
    inputs = [
        tensor_arg((1, tokens, hidden), DF.Float16_b),
        tensor_arg((1, tokens, top_k), DF.UInt32),
        tensor_arg((1, tokens, top_k), DF.Float16_b),
        tensor_arg((1, 1, experts, line), DF.Int32),
    ]
    context = _C.ops.MeshContext(
        kernels_root=str(kernels_dir()),
        device=emu.open_device(grid=(8, 8)).device_limits(),
        rows=1,
        cols=line,
        topology=_C.ops.FabricTopology.Linear,
        max_packet_payload=4096,
        fabric_node_ids=[(0, d) for d in range(line)],
        connect_fabric=lambda *args: [0],
    )
    attributes = _C.ops.all_to_all_dispatch_dense.Attributes(cluster_axis=1, capacity=capacity, num_links=1)
    specs = _C.ops.all_to_all_dispatch_dense.output_specs(attributes, inputs, context)
    programs = _C.ops.all_to_all_dispatch_dense.program(attributes, inputs + list(specs), context).mesh_programs
    cbs = {f.buffer_index: cb.total_size for cb in programs[0][1].cbs for f in cb.format_descriptors}
    assert sum(cbs.values()) <= L1_BUDGET
    return cbs


def default_capacity(tokens, top_k, experts, line) -> int:
    return _C.ops.all_to_all_dispatch_dense.default_capacity(
        tokens_per_device=tokens, top_k=top_k, line_size=line, local_experts=experts // line
    )


def whole_tables(tokens, top_k, experts, line, hidden, capacity=0) -> bool:
    """Whether the tables are whole in L1: cb_slot_image holds every slot's entry (8 B a row)."""
    capacity = capacity or default_capacity(tokens, top_k, experts, line)
    return program_cbs(tokens, top_k, experts, line, hidden, capacity)[CB_SLOT_IMAGE] == 8 * capacity


def whole_limit(top_k, experts, line, hidden) -> int:
    """The largest T (default capacity) whose tables are whole in L1."""
    low, high = 32, 1 << 14
    assert whole_tables(low, top_k, experts, line, hidden) and not whole_tables(high, top_k, experts, line, hidden)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if whole_tables(mid, top_k, experts, line, hidden) else (low, mid)
    return low


def open_line(line: int):
    return emu.open_mesh_device(emu.MeshShape(1, line), grid=(2, 1))


def routing(line, tokens, top_k, experts, hidden, seed):
    """Per device: x (1, T, H), K distinct uniformly drawn experts per token, weights."""
    g = torch.Generator().manual_seed(seed)
    xs = [torch.randn(1, tokens, hidden, generator=g).bfloat16() for _ in range(line)]
    ids = [
        torch.rand(tokens, experts, generator=g).topk(top_k, dim=1).indices.int().reshape(1, tokens, -1)
        for _ in range(line)
    ]
    ws = [torch.rand(1, tokens, top_k, generator=g).bfloat16() for _ in range(line)]
    return xs, ids, ws


def dispatch(mesh, xs, ids, ws, mapping, capacity):
    """-> (DispatchDenseOutput, its routing_lists scratch), the scratch given as an output so its
    DRAM traffic is counted."""
    n, tokens, top_k = len(xs), ids[0].shape[1], ids[0].shape[2]
    experts = mapping.shape[2]
    counts = from_shards([torch.zeros(n, experts, dtype=torch.int32)] * n, emu.uint32, emu.ROW_MAJOR_LAYOUT, mesh)
    lists = from_shards(
        [torch.zeros(n, 2 * tokens * top_k, dtype=torch.int32)] * n, emu.uint32, emu.ROW_MAJOR_LAYOUT, mesh
    )
    out = all_to_all_dispatch_dense(
        from_shards(xs, emu.bfloat16, emu.ROW_MAJOR_LAYOUT, mesh),
        from_shards(ids, emu.uint32, emu.ROW_MAJOR_LAYOUT, mesh),
        from_shards(ws, emu.bfloat16, emu.ROW_MAJOR_LAYOUT, mesh),
        from_shards([mapping] * n, emu.int32, emu.ROW_MAJOR_LAYOUT, mesh),
        cluster_axis=1,
        capacity=capacity,
        num_links=2,
        output_tensors=[None] * 8 + [counts, lists],
    )
    return out, lists


def words(t: torch.Tensor) -> torch.Tensor:
    return t.to(torch.int64) & 0xFFFFFFFF


def check_outputs(out, want):
    """Every output exact on every device where the op writes it: the rows of the blocks (tokens,
    token_idx_map, weights), the used slots' slot_source entries, the counts and the status record."""
    got = {name: device_shards(getattr(out, name)) for name in out._fields if name != "handle"}
    got["slot_source"] = device_shards(out.handle.slot_source)
    got["num_slots"] = device_shards(out.handle.num_slots)
    status = device_shards(out.handle.dispatch_status)
    for d, w in enumerate(want):
        for name in ("num_routed_tokens", "expert_offsets", "num_slots"):
            expected = getattr(w, name)
            assert torch.equal(words(got[name][d]).reshape(expected.shape), expected.to(torch.int64)), f"{d}: {name}"
        end, slots = rows_in_blocks(w), int(w.num_slots[0])
        assert torch.equal(words(got["token_idx_map"][d]).reshape(-1)[:end], w.token_idx_map[:end].to(torch.int64))
        assert torch.equal(got["routed_token_weights"][d].reshape(-1)[:end], w.routed_token_weights[:end]), f"{d}"
        slot_source = words(got["slot_source"][d]).reshape(-1, 2)[:slots]
        assert torch.equal(slot_source, w.slot_source[:slots].to(torch.int64)), f"device {d}: slot_source"
        assert torch.equal(got["tokens"][d][:end], w.tokens[:end]), f"device {d}: tokens"
        assert words(status[d])[0, 0] == 0 and words(status[d])[0, 2] == 0, f"device {d}: status"


def list_lengths(ids, experts, line) -> list[list[int]]:
    """n[q][d]: assignments of position q to the experts of device d (E / D contiguous each)."""
    per_device = experts // line
    n = [[0] * line for _ in range(line)]
    for q, chosen in enumerate(ids):
        for d, c in enumerate(torch.bincount(chosen.reshape(-1).long() // per_device, minlength=line).tolist()):
            n[q][d] = c
    return n


def traffic(tensor) -> dict:
    """The last run's DRAM traffic on a mesh tensor's buffer, summed over the devices."""
    return emu.last_run_counters()["dram_buffers"][tensor.to_arg().address]


def routing_lists_bytes_read(ids, experts, line, tokens, top_k, walks, own_copied) -> int:
    """Reads of routing_lists, summed over the devices. Each device reads every peer's list once
    per walk of its assignments (walks[d]: one per image window of its used rows). With more ids and
    weights than one
    window, it also reads them back from their copy there (6 B an assignment) in each pass:
    counting, the send plan, one per peer it sends a list to and one per walk; and its row senders
    read the ids once (4 B)."""
    n = list_lengths(ids, experts, line)
    total = 0
    for d in range(line):
        received = sum(n[q][d] for q in range(line) if q != d)
        total += walks[d] * 8 * received
        if own_copied:
            peers = sum(1 for q in range(line) if q != d and n[d][q])
            total += (2 + peers + walks[d]) * tokens * top_k * 6 + tokens * top_k * 4
    return total


def run_and_check(line, tokens, top_k, experts, hidden, capacity, seed, most_walks, count_list_reads=True, ids=None):
    """Dispatch on a 1 x line mesh against the golden, and its DRAM traffic against the windows:
    streamed, each device walks its assignments once per 64 Ki of its used rows (once when it has
    none) and writes each image once per window, whole, once when it has rows; every used slot's
    slot_source page is written once and nothing past the used rows and slots. `most_walks`: the
    busiest device's walks. The reads of routing_lists are counted only where every batch of ids the
    row senders read starts DRAM-aligned in the copy (K a multiple of 8). `ids`: the routing (else
    uniform)."""
    xs, uniform_ids, ws = routing(line, tokens, top_k, experts, hidden, seed)
    ids = uniform_ids if ids is None else ids
    mapping = expert_mapping(experts, line)
    out, lists = dispatch(open_line(line), xs, ids, ws, mapping, capacity)
    written = {
        name: traffic(t)["page_writes"]
        for name, t in (
            ("token_idx_map", out.token_idx_map),
            ("routed_token_weights", out.routed_token_weights),
            ("slot_source", out.handle.slot_source),
        )
    }
    lists_read = traffic(lists)["bytes_read"]
    want = golden.all_to_all_dispatch_dense(xs, ids, ws, mapping, (1, line), 1, capacity=capacity)
    check_outputs(out, want)
    streamed = not whole_tables(tokens, top_k, experts, line, hidden, capacity)
    rows = [rows_in_blocks(w) for w in want]
    windows = [math.ceil(r / IMAGE_WINDOW_ROWS) if streamed else int(r > 0) for r in rows]
    walks = [max(1, math.ceil(r / IMAGE_WINDOW_ROWS)) if streamed else 1 for r in rows]
    assert max(walks) == most_walks
    assert written == {
        "token_idx_map": sum(windows),
        "routed_token_weights": sum(windows),
        "slot_source": sum(int(w.num_slots[0]) for w in want),
    }
    if not count_list_reads:
        return
    own_copied = streamed and tokens > own_window_tokens(top_k)
    assert lists_read == routing_lists_bytes_read(ids, experts, line, tokens, top_k, walks, own_copied)


@pytest.mark.parametrize("offset", [-1, 0, 1], ids=["below", "at", "above"])
def test_dispatch_at_the_whole_tables_limit(offset):
    """Top-32 of 64 experts on a 1x2 line with the default capacity (64 rows a token): whole tables
    up to the limit, streamed past it (ids in two windows, lists in windows of whole packets)."""
    line, top_k, experts, hidden = 2, 32, 64, 32
    limit = whole_limit(top_k, experts, line, hidden)
    assert 400 < limit < 700  # where T x (32 x 14 + 64 x 22) bytes fill 1 MiB
    tokens = limit + offset
    streamed = offset > 0
    assert whole_tables(tokens, top_k, experts, line, hidden) == (not streamed)
    capacity = default_capacity(tokens, top_k, experts, line)
    if streamed:
        own = program_cbs(tokens, top_k, experts, line, hidden)[CB_OWN]
        assert own == 6 * top_k * own_window_tokens(top_k) < 6 * top_k * tokens
    run_and_check(line, tokens, top_k, experts, hidden, capacity, seed=offset + 5, most_walks=1)


@pytest.mark.parametrize("step", [-1, 0, 1], ids=["below", "at", "above"])
def test_dispatch_at_the_image_window_limit(step):
    """Every token of both devices picks experts 0..3 (all on device 0): device 0's four blocks of
    2T rows end just below, at and just above 64 Ki rows, one walk of the assignments and one write
    of each image per 64 Ki used rows; device 1 receives nothing (one walk, no image write). The
    tables stream (the default capacity, 8T + 256 rows, is past what L1 holds whole)."""
    line, top_k, experts, hidden = 2, 4, 16, 16
    tokens = IMAGE_WINDOW_ROWS // 8 + 16 * step  # 4 blocks of 2T rows: 64 Ki + 128 x step
    capacity = default_capacity(tokens, top_k, experts, line)
    assert not whole_tables(tokens, top_k, experts, line, hidden, capacity)
    assert program_cbs(tokens, top_k, experts, line, hidden, capacity)[CB_IDX_IMAGE] == 4 * IMAGE_WINDOW_ROWS
    ids = [torch.arange(top_k, dtype=torch.int32).expand(tokens, top_k).reshape(1, tokens, top_k)] * line
    run_and_check(line, tokens, top_k, experts, hidden, capacity, seed=7, most_walks=2 if step > 0 else 1, ids=ids)


def test_dispatch_16k_prefill_on_a_1x8_line():
    """T = 16384 tokens per device, top-8 of 256 experts, a 1x8 line: 131072 assignments a device on
    average (with the blocks' padding, three image windows of used rows), a capacity of 1.25 times
    that."""
    line, top_k, experts, hidden = 8, 8, 256, 32
    capacity = 163840 + 32 * (experts // line)
    assert not whole_tables(PREFILL, top_k, experts, line, hidden, capacity)
    run_and_check(line, PREFILL, top_k, experts, hidden, capacity, seed=16, most_walks=3)


def test_dispatch_streamed_with_an_odd_top_k_on_three_devices():
    """Top-3 (12-byte id rows, 6-byte weight rows) of 48 experts on a 1x3 line, more ids than one
    window, two row senders: the copy's windows and the senders' batches keep DRAM's alignment."""
    line, tokens, top_k, experts, hidden = 3, 4000, 3, 48, 16
    capacity = 40000
    assert not whole_tables(tokens, top_k, experts, line, hidden, capacity) and tokens > own_window_tokens(top_k)
    run_and_check(line, tokens, top_k, experts, hidden, capacity, seed=3, most_walks=1, count_list_reads=False)
