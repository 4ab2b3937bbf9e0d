"""all_to_all_combine_dense on QUAD's line of 16 and on TG 4x8 at DeepSeek-V3's H = 7168, exact against
ttnn_moe.golden: DeepSeek-V3 routing, every C-th slot sent by each of the C sender cores over its own
link, a device that receives nothing beside one that holds every token, and partial rows streamed
through a cb_partial ring that a batch of rows does not divide."""

from __future__ import annotations

import torch
from combine_inputs import check_exact, combine_inputs
from ttnn_moe.emu.tensor import device_shards

import ttnn_moe
from ttnn_moe import _C, emu, golden

H = 7168  # DeepSeek-V3
EXPERTS, TOP_K = 256, 8


def deepseek_slots(rows: int, cols: int, tokens: int, seed: int) -> list[torch.Tensor]:
    """Per device (row-major) of a rows x cols mesh combining along axis 0: its slots, (source
    position, token) in ascending order, for top-8 of 256 experts drawn uniformly per token, the
    experts dealt out e // (256 / devices)."""
    owner_of = torch.arange(EXPERTS) // (EXPERTS // (rows * cols))
    slots = []
    for device in range(rows * cols):
        col = device % cols
        pairs = []
        for q in range(rows):  # the line of column col: devices q * cols + col
            g = torch.Generator().manual_seed(seed * 1000 + q * cols + col)  # that device's tokens
            for t in range(tokens):
                chosen = torch.randperm(EXPERTS, generator=g)[:TOP_K]
                if (owner_of[chosen] == device).any():
                    pairs.append((q, t))
        slots.append(torch.tensor(pairs, dtype=torch.int32).reshape(-1, 2))
    return slots


def run_combine(shape, slots, tokens, *, links=4, grid=(8, 8), hidden=H, seed=0):
    """Combine of random rows, one slot list per device, along axis 0 of `shape`; returns the float32
    and bfloat16 outputs, the golden and the run's fabric flows (of the float32 run)."""
    mesh = emu.open_mesh_device(emu.MeshShape(*shape), grid=grid)
    mesh._mesh.fabric_topology = _C.emu.Topology.Linear
    mesh._mesh.set_fabric_num_links(links)
    handle, reduced_mesh, reduced, sources, counts = combine_inputs(
        mesh, slots, tokens, cluster_axis=0, links=links, hidden=hidden, seed=seed
    )
    got32 = device_shards(ttnn_moe.all_to_all_combine_dense(reduced_mesh, handle, output_dtype="float32").output)
    flows = emu.last_run_counters()["fabric"]["flows"]
    got16 = device_shards(ttnn_moe.all_to_all_combine_dense(reduced_mesh, handle).output)
    want = golden.all_to_all_combine_dense(reduced, sources, counts, shape, 0, 1, tokens)
    return got32, got16, want, flows


def payload_by_sender(flows):
    """{(device, core x, link): token payload bytes it sent over the fabric}."""
    sent = {}
    for f in flows:
        if f["type"] == "write":
            key = (f["src"], f["core"][0], f["link"])
            sent[key] = sent.get(key, 0) + f["bytes"]
    return sent


def test_quad_line_of_16_decode_every_core_sends_every_c_th_slot_on_its_own_link():
    line, tokens, links = 16, 32, 4
    slots = deepseek_slots(line, 8, tokens, seed=1)[::8]  # column 0 of QUAD 16x8: a line of 16
    got32, got16, want, flows = run_combine((line, 1), slots, tokens, links=links)
    check_exact(got32, got16, want)
    expected = {}
    for d, s in enumerate(slots):
        for slot, (q, _t) in enumerate(s.tolist()):
            if q != d:  # its own rows go over the NOC
                key = (d, slot % links, slot % links)  # core c sends slots c, c + 4, ... on link c
                expected[key] = expected.get(key, 0) + H * 2
    assert payload_by_sender(flows) == expected


def test_a_line_of_16_with_one_device_holding_every_token_and_one_receiving_nothing():
    # Device 5 holds a slot for every (position, token) pair but position 9's: every other device holds
    # none and sends nothing, device 9 receives nothing and sums to zeros, the others get one partial
    # per token, from 5.
    line, tokens = 16, 6
    pairs = [(q, t) for q in range(line) for t in range(tokens) if q != 9]
    slots = [torch.zeros(0, 2, dtype=torch.int32) for _ in range(line)]
    slots[5] = torch.tensor(pairs, dtype=torch.int32)
    got32, got16, want, flows = run_combine((line, 1), slots, tokens, seed=2)
    check_exact(got32, got16, want)
    assert torch.equal(got32[9], torch.zeros(1, tokens, H))
    assert {f["src"] for f in flows if f["type"] == "write"} == {5}


def test_tg_4x8_decode_every_column_a_line_of_4():
    shape, tokens = (4, 8), 32
    slots = deepseek_slots(*shape, tokens, seed=3)
    got32, got16, want, _ = run_combine(shape, slots, tokens, seed=3)
    check_exact(got32, got16, want)


def test_partial_rows_wrap_a_ring_that_a_batch_does_not_divide():
    # A line of 3 on one core: cb_partial holds 2 x 3 rows, batches of 4 rows end at the ring's end
    # (4, 2, 4, 2, ...). Position 0 holds every (position, token) pair, 1 and 2 every other one: a
    # token has 1 to 3 partials; H = 1040 leaves a 16-element tail chunk.
    line, tokens = 3, 40
    slots = [torch.tensor([(q, t) for q in range(line) for t in range(tokens)], dtype=torch.int32)] + [
        torch.tensor([(q, t) for q in range(line) for t in range(tokens) if (q + t + h) % 2], dtype=torch.int32)
        for h in (1, 2)
    ]
    got32, got16, want, _ = run_combine((line, 1), slots, tokens, links=1, grid=(1, 1), hidden=1040, seed=4)
    check_exact(got32, got16, want)
