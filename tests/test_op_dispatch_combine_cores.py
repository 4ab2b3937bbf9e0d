"""Dense dispatch and combine spread over one worker core per fabric link: results against the torch
goldens, which core drives which link, and the status records merged over the cores."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from test_op_dispatch_combine import (
    HIDDEN,
    TOPOLOGY,
    check_dispatch,
    fabric_bytes_by_type,
    make_inputs,
    rows_in_blocks,
    to_mesh,
    unique_remote_pairs,
    words,
)
from ttnn_moe.emu.tensor import device_shards, from_shards

import ttnn_moe
from ttnn_moe import emu, golden


def open_mesh(shape, grid_columns):
    mesh = emu.open_mesh_device(emu.MeshShape(*shape), grid=(grid_columns, 1))
    mesh._mesh.fabric_topology = TOPOLOGY["Linear"]
    return mesh


def payload_links_by_core(counters):
    """{worker core: links it sent token payload (plain writes) over}."""
    links = {}
    for flow in counters["fabric"]["flows"]:
        if flow["type"] == "write":
            links.setdefault(tuple(flow["core"]), set()).add(flow["link"])
    return links


@pytest.mark.parametrize(
    "grid_columns, num_links, cores",
    [
        (4, 4, {(0, 0): {0}, (1, 0): {1}, (2, 0): {2}, (3, 0): {3}}),
        (2, 3, {(0, 0): {0, 1}, (1, 0): {2}}),  # fewer cores than links: the first takes two
    ],
)
def test_each_core_drives_its_own_links_and_the_results_match_the_golden(grid_columns, num_links, cores):
    shape, axis, batch, seq = (4, 2), 0, 1, 21  # 21 tokens: shares of 6, 6, 6, 3 (or 11, 10)
    xs, ids, ws, mapping = make_inputs(shape, axis, "uniform", batch, seq, seed=21)
    mesh = open_mesh(shape, grid_columns)
    out = ttnn_moe.all_to_all_dispatch_dense(
        *to_mesh(mesh, xs, ids, ws, mapping), cluster_axis=axis, num_links=num_links
    )
    counters = emu.last_run_counters()
    capacity = out.tokens.shape[0]
    expected = golden.all_to_all_dispatch_dense(xs, ids, ws, mapping, shape, axis, capacity=capacity)
    check_dispatch(out, expected)
    assert payload_links_by_core(counters) == cores
    assert fabric_bytes_by_type(counters)["write"] == unique_remote_pairs(ids, shape, axis) * HIDDEN * 2

    g = torch.Generator().manual_seed(5)
    reduced = [torch.randn(capacity, HIDDEN, generator=g).to(torch.bfloat16) for _ in xs]
    want = golden.all_to_all_combine_dense(
        reduced, [e.slot_source for e in expected], [e.num_slots for e in expected], shape, axis, batch, seq
    )
    reduced_mesh = from_shards(reduced, emu.bfloat16, emu.ROW_MAJOR_LAYOUT, mesh)
    combined = ttnn_moe.all_to_all_combine_dense(reduced_mesh, out.handle, output_dtype="float32")
    assert payload_links_by_core(emu.last_run_counters()) == cores
    for d, got in enumerate(device_shards(combined.output)):
        assert torch.equal(got, want[d]), f"device {d}"


def test_dispatch_defaults_to_every_fabric_link_the_grid_has_a_core_for():
    shape, axis = (4, 2), 0
    xs, ids, ws, mapping = make_inputs(shape, axis, "uniform", 1, 8, seed=22)
    mesh = open_mesh(shape, 8)
    mesh._mesh.set_fabric_num_links(3)
    out = ttnn_moe.all_to_all_dispatch_dense(*to_mesh(mesh, xs, ids, ws, mapping), cluster_axis=axis)
    assert out.handle.num_links == 3
    assert set(payload_links_by_core(emu.last_run_counters())) <= {(0, 0), (1, 0), (2, 0)}
    narrow = open_mesh(shape, 2)  # the grid's first row has two cores
    out = ttnn_moe.all_to_all_dispatch_dense(*to_mesh(narrow, xs, ids, ws, mapping), cluster_axis=axis)
    assert out.handle.num_links == 2


def test_combine_merges_every_cores_status_record():
    # Bad slots 3 and 9 of 12, sent by cores 3 and 1 (core c sends every 4th slot from slot c): the
    # record counts both and names the lower, though a higher core found it.
    shape, axis = (4, 2), 0
    xs, ids, ws, mapping = make_inputs(shape, axis, "uniform", 1, 6, seed=23)
    mesh = open_mesh(shape, 4)
    out = ttnn_moe.all_to_all_dispatch_dense(*to_mesh(mesh, xs, ids, ws, mapping), cluster_axis=axis, num_links=4)
    capacity = out.tokens.shape[0]
    reduced = from_shards(
        [torch.zeros(capacity, HIDDEN, dtype=torch.bfloat16)] * 8, emu.bfloat16, emu.ROW_MAJOR_LAYOUT, mesh
    )
    sources = [torch.zeros(capacity, 2, dtype=torch.int32) for _ in range(8)]
    sources[5][3] = torch.tensor([0, 6])  # token 6 of 6 is outside the tokens
    sources[5][9] = torch.tensor([7, 0])  # position 7 is outside the line of 4
    handle = dataclasses.replace(
        out.handle,
        slot_source=from_shards(sources, emu.uint32, emu.ROW_MAJOR_LAYOUT, mesh),
        num_slots=from_shards([torch.tensor([12], dtype=torch.int32)] * 8, emu.uint32, emu.ROW_MAJOR_LAYOUT, mesh),
    )
    result = ttnn_moe.all_to_all_combine_dense(reduced, handle, strict=False)
    records = [[int(v) & 0xFFFFFFFF for v in s.reshape(-1)] for s in device_shards(result.combine_status)]
    none = 0xFFFFFFFF
    assert records[5] == [2, 3, 0, 0, 0, 0, 0, 0]
    assert all(r == [0, none, 0, 0, 0, 0, 0, 0] for d, r in enumerate(records) if d != 5)


def test_cores_past_the_senders_sum_a_share_of_the_tokens():
    # A 4x4 grid and 2 links: cores (0, 0) and (1, 0) send, and 12 cores (rows 0 to 2) sum 37 tokens
    # in shares of 4 (cores 0 to 8), 1 (core 9) and none (cores 10 and 11).
    shape, axis = (4, 2), 0
    xs, ids, ws, mapping = make_inputs(shape, axis, "uniform", 1, 37, seed=24)
    mesh = emu.open_mesh_device(emu.MeshShape(*shape), grid=(4, 4))
    mesh._mesh.fabric_topology = TOPOLOGY["Linear"]
    out = ttnn_moe.all_to_all_dispatch_dense(*to_mesh(mesh, xs, ids, ws, mapping), cluster_axis=axis, num_links=2)
    capacity = out.tokens.shape[0]
    expected = golden.all_to_all_dispatch_dense(xs, ids, ws, mapping, shape, axis, capacity=capacity)
    g = torch.Generator().manual_seed(6)
    reduced = [torch.randn(capacity, HIDDEN, generator=g).to(torch.bfloat16) for _ in xs]
    want = golden.all_to_all_combine_dense(
        reduced, [e.slot_source for e in expected], [e.num_slots for e in expected], shape, axis, 1, 37
    )
    reduced_mesh = from_shards(reduced, emu.bfloat16, emu.ROW_MAJOR_LAYOUT, mesh)
    combined = ttnn_moe.all_to_all_combine_dense(reduced_mesh, out.handle, output_dtype="float32")
    counters = emu.last_run_counters()
    assert payload_links_by_core(counters) == {(0, 0): {0}, (1, 0): {1}}
    for device in counters["devices"].values():
        summing = {tuple(s["core"]) for s in device["timing"]["riscs"] if s["risc"] == "TRISC0"}
        assert len(summing) == 12
    for d, got in enumerate(device_shards(combined.output)):
        assert torch.equal(got, want[d]), f"device {d}"


def test_devices_that_receive_nothing_beside_one_that_receives_every_token():
    # Every token goes to experts of the first device of its line: the other devices receive no row,
    # list entry or slot, the first gets a slot for every (position, token) pair of the line (all the
    # slot_source pages a slot can take) and three fan-out copies per remote token. Eight cores: two
    # row senders, six gather-only cores, eight padding writers; stale values in the preallocated
    # slot_source and token_idx_map must be overwritten on every used slot and every row of the
    # blocks, and are left past them (nothing reads there).
    shape, axis, batch, seq = (4, 2), 0, 1, 12
    xs, ids, ws, mapping = make_inputs(shape, axis, "one_device", batch, seq, seed=24)
    mesh = open_mesh(shape, 8)
    inputs = to_mesh(mesh, xs, ids, ws, mapping)
    capacity = ttnn_moe.all_to_all_dispatch_dense(*inputs, cluster_axis=axis, num_links=2).tokens.shape[0]
    expected = golden.all_to_all_dispatch_dense(xs, ids, ws, mapping, shape, axis, capacity=capacity)
    line_size, tokens = shape[axis], batch * seq
    for d, exp in enumerate(expected):
        receives_all = d // shape[1] == 0  # line position 0 on axis 0
        assert int(exp.num_slots) == (line_size * tokens if receives_all else 0), f"device {d}"
    assert capacity > line_size * tokens  # pages past D_line x T exist, which no slot can take

    stale_slots = from_shards(
        [torch.full((capacity, 2), 7, dtype=torch.int32) for _ in xs], emu.uint32, emu.ROW_MAJOR_LAYOUT, mesh
    )
    stale_map = from_shards(
        [torch.full((capacity,), 9, dtype=torch.int32) for _ in xs], emu.uint32, emu.ROW_MAJOR_LAYOUT, mesh
    )
    out = ttnn_moe.all_to_all_dispatch_dense(
        *inputs,
        cluster_axis=axis,
        num_links=2,
        output_tensors=[None, None, None, stale_map, None, stale_slots],
    )
    assert out.handle.slot_source is stale_slots
    check_dispatch(out, expected)
    for d, exp in enumerate(expected):  # past the used slots and rows: untouched
        slots = words(device_shards(stale_slots)[d]).reshape(-1, 2)[int(exp.num_slots[0]) :]
        assert bool((slots == 7).all()), f"device {d}: slot_source past num_slots"
        rows_end = rows_in_blocks(exp)
        assert bool((words(device_shards(stale_map)[d]).reshape(-1)[rows_end:] == 9).all()), f"device {d}"


def test_padding_rows_written_by_the_first_two_rows_over_stale_tokens():
    # A 4-wide, 2-row grid: eight padding writers, the second row's four writing only padding rows.
    # Few tokens per expert: most rows of every block are padding, which must be zero over a
    # preallocated tokens tensor full of stale values; a one-row grid (four writers) gives the same.
    shape, axis, batch, seq = (2, 4), 1, 1, 5
    xs, ids, ws, mapping = make_inputs(shape, axis, "uniform", batch, seq, seed=41)
    results = []
    for rows in (2, 1):
        mesh = emu.open_mesh_device(emu.MeshShape(*shape), grid=(4, rows))
        mesh._mesh.fabric_topology = TOPOLOGY["Linear"]
        inputs = to_mesh(mesh, xs, ids, ws, mapping)
        capacity = ttnn_moe.all_to_all_dispatch_dense(*inputs, cluster_axis=axis).tokens.shape[0]
        expected = golden.all_to_all_dispatch_dense(xs, ids, ws, mapping, shape, axis, capacity=capacity)
        padding = sum(-(-int(c) // 32) * 32 - int(c) for exp in expected for c in exp.num_routed_tokens.reshape(-1))
        assert padding > 8 * len(xs)  # every writer has padding rows to write
        stale = from_shards(
            [torch.full((capacity, HIDDEN), 3.0, dtype=torch.bfloat16) for _ in xs],
            emu.bfloat16,
            emu.ROW_MAJOR_LAYOUT,
            mesh,
        )
        out = ttnn_moe.all_to_all_dispatch_dense(*inputs, cluster_axis=axis, output_tensors=[stale])
        assert out.tokens is stale
        check_dispatch(out, expected)
        writers = {
            tuple(span["core"])
            for device in emu.last_run_counters()["devices"].values()
            for span in device["timing"]["riscs"]
            if span["risc"] == "NCRISC"
        }
        assert writers == {(x, y) for x in range(4) for y in range(rows)}
        results.append(device_shards(out.tokens))
    assert all(torch.equal(a, b) for a, b in zip(*results))


def test_fan_out_copies_shared_by_both_riscs_of_the_first_row_match_the_golden():
    # TG 4x8 down the columns, four links, 37 tokens a device (not a multiple of 32), top-8 of the 32
    # experts of each token's own column: about one copy of a remote row into a second block per
    # (token, device), over a hundred a device, shared by the 16 data-movement RISCs of the first row
    # (8 cores wide), and the slot_source pages by its 8 cores.
    shape, axis, tokens, top_k, experts_per_device = (4, 8), 0, 37, 8, 8
    devices = shape[0] * shape[1]
    g = torch.Generator().manual_seed(37)
    xs = [torch.randn(1, tokens, HIDDEN, generator=g).to(torch.bfloat16) for _ in range(devices)]
    ids = []
    for d in range(devices):
        column = [r * shape[1] + d % shape[1] for r in range(shape[0])]
        line_experts = torch.tensor([q * experts_per_device + j for q in column for j in range(experts_per_device)])
        ids.append(
            torch.stack([line_experts[torch.randperm(len(line_experts), generator=g)[:top_k]] for _ in range(tokens)])
            .to(torch.int32)
            .reshape(1, tokens, top_k)
        )
    ws = [torch.rand(1, tokens, top_k, generator=g).to(torch.bfloat16) for _ in range(devices)]
    mapping = ttnn_moe.expert_mapping(devices * experts_per_device, devices)
    mesh = open_mesh(shape, 8)
    out = ttnn_moe.all_to_all_dispatch_dense(*to_mesh(mesh, xs, ids, ws, mapping), cluster_axis=axis, num_links=4)
    counters = emu.last_run_counters()
    capacity = out.tokens.shape[0]
    expected = golden.all_to_all_dispatch_dense(xs, ids, ws, mapping, shape, axis, capacity=capacity)
    check_dispatch(out, expected)
    assert fabric_bytes_by_type(counters)["write"] == unique_remote_pairs(ids, shape, axis) * HIDDEN * 2
    for d, exp in enumerate(expected):
        # Fan-out copies: every kept row of a remote slot past the slot's first.
        kept = torch.cat(
            [
                exp.token_idx_map.reshape(-1)[offset : offset + count]
                for offset, count in zip(
                    exp.expert_offsets.reshape(-1).tolist(), exp.num_routed_tokens.reshape(-1).tolist()
                )
            ]
        )
        rows_per_slot = torch.bincount(kept.to(torch.int64), minlength=int(exp.num_slots[0]))
        remote = exp.slot_source.reshape(-1, 2)[: int(exp.num_slots[0]), 0] != d // shape[1]
        assert int((rows_per_slot[remote] - 1).clamp(min=0).sum()) > 2 * 8 * 4, f"device {d}"
