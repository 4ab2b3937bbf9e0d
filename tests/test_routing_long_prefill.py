"""The routing ops past the L1 size of their tables: prepare_moe_routing_tensors' rows,
scatter_moe_input's routed_tokens rows and local_reduce_moe_output's assignment lists. Just below,
at and just above each op's single-chunk limit and at a 16k-token prefill (top-8, 256 experts, or
32 local experts per device), exact (indices) or by PCC (values) against the goldens, bitwise
reproducible, with the chunks counted from the emulator's DRAM counters. The other 16k-token runs
(scatter, local_reduce, 32 local experts per device) are in benchmarks/long_prefill.py."""

from __future__ import annotations

import math

import pytest
import torch
from emu_fixtures import emu_device_fixture
from routing_cases import rm, single_device_mapping
from ttnn_moe.emu.tensor import device_shards
from ttnn_moe.testing import assert_equal_exact, assert_pcc

import ttnn_moe
from ttnn_moe import _C, emu, golden

L1_BUDGET = 1024 * 1024  # the ops' circular buffers per core (docs/ops/*.md)
NONE = 0xFFFFFFFF
PREFILL = 16384  # tokens per device of a long-context prefill
TABLES = ("num_routed_tokens", "routed_tokens", "routed_token_weights", "token_idx_map")

one_core = emu_device_fixture(grid=(1, 1))
full_grid = emu_device_fixture(grid=(8, 8))


def top_k_ids(num_tokens: int, top_k: int, num_experts: int, seed: int) -> torch.Tensor:
    """(T, K) int32: K distinct experts per token, uniformly drawn."""
    g = torch.Generator().manual_seed(seed)
    return torch.rand(num_tokens, num_experts, generator=g).topk(top_k, dim=1).indices.int()


def random_weights(num_tokens: int, top_k: int, seed: int) -> torch.Tensor:
    return torch.rand(num_tokens, top_k, generator=torch.Generator().manual_seed(seed)).bfloat16()


def traffic(tensor) -> dict:
    """The last run's DRAM traffic on `tensor`'s buffer (single device)."""
    return emu.last_run_counters()["dram_buffers"][tensor.to_arg().address]


def round_up(value: int, multiple: int) -> int:
    return (value + multiple - 1) // multiple * multiple


def program_cbs(device, op_name: str, inputs: list, attributes) -> dict[int, tuple[int, int]]:
    """{CB index: (page size, total size)} of the op's program for these inputs on `device`."""
    op = getattr(_C.ops, op_name)
    context = _C.ops.MeshContext(kernels_root=str(ttnn_moe.paths.kernels_dir()), device=device.device_limits())
    args = [t.to_arg() for t in inputs]
    outputs = op.output_specs(attributes, args, context)
    ((_, program),) = op.program(attributes, args + list(outputs), context).mesh_programs
    cbs = {f.buffer_index: (f.page_size, cb.total_size) for cb in program.cbs for f in cb.format_descriptors}
    assert sum(total for _, total in cbs.values()) <= L1_BUDGET
    return cbs


def largest(fits, low: int, high: int) -> int:
    """The largest n in [low, high) with fits(n), fits being true up to some n and false after."""
    assert fits(low) and not fits(high)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if fits(mid) else (low, mid)
    return low


# ---- prepare_moe_routing_tensors: rows built in column windows


def run_prepare(device, ids, weights, mapping, **kwargs):
    return ttnn_moe.prepare_moe_routing_tensors(
        rm(device, ids, emu.uint32), rm(device, weights, emu.bfloat16), rm(device, mapping, emu.int32), **kwargs
    )


def prepare_window(device, num_tokens: int, top_k: int, num_experts: int) -> int:
    """The table columns each local expert keeps in L1 (T when its rows are whole), read from the
    page of cb_tokens (index 4) in the op's program: round_up(4 W) bytes."""
    ids = torch.zeros(num_tokens, top_k, dtype=torch.int32)
    inputs = [
        rm(device, ids, emu.uint32),
        rm(device, ids.bfloat16(), emu.bfloat16),
        rm(device, single_device_mapping(num_experts), emu.int32),
    ]
    attributes = _C.ops.prepare_moe_routing_tensors.Attributes()
    page, _ = program_cbs(device, "prepare_moe_routing_tensors", inputs, attributes)[4]
    alignment = device.device_limits().dram_alignment
    return num_tokens if page == round_up(num_tokens * 4, alignment) else page // 4


def check_prepare_tables(got, ids, weights, mapping, device_index=0):
    want = golden.prepare_moe_routing_tensors(ids, weights, mapping, device_index=device_index)
    for name, w in zip(TABLES, want):
        shards = device_shards(getattr(got, name))
        assert_equal_exact(w, shards[device_index].reshape(w.shape), name=f"{name} of device {device_index}")


def status_words(record) -> list[list[int]]:
    return [[int(v) & 0xFFFFFFFF for v in shard.reshape(-1).tolist()] for shard in device_shards(record)]


def check_prepare_writes(got, num_local: int, num_tokens: int, window: int):
    """Each local expert's three table rows are written in ceil(T / W) pieces."""
    for name in ("routed_tokens", "routed_token_weights", "token_idx_map"):
        assert traffic(getattr(got, name))["page_writes"] == num_local * math.ceil(num_tokens / window), name


def prepare_limit(device, top_k: int, num_experts: int) -> int:
    return largest(lambda t: prepare_window(device, t, top_k, num_experts) == t, 32, 1 << 16)


@pytest.mark.parametrize("offset", [-1, 0, 1], ids=["below", "at", "above"])
def test_prepare_at_the_single_window_limit(one_core, offset):
    """32 local experts on one core, top-8: whole rows up to the limit, windows past it."""
    top_k, num_experts = 8, 32
    limit = prepare_limit(one_core, top_k, num_experts)
    assert 4096 < limit < 8192  # where 32 rows of 6 B per token fill 1 MiB
    num_tokens = limit + offset
    window = prepare_window(one_core, num_tokens, top_k, num_experts)
    assert (window == num_tokens) == (offset <= 0)
    ids, weights = top_k_ids(num_tokens, top_k, num_experts, seed=offset + 2), random_weights(num_tokens, top_k, 3)
    mapping = single_device_mapping(num_experts)
    got = run_prepare(one_core, ids, weights, mapping)
    check_prepare_writes(got, num_experts, num_tokens, window)
    check_prepare_tables(got, ids, weights, mapping)
    assert status_words(got.routing_status) == [[0, NONE, NONE, NONE, 0, NONE, 0, NONE]]


def test_prepare_windows_keep_the_status_record(one_core):
    """Past the limit, an invalid id, a dropped assignment and strict mode behave as with whole rows."""
    top_k, num_experts = 2, 32
    num_tokens = prepare_limit(one_core, top_k, num_experts) + 40
    assert prepare_window(one_core, num_tokens, top_k, num_experts) < num_tokens
    ids = top_k_ids(num_tokens, top_k, num_experts, seed=7) % (num_experts - 1) + 1  # experts 1..31
    ids[:, 0] = 0  # every token picks expert 0 ...
    ids[0, 1] = 0  # ... token 0 twice: one assignment more than its row has columns
    ids[num_tokens - 5, 1] = num_experts + 3  # an invalid id late in the scan
    weights = random_weights(num_tokens, top_k, 4)
    with pytest.raises(ValueError, match=rf"expert id {num_experts + 3} at \(t, k\) = \({num_tokens - 5}, 1\)"):
        run_prepare(one_core, ids, weights, single_device_mapping(num_experts))
    got = run_prepare(one_core, ids, weights, single_device_mapping(num_experts), strict=False)
    assert status_words(got.routing_status) == [[1, num_tokens - 5, 1, num_experts + 3, 1, 0, 0, NONE]]
    # Expert 0's row: its first T assignments in (t, k) order, token 0 twice, the last token dropped.
    want_row = torch.cat([torch.zeros(1, dtype=torch.int32), torch.arange(num_tokens - 1, dtype=torch.int32)])
    assert_equal_exact(want_row, emu.to_torch(got.routed_tokens)[0].reshape(-1), name="expert 0's tokens")
    assert int(emu.to_torch(got.num_routed_tokens)[0, 0]) == num_tokens


def test_prepare_16k_tokens_256_experts_on_one_core(one_core):
    top_k, num_experts = 8, 256
    window = prepare_window(one_core, PREFILL, top_k, num_experts)
    assert window < PREFILL
    ids, weights = top_k_ids(PREFILL, top_k, num_experts, seed=16), random_weights(PREFILL, top_k, 17)
    mapping = single_device_mapping(num_experts)
    got = run_prepare(one_core, ids, weights, mapping)
    check_prepare_writes(got, num_experts, PREFILL, window)
    check_prepare_tables(got, ids, weights, mapping)


# ---- scatter_moe_input: routed_tokens rows read in chunks

SCATTER_CHUNK = 4096  # routed_tokens entries the reader holds (docs/ops/scatter_moe_input.md)


def run_scatter(device, x, counts, tokens):
    """-> (ScatterOutput, the routed_tokens device tensor)."""
    tokens_d = rm(device, tokens, emu.uint32)
    return ttnn_moe.scatter_moe_input(rm(device, x, emu.bfloat16), rm(device, counts, emu.uint32), tokens_d), tokens_d


def routing_tables(ids, num_experts, seed):
    weights = random_weights(ids.shape[0], ids.shape[1], seed)
    return golden.prepare_moe_routing_tensors(ids, weights, single_device_mapping(num_experts))


def balanced_ranges(items: int, parts: int) -> list[tuple[int, int]]:
    """The contiguous balanced split of output rows over cores (docs/ops/scatter_moe_input.md)."""
    return [(items * i // parts, items * (i + 1) // parts) for i in range(parts)]


def scatter_chunk_reads(counts: torch.Tensor, num_tokens: int, row_ranges: list[tuple[int, int]]) -> int:
    """routed_tokens reads: the first core's status check reads each expert's first count entries
    chunk by chunk; every core reads each chunk holding one of its rows below the count, once."""
    counts = [int(c) for c in counts.reshape(-1)]
    reads = sum(math.ceil(c / SCATTER_CHUNK) for c in counts)
    for begin, end in row_ranges:
        for l, count in enumerate(counts):
            lo, hi = max(begin, l * num_tokens), min(end, l * num_tokens + count)
            if lo < hi:
                first, last = (lo - l * num_tokens) // SCATTER_CHUNK, (hi - 1 - l * num_tokens) // SCATTER_CHUNK
                reads += last - first + 1
    return reads


def check_scatter(device, num_tokens, num_local, top_k, hidden, seed):
    ids = top_k_ids(num_tokens, top_k, num_local, seed=seed)
    counts, tokens, _, _ = routing_tables(ids, num_local, seed=seed + 1)
    x = torch.randn(num_tokens, hidden, generator=torch.Generator().manual_seed(seed + 2)).bfloat16()
    got, tokens_d = run_scatter(device, x, counts, tokens)
    reads = traffic(tokens_d)["page_reads"]
    assert_equal_exact(golden.scatter_moe_input(x, counts, tokens), emu.to_torch(got.output), name="scattered")
    assert emu.to_torch(got.scatter_status).reshape(-1).tolist() == [0, NONE, NONE, NONE, 0, NONE, NONE]
    cores = min(num_local * num_tokens, device.device_limits().grid.x * device.device_limits().grid.y)
    assert reads == scatter_chunk_reads(counts, num_tokens, balanced_ranges(num_local * num_tokens, cores))
    return reads


@pytest.mark.parametrize("num_tokens", [SCATTER_CHUNK - 1, SCATTER_CHUNK, SCATTER_CHUNK + 1])
def test_scatter_at_the_single_chunk_limit(one_core, num_tokens):
    """8 local experts, top-8: every expert receives every token (full rows), one core."""
    reads = check_scatter(one_core, num_tokens, num_local=8, top_k=8, hidden=32, seed=num_tokens)
    assert reads == 2 * 8 * math.ceil(num_tokens / SCATTER_CHUNK)


def test_scatter_status_check_reads_chunks(one_core):
    """A bad token index past the first chunk is found and named as with whole rows."""
    num_tokens, num_local = SCATTER_CHUNK + 100, 2
    counts = torch.tensor([[num_tokens], [3]], dtype=torch.int32)
    tokens = torch.arange(num_tokens, dtype=torch.int32).repeat(num_local, 1)
    tokens[0, SCATTER_CHUNK + 7] = num_tokens + 9
    x = torch.randn(num_tokens, 32, generator=torch.Generator().manual_seed(3)).bfloat16()
    with pytest.raises(ValueError, match=rf"routed_tokens\[0, {SCATTER_CHUNK + 7}\] = {num_tokens + 9} is outside"):
        run_scatter(one_core, x, counts, tokens)


# ---- local_reduce_moe_output: assignment lists streamed by more scans of the map


def run_reduce(device, y, idx_map, weights, counts, num_out_rows, **kwargs):
    """-> (LocalReduceOutput, the token_idx_map device tensor)."""
    idx_map_d = rm(device, idx_map, emu.uint32)
    out = ttnn_moe.local_reduce_moe_output(
        rm(device, y, emu.bfloat16),
        idx_map_d,
        rm(device, weights, emu.bfloat16),
        rm(device, counts, emu.uint32),
        num_out_rows=num_out_rows,
        **kwargs,
    )
    return out, idx_map_d


def list_capacity(device, num_local: int, num_tokens: int, hidden: int, num_out_rows: int) -> int:
    """Entries of the assignment lists of the padded op's program (no bound), read from the sorted
    list's CB (index 11: 8 B per entry; a multiple of 16 entries when L1 limits it)."""
    zeros = torch.zeros(num_local, num_tokens, dtype=torch.int32)
    inputs = [
        rm(device, torch.zeros(num_local, num_tokens, hidden).bfloat16(), emu.bfloat16),
        rm(device, zeros, emu.uint32),
        rm(device, zeros.bfloat16(), emu.bfloat16),
        rm(device, torch.zeros(num_local, 1, dtype=torch.int32), emu.uint32),
    ]
    attributes = _C.ops.local_reduce_moe_output.Attributes(num_out_rows=num_out_rows)
    _, total = program_cbs(device, "local_reduce_moe_output", inputs, attributes)[11]
    return total // 8


def greedy_groups(row_counts: list[int], capacity: int) -> int:
    """Groups of consecutive rows whose lists fit `capacity` entries together (docs/ops/local_reduce_moe_output.md)."""
    groups, held = 0, None
    for count in row_counts:
        if held is None or held + count > capacity:
            groups, held = groups + 1, 0
        held += count
    return groups


def reduce_case(num_tokens, num_local, top_k, hidden, total, seed):
    """A prefill's padded tables with the counts cut from the last expert down so that `total`
    assignments remain -> (y, idx_map, weights, counts)."""
    ids = top_k_ids(num_tokens, top_k, num_local, seed=seed)
    counts, _, weights, idx_map = routing_tables(ids, num_local, seed=seed + 1)
    excess = int(counts.sum()) - total
    for l in reversed(range(num_local)):
        cut = min(excess, int(counts[l, 0]))
        counts[l, 0] -= cut
        excess -= cut
    assert excess == 0
    y = torch.randn(num_local, num_tokens, hidden, generator=torch.Generator().manual_seed(seed + 2)).bfloat16()
    return y, idx_map, weights, counts


def valid_rows(idx_map, counts) -> list[int]:
    """Output row of every valid entry."""
    return [int(r) for l in range(counts.shape[0]) for r in idx_map[l, : int(counts[l, 0])]]


@pytest.mark.parametrize("offset", [-1, 0, 1], ids=["below", "at", "above"])
def test_local_reduce_at_the_single_scan_limit(one_core, full_grid, offset):
    """32 local experts, top-8, one core: one scan while its assignments fit the lists; past that a
    counting scan and one per group of rows. Bitwise equal to the 8x8 grid (a single scan per core)."""
    num_local, top_k, hidden = 32, 8, 32
    # 8192 output rows (one window; the rows past T receive nothing) fix the other scratch, so
    # the lists hold the same entries for every T past a map piece (2048).
    num_rows = 8192
    capacity = list_capacity(one_core, num_local, 4096, hidden, num_rows)
    num_tokens = capacity // top_k + 1
    assert list_capacity(one_core, num_local, num_tokens, hidden, num_rows) == capacity
    assert num_tokens <= num_rows
    total = capacity + offset
    y, idx_map, weights, counts = reduce_case(num_tokens, num_local, top_k, hidden, total, seed=offset + 30)
    (out, overflow, status), idx_map_d = run_reduce(one_core, y, idx_map, weights, counts, num_rows)
    scans = traffic(idx_map_d)["bytes_read"] // (4 * total)
    row_counts = torch.bincount(torch.tensor(valid_rows(idx_map, counts)), minlength=num_rows).tolist()
    assert scans == (1 if offset <= 0 else 1 + greedy_groups(row_counts, capacity))
    got = emu.to_torch(out)
    want = golden.local_reduce_moe_output(y, idx_map, weights, counts, num_rows)
    assert_pcc(want, got.float(), pcc=0.9999, name="reduced")
    assert not emu.to_torch(overflow).any()
    nothing_bad = [0, NONE, NONE, NONE, 0, NONE, NONE, 0, NONE, 0, NONE, NONE]
    every_row = [NONE, num_rows]  # no num_used_rows: all rows computed
    assert emu.to_torch(status).reshape(-1).tolist() == nothing_bad + every_row
    spread, _ = run_reduce(full_grid, y, idx_map, weights, counts, num_rows)
    assert torch.equal(emu.to_torch(spread.output), got)


@pytest.mark.parametrize("num_rows", [8191, 8192, 8193])
def test_local_reduce_at_the_row_window_limit(one_core, full_grid, num_rows):
    """One core indexes at most 8192 output rows at a time (docs/ops/local_reduce_moe_output.md):
    one scan of the map per window, the same bits as the 8x8 grid."""
    num_local, top_k, hidden = 8, 1, 32
    ids = top_k_ids(num_rows, top_k, num_local, seed=num_rows)
    counts, _, weights, idx_map = routing_tables(ids, num_local, seed=num_rows + 1)
    y = torch.randn(num_local, num_rows, hidden, generator=torch.Generator().manual_seed(7)).bfloat16()
    (out, overflow, _), idx_map_d = run_reduce(one_core, y, idx_map, weights, counts, num_rows)
    assert traffic(idx_map_d)["bytes_read"] == math.ceil(num_rows / 8192) * 4 * num_rows * top_k
    got = emu.to_torch(out)
    assert_pcc(golden.local_reduce_moe_output(y, idx_map, weights, counts, num_rows), got.float(), name="reduced")
    assert not emu.to_torch(overflow).any()
    spread, _ = run_reduce(full_grid, y, idx_map, weights, counts, num_rows)
    assert torch.equal(emu.to_torch(spread.output), got)


def test_local_reduce_row_longer_than_the_lists(one_core):
    """Every assignment lands in one output row: fed one list-sized slice per scan, in (l, i) order."""
    num_local, num_tokens, hidden = 32, 2048, 32
    capacity = list_capacity(one_core, num_local, num_tokens, hidden, 5)
    g = torch.Generator().manual_seed(41)
    # capacity + 100 assignments: the first experts full, the next one partly, the rest empty
    total = capacity + 100
    assert total <= num_local * num_tokens
    counts = torch.tensor([[min(num_tokens, max(0, total - l * num_tokens))] for l in range(num_local)])
    counts = counts.int()
    idx_map = torch.full((num_local, num_tokens), 3, dtype=torch.int32)
    weights = (torch.rand(num_local, num_tokens, generator=g) / 64).bfloat16()
    y = torch.randn(num_local, num_tokens, hidden, generator=g).bfloat16()
    (out, _, _), idx_map_d = run_reduce(one_core, y, idx_map, weights, counts, 5)
    assert traffic(idx_map_d)["bytes_read"] == 3 * 4 * total  # a counting scan, then 2 slices
    got = emu.to_torch(out)
    valid = torch.arange(num_tokens)[None, :] < counts  # (E_l, T)
    want = (weights.double()[valid][:, None] * y.double()[valid]).sum(dim=0)
    assert_pcc(want, got[3].double(), pcc=0.9999, name="long row")
    assert not got[[0, 1, 2, 4]].any()


# ---- the three ops in a row at 16k tokens on one core: every table chunked


def window_scans(row_counts: list[int], capacity: int, window_rows: int = 8192) -> int:
    """Map scans of one core: per window of rows one, plus one per group of rows when the window's
    assignments outgrow the lists (docs/ops/local_reduce_moe_output.md)."""
    scans = 0
    for begin in range(0, len(row_counts), window_rows):
        window = row_counts[begin : begin + window_rows]
        scans += 1 if sum(window) <= capacity else 1 + greedy_groups(window, capacity)
    return scans


def test_16k_prefill_through_prepare_scatter_and_local_reduce(one_core):
    """T = 16384, top-8 over 32 local experts, one core: prepare's rows in windows, scatter's rows
    in chunks, local_reduce's 16k rows in two windows, each outgrowing the lists."""
    num_local, top_k, hidden = 32, 8, 32
    ids, weights = top_k_ids(PREFILL, top_k, num_local, seed=60), random_weights(PREFILL, top_k, 61)
    mapping = single_device_mapping(num_local)
    tables = run_prepare(one_core, ids, weights, mapping)
    window = prepare_window(one_core, PREFILL, top_k, num_local)
    assert window < PREFILL
    check_prepare_writes(tables, num_local, PREFILL, window)
    check_prepare_tables(tables, ids, weights, mapping)
    counts, tokens, token_weights, idx_map = golden.prepare_moe_routing_tensors(ids, weights, mapping)

    x = torch.randn(PREFILL, hidden, generator=torch.Generator().manual_seed(62)).bfloat16()
    scattered = ttnn_moe.scatter_moe_input(
        rm(one_core, x, emu.bfloat16), tables.num_routed_tokens, tables.routed_tokens
    )
    reads = traffic(tables.routed_tokens)["page_reads"]
    assert reads == scatter_chunk_reads(counts, PREFILL, [(0, num_local * PREFILL)]) > 2 * num_local
    y = golden.scatter_moe_input(x, counts, tokens)
    assert_equal_exact(y, emu.to_torch(scattered.output), name="scattered")

    reduced = ttnn_moe.local_reduce_moe_output(
        scattered.output,
        tables.token_idx_map,
        tables.routed_token_weights,
        tables.num_routed_tokens,
        num_out_rows=PREFILL,
    )
    scans = traffic(tables.token_idx_map)["bytes_read"] // (4 * PREFILL * top_k)
    capacity = list_capacity(one_core, num_local, PREFILL, hidden, PREFILL)
    row_counts = torch.bincount(torch.tensor(valid_rows(idx_map, counts)), minlength=PREFILL).tolist()
    assert scans == window_scans(row_counts, capacity) > 2
    want = golden.local_reduce_moe_output(y, idx_map, token_weights, counts, PREFILL)
    assert_pcc(want, emu.to_torch(reduced.output).float(), pcc=0.9999, name="16k reduced")
