"""local_reduce_moe_output with num_used_rows (dispatch's num_slots) vs ttnn_moe.golden: only output
rows [0, num_used_rows) are computed and written, the count read on the device; the rest of a
preallocated output keeps what it held, and combine after it reads none of those rows.

Every y row outside the experts' blocks is NaN, so a read of one (even with weight 0) shows in
the output."""

import pytest
import torch
from emu_fixtures import emu_device_per_grid_fixture
from routing_cases import expert_ids, rm, single_device_mapping
from test_op_local_reduce_moe_output import _run_grouped as _run
from ttnn_moe.emu.tensor import device_shards, from_shards
from ttnn_moe.testing import assert_pcc

import ttnn_moe
from ttnn_moe import emu, golden

device = emu_device_per_grid_fixture([(2, 3), (8, 8)])
StatusWord = ttnn_moe._C.ops.local_reduce_moe_output.StatusWord
NONE = ttnn_moe._C.ops.local_reduce_moe_output.NONE
STALE_WORD = 12345  # what a preallocated row_overflow holds before the op


def _grouped_case(kind, num_slots, hidden, num_local, top_k, capacity, seed):
    """Slots [0, num_slots) routed by `kind`, packed by expert at 32-aligned offsets of an
    (M=capacity, H) buffer; outside the blocks y is NaN and the map names stray rows (also past
    num_slots), which the op must not read.
    -> (y (M, H), idx_map (M,), weights (M,), counts (E_l, 1), offsets (E_l, 1))."""
    ids = expert_ids(kind, num_slots, top_k, num_local, seed=seed)
    g = torch.Generator().manual_seed(seed)
    slot_weights = torch.rand(num_slots, top_k, generator=g).bfloat16()
    counts, _, token_weights, idx_map = golden.prepare_moe_routing_tensors(
        ids, slot_weights, single_device_mapping(num_local)
    )
    y = torch.full((capacity, hidden), float("nan")).bfloat16()
    flat_map = torch.randint(0, capacity, (capacity,), generator=g, dtype=torch.int32)
    flat_weights = torch.rand(capacity, generator=g).bfloat16()
    offsets = torch.zeros(num_local, 1, dtype=torch.int32)
    start = 0
    for l in range(num_local):
        n = int(counts[l, 0])
        offsets[l, 0] = start
        y[start : start + n] = torch.randn(n, hidden, generator=g).bfloat16()
        flat_map[start : start + n] = idx_map[l, :n]
        flat_weights[start : start + n] = token_weights[l, :n]
        start += (n + 31) // 32 * 32
    assert start <= capacity, "capacity too small for the routing"
    return y, flat_map, flat_weights, counts, offsets


def _count(device, n):
    return rm(device, torch.tensor([n], dtype=torch.int32), emu.uint32)


def _stale_outputs(device, capacity, hidden):
    out = emu.from_torch(
        torch.full((capacity, hidden), float("nan")).bfloat16(),
        emu.bfloat16,
        layout=emu.ROW_MAJOR_LAYOUT,
        device=device,
    )
    overflow = rm(device, torch.full((capacity, 1), STALE_WORD, dtype=torch.int32), emu.uint32)
    return [out, overflow, None]


def _status(result) -> list[int]:
    return [int(w) & 0xFFFFFFFF for w in emu.to_torch(result.reduce_status).reshape(-1).tolist()]


@pytest.mark.parametrize("kind", ["uniform", "skewed", "one_expert", "sparse"])
def test_only_the_used_rows_are_computed_and_written(device, kind):
    num_slots, hidden, num_local, top_k = 40, 96, 4, 2
    capacity = 512
    case = _grouped_case(kind, num_slots, hidden, num_local, top_k, capacity, seed=len(kind))
    outputs = _stale_outputs(device, capacity, hidden)
    result = _run(
        device,
        case,
        capacity,
        num_used_rows=_count(device, num_slots),
        max_assignments_per_row=top_k,
        output_tensors=outputs,
    )
    got = emu.to_torch(result.output)
    want = golden.local_reduce_moe_output(*case[:4], capacity, expert_offsets=case[4], num_used_rows=num_slots)
    assert_pcc(want[:num_slots], got[:num_slots].float(), pcc=0.9999, name=f"used rows ({kind})")
    # Summed in the same order as when every row is computed: bitwise the same rows.
    every_row = emu.to_torch(_run(device, case, capacity).output)
    assert torch.equal(got[:num_slots], every_row[:num_slots])
    assert torch.isnan(got[num_slots:]).all(), "rows past num_used_rows were written"
    overflow = emu.to_torch(result.row_overflow).reshape(-1)
    assert not overflow[:num_slots].any()
    assert (overflow[num_slots:] == STALE_WORD).all(), "row_overflow past num_used_rows was written"
    status = _status(result)
    assert (status[StatusWord.kUsedRowsRead], status[StatusWord.kRowsComputed]) == (num_slots, num_slots)
    assert status[StatusWord.kBadRows] == 0


def test_capacity_far_above_the_used_rows_moves_only_used_bytes(device):
    # The layer's prefill shape in small: 16640 rows of capacity, 48 used.
    num_slots, hidden, num_local, top_k, capacity = 48, 64, 8, 4, 16640
    case = _grouped_case("skewed", num_slots, hidden, num_local, top_k, capacity, seed=3)
    y = rm(device, case[0], emu.bfloat16)
    out = ttnn_moe.local_reduce_moe_output(
        y,
        rm(device, case[1], emu.uint32),
        rm(device, case[2], emu.bfloat16),
        rm(device, case[3], emu.uint32),
        num_out_rows=capacity,
        expert_offsets=rm(device, case[4], emu.uint32),
        num_used_rows=_count(device, num_slots),
        max_assignments_per_row=top_k,
    )
    buffers = emu.last_run_counters()["dram_buffers"]
    assignments = num_slots * top_k
    assert buffers[out.output.to_arg().address]["bytes_written"] == num_slots * hidden * 2
    assert buffers[out.row_overflow.to_arg().address]["bytes_written"] == num_slots * 4
    # Each valid y row is read once (one chunk: H <= 1024), nothing outside the blocks.
    assert buffers[y.to_arg().address]["bytes_read"] == assignments * hidden * 2
    want = golden.local_reduce_moe_output(*case[:4], capacity, expert_offsets=case[4], num_used_rows=num_slots)
    assert_pcc(want[:num_slots], emu.to_torch(out.output)[:num_slots].float(), pcc=0.9999, name="large capacity")


def test_no_used_rows_writes_nothing_and_reports_status(device):
    capacity, hidden = 96, 64
    y = torch.full((capacity, hidden), float("nan")).bfloat16()
    idle = (
        y,
        torch.zeros(capacity, dtype=torch.int32),
        torch.zeros(capacity).bfloat16(),
        torch.zeros(3, 1, dtype=torch.int32),
        torch.zeros(3, 1, dtype=torch.int32),
    )
    result = _run(
        device, idle, capacity, num_used_rows=_count(device, 0), output_tensors=_stale_outputs(device, capacity, hidden)
    )
    assert torch.isnan(emu.to_torch(result.output)).all()
    assert (emu.to_torch(result.row_overflow) == STALE_WORD).all()
    status = _status(result)
    assert (status[StatusWord.kUsedRowsRead], status[StatusWord.kRowsComputed], status[StatusWord.kBadRows]) == (
        0,
        0,
        0,
    )


def test_entries_past_the_used_rows_are_summed_nowhere_and_reported(device):
    case = _grouped_case("uniform", 20, 32, 2, 2, 128, seed=4)
    # 20 slots routed, 15 said used: the entries of slots 15..19 name no computed row.
    with pytest.raises(
        ValueError, match=r"token_idx_map\[\d+\] \(expert \d\) = 1[5-9] is outside \[0, num_used_rows=15\)"
    ):
        _run(device, case, 128, num_used_rows=_count(device, 15))
    result = _run(device, case, 128, num_used_rows=_count(device, 15), strict=False)
    status = _status(result)
    assert status[StatusWord.kBadRows] == int((case[1][_valid_rows(case)] >= 15).sum())
    assert status[StatusWord.kRowsComputed] == 15
    kept = case[1].clone()
    kept[kept >= 15] = 0
    cut = (case[0], kept, torch.where(case[1] >= 15, 0.0, case[2].float()).bfloat16(), case[3], case[4])
    want = golden.local_reduce_moe_output(*cut[:4], 128, expert_offsets=cut[4], num_used_rows=15)
    assert_pcc(want[:15], emu.to_torch(result.output)[:15].float(), pcc=0.9999, name="rows below num_used_rows")


def _valid_rows(case) -> torch.Tensor:
    counts, offsets = case[3].reshape(-1).tolist(), case[4].reshape(-1).tolist()
    return torch.cat([torch.arange(o, o + c) for o, c in zip(offsets, counts)])


def test_a_count_past_num_out_rows_is_clamped_and_reported(device):
    case = _grouped_case("skewed", 24, 64, 4, 2, 160, seed=6)
    with pytest.raises(ValueError, match=r"num_used_rows = 200 exceeds num_out_rows=24"):
        _run(device, case, 24, num_used_rows=_count(device, 200))
    result = _run(device, case, 24, num_used_rows=_count(device, 200), strict=False)
    status = _status(result)
    assert (status[StatusWord.kUsedRowsRead], status[StatusWord.kRowsComputed]) == (200, 24)
    assert torch.equal(emu.to_torch(result.output), emu.to_torch(_run(device, case, 24).output))


def test_one_program_serves_every_count(device):
    case = _grouped_case("skewed", 30, 64, 4, 2, 160, seed=7)
    first = emu.to_torch(_run(device, case, 160, num_used_rows=_count(device, 30)).output)
    before = ttnn_moe._C.ops.local_reduce_moe_output.program_cache_info()
    second = emu.to_torch(_run(device, case, 160, num_used_rows=_count(device, 100)).output)
    after = ttnn_moe._C.ops.local_reduce_moe_output.program_cache_info()
    assert after["hits"] == before["hits"] + 1 and after["misses"] == before["misses"]
    assert torch.equal(first[:30], second[:30])
    assert not second[30:100].any(), "computed rows without assignments are 0"


def test_padded_mode_computes_the_used_tokens(device):
    num_tokens, hidden, num_local, top_k = 50, 128, 4, 2
    ids = expert_ids("sparse", num_tokens, top_k, num_local, seed=8)
    weights = torch.rand(num_tokens, top_k, generator=torch.Generator().manual_seed(8)).bfloat16()
    counts, _, token_weights, idx_map = golden.prepare_moe_routing_tensors(
        ids, weights, single_device_mapping(num_local)
    )
    y = torch.randn(num_local, num_tokens, hidden, generator=torch.Generator().manual_seed(9)).bfloat16()
    for l in range(num_local):  # past each expert's count y is never read
        y[l, int(counts[l, 0]) :] = float("nan")
    out = _stale_outputs(device, 64, hidden)
    result = ttnn_moe.local_reduce_moe_output(
        rm(device, y, emu.bfloat16),
        rm(device, idx_map, emu.uint32),
        rm(device, token_weights, emu.bfloat16),
        rm(device, counts, emu.uint32),
        num_out_rows=64,
        num_used_rows=_count(device, num_tokens),
        output_tensors=out,
    )
    got = emu.to_torch(result.output)
    want = golden.local_reduce_moe_output(y, idx_map, token_weights, counts, 64, num_used_rows=num_tokens)
    assert_pcc(want[:num_tokens], got[:num_tokens].float(), pcc=0.9999, name="padded used rows")
    assert torch.isnan(got[num_tokens:]).all()


def test_bad_num_used_rows_raises_naming_it(device):
    case = _grouped_case("uniform", 8, 32, 2, 1, 64, seed=1)
    with pytest.raises(ValueError, match="num_used_rows \\(1,\\) must be uint32, got bfloat16"):
        _run(device, case, 8, num_used_rows=rm(device, torch.ones(1).bfloat16(), emu.bfloat16))
    with pytest.raises(ValueError, match=r"num_used_rows must hold one count, got shape \(2,\)"):
        _run(device, case, 8, num_used_rows=rm(device, torch.ones(2, dtype=torch.int32), emu.uint32))


def test_combine_reads_only_the_used_slots():
    """Mesh flow dispatch -> local reduce of the dispatched rows over the used slots into a NaN-filled
    output -> combine: a slot row past num_slots read by combine would make its tokens NaN."""
    shape, axis, batch, seq, hidden, num_experts, top_k = (4, 2), 0, 1, 5, 64, 64, 4
    num_devices = shape[0] * shape[1]
    g = torch.Generator().manual_seed(12)
    xs = [torch.randn(batch, seq, hidden, generator=g).bfloat16() for _ in range(num_devices)]
    ids = [torch.stack([torch.randperm(num_experts, generator=g)[:top_k] for _ in range(batch * seq)]) for _ in xs]
    ids = [i.reshape(batch, seq, top_k).to(torch.int32) for i in ids]
    ws = [torch.rand(batch, seq, top_k, generator=g).bfloat16() for _ in xs]
    mapping = ttnn_moe.expert_mapping(num_experts, num_devices)
    mesh = emu.open_mesh_device(emu.MeshShape(*shape), grid=(2, 2))
    try:
        dispatched = ttnn_moe.all_to_all_dispatch_dense(
            from_shards(xs, emu.bfloat16, emu.ROW_MAJOR_LAYOUT, mesh),
            from_shards(ids, emu.uint32, emu.ROW_MAJOR_LAYOUT, mesh),
            from_shards(ws, emu.bfloat16, emu.ROW_MAJOR_LAYOUT, mesh),
            from_shards([mapping] * num_devices, emu.int32, emu.ROW_MAJOR_LAYOUT, mesh),
            cluster_axis=axis,
        )
        capacity = dispatched.tokens.shape[0]
        stale = torch.full((capacity, hidden), float("nan")).bfloat16()
        reduced = ttnn_moe.local_reduce_moe_output(
            dispatched.tokens,
            dispatched.token_idx_map,
            dispatched.routed_token_weights,
            dispatched.num_routed_tokens,
            num_out_rows=capacity,
            expert_offsets=dispatched.expert_offsets,
            num_used_rows=dispatched.handle.num_slots,
            max_assignments_per_row=top_k,
            output_tensors=[from_shards([stale] * num_devices, emu.bfloat16, emu.ROW_MAJOR_LAYOUT, mesh), None, None],
        ).output
        combined = device_shards(ttnn_moe.all_to_all_combine_dense(reduced, dispatched.handle).output)
        shards = {
            name: device_shards(t)
            for name, t in [
                ("tokens", dispatched.tokens),
                ("idx_map", dispatched.token_idx_map),
                ("weights", dispatched.routed_token_weights),
                ("counts", dispatched.num_routed_tokens),
                ("offsets", dispatched.expert_offsets),
                ("slot_source", dispatched.handle.slot_source),
                ("num_slots", dispatched.handle.num_slots),
                ("reduced", reduced),
            ]
        }
    finally:
        emu.close_mesh_device(mesh)
    words = {
        k: [t.to(torch.int64) & 0xFFFFFFFF for t in shards[k]]
        for k in ("idx_map", "counts", "offsets", "slot_source", "num_slots")
    }
    want_reduced = []
    for d in range(num_devices):
        slots = int(words["num_slots"][d].reshape(-1)[0])
        assert 0 < slots < capacity
        want = golden.local_reduce_moe_output(
            shards["tokens"][d],
            words["idx_map"][d],
            shards["weights"][d],
            words["counts"][d],
            capacity,
            expert_offsets=words["offsets"][d],
            num_used_rows=slots,
        )
        assert_pcc(want[:slots], shards["reduced"][d][:slots].float(), pcc=0.9999, name=f"device {d} slots")
        assert torch.isnan(shards["reduced"][d][slots:]).all(), f"device {d}: rows past num_slots were written"
        want_reduced.append(want)
    want_combined = golden.all_to_all_combine_dense(
        want_reduced, words["slot_source"], words["num_slots"], shape, axis, batch, seq
    )
    for d in range(num_devices):
        assert not torch.isnan(combined[d]).any(), f"device {d}: combine read a slot row past num_slots"
        assert_pcc(want_combined[d], combined[d].float(), pcc=0.9999, name=f"device {d} combine")
