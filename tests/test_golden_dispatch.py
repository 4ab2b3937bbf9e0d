"""all_to_all_dispatch_dense / all_to_all_combine_dense against per-assignment loops.

Dispatch: every device's outputs are rebuilt from a loop over all (source device, b, s, k).
Combine: with identity experts, combine(local_reduce(moe_bmm(dispatch(x)))) must equal, per token, the
sum of weight * x over the token's assignments to experts inside its dispatch group.
"""

import math

import pytest
import torch
from ttnn_moe.golden import (
    all_to_all_combine_dense,
    all_to_all_dispatch_dense,
    default_dispatch_capacity,
    local_reduce_moe_output,
    moe_bmm,
)
from ttnn_moe.testing import assert_equal_exact, assert_pcc

from ttnn_moe import expert_mapping

MESHES = [(1, 8), (2, 4), (4, 8), (8, 8), (16, 8)]
NUM_EXPERTS, BATCH, SEQ, TOP_K, HIDDEN = 256, 2, 2, 8, 64


class Mesh:
    """Coordinates written out directly from the row-major numbering."""

    def __init__(self, shape, axis):
        self.rows, self.cols = shape
        self.axis = axis
        self.size = self.rows * self.cols

    def position(self, d):
        return d // self.cols if self.axis == 0 else d % self.cols

    def same_group(self, a, b):
        return a % self.cols == b % self.cols if self.axis == 0 else a // self.cols == b // self.cols

    def member_at(self, d, position):
        return [m for m in range(self.size) if self.same_group(d, m) and self.position(m) == position][0]


def make_inputs(mesh, seed, *, pick=None):
    g = torch.Generator().manual_seed(seed)
    xs, ids, ws = [], [], []
    for _ in range(mesh.size):
        xs.append(torch.randn(BATCH, SEQ, HIDDEN, generator=g).to(torch.bfloat16))
        if pick is None:
            chosen = torch.stack([torch.randperm(NUM_EXPERTS, generator=g)[:TOP_K] for _ in range(BATCH * SEQ)])
        else:
            chosen = pick(g)
        ids.append(chosen.reshape(BATCH, SEQ, TOP_K).to(torch.int32))
        ws.append(torch.rand(BATCH, SEQ, TOP_K, generator=g).to(torch.bfloat16))
    return xs, ids, ws


def owners_from(mapping):
    return [row.index(1) for row in mapping.reshape(mapping.shape[-2], mapping.shape[-1]).tolist()]


def loop_received(mesh, ids, ws, owner):
    """received[device][local expert] = [(position, token, k, source device, weight)] in (position, token, k) order."""
    experts_of = [[e for e in range(len(owner)) if owner[e] == d] for d in range(mesh.size)]
    received = [[[] for _ in experts_of[d]] for d in range(mesh.size)]
    for src in range(mesh.size):
        top_k = ids[src].shape[-1]
        flat_ids, flat_w = ids[src].reshape(-1, top_k).tolist(), ws[src].reshape(-1, top_k).float().tolist()
        for token, row in enumerate(flat_ids):
            for k, e in enumerate(row):
                if not 0 <= e < len(owner):
                    continue
                dest = owner[e]
                if mesh.same_group(src, dest):
                    item = (mesh.position(src), token, k, src, flat_w[token][k])
                    received[dest][experts_of[dest].index(e)].append(item)
    for lists in received:
        for items in lists:
            items.sort()
    return received


def expected_device_output(items_per_expert, xs, capacity):
    """The documented layout built row by row from the received assignments."""
    tokens = torch.zeros(capacity, HIDDEN, dtype=torch.bfloat16)
    idx, weights = torch.zeros(capacity, dtype=torch.int32), torch.zeros(capacity)
    source = torch.zeros(capacity, 2, dtype=torch.int32)
    counts, offsets, placed = [], [], []
    next_row = 0
    for items in items_per_expert:
        kept = items[: max(0, capacity - next_row)]
        counts.append(len(kept))
        offsets.append(next_row)
        placed += [(next_row + i, item) for i, item in enumerate(kept)]
        next_row += math.ceil(len(kept) / 32) * 32
    pairs = sorted({(item[0], item[1]) for _, item in placed})
    for row, (pos, token, _, src, w) in placed:
        tokens[row] = xs[src].reshape(-1, HIDDEN)[token]
        idx[row] = pairs.index((pos, token))
        weights[row] = w
    for s, pair in enumerate(pairs):
        source[s] = torch.tensor(pair)
    dropped = sum(len(items) for items in items_per_expert) - len(placed)
    return dict(
        tokens=tokens,
        num_routed_tokens=torch.tensor(counts).reshape(-1, 1),
        expert_offsets=torch.tensor(offsets).reshape(-1, 1),
        token_idx_map=idx,
        routed_token_weights=weights,
        slot_source=source,
        num_slots=torch.tensor([len(pairs)]),
        overflow=torch.tensor([dropped]),
    )


def check_dispatch(mesh, xs, ids, ws, mapping, capacity, outputs):
    received = loop_received(mesh, ids, ws, owners_from(mapping))
    assert len(outputs) == mesh.size
    for d, out in enumerate(outputs):
        expected = expected_device_output(received[d], xs, capacity)
        for field, value in expected.items():
            assert_equal_exact(value, getattr(out, field), f"device {d} {field}")
        assert out.tokens.dtype == torch.bfloat16 and out.routed_token_weights.dtype == torch.bfloat16
        index_fields = [f for f in expected if f not in ("tokens", "routed_token_weights")]
        assert all(getattr(out, f).dtype == torch.int32 for f in index_fields)


def identity_expert_combine(mesh, outputs, **kwargs):
    """Experts are identity matrices run through moe_bmm's grouped mode, so each expert output
    row is its token row."""
    expert_out = [
        moe_bmm(
            out.tokens,
            torch.eye(HIDDEN).repeat(out.num_routed_tokens.shape[0], 1, 1),  # (E_l, H, H)
            out.num_routed_tokens,
            expert_offsets=out.expert_offsets,
        )
        for out in outputs
    ]
    reduced = [
        local_reduce_moe_output(
            y,
            out.token_idx_map,
            out.routed_token_weights,
            out.num_routed_tokens,
            out.tokens.shape[0],
            expert_offsets=out.expert_offsets,
        )
        for y, out in zip(expert_out, outputs)
    ]
    return all_to_all_combine_dense(
        reduced,
        [o.slot_source for o in outputs],
        [o.num_slots for o in outputs],
        (mesh.rows, mesh.cols),
        mesh.axis,
        BATCH,
        SEQ,
        **kwargs,
    )


def loop_partials(mesh, xs, ids, ws, owner):
    """partials[d][q, token] = sum of w * x over d's assignments to experts on the group member at position q."""
    group_size = mesh.rows if mesh.axis == 0 else mesh.cols
    partials = [torch.zeros(group_size, BATCH * SEQ, HIDDEN, dtype=torch.float64) for _ in range(mesh.size)]
    for d in range(mesh.size):
        x = xs[d].reshape(-1, HIDDEN).double()
        for token, row in enumerate(ids[d].reshape(-1, TOP_K).tolist()):
            for k, e in enumerate(row):
                if 0 <= e < len(owner) and mesh.same_group(d, owner[e]):
                    partials[d][mesh.position(owner[e]), token] += float(ws[d].reshape(-1, TOP_K)[token, k]) * x[token]
    return partials


def all_on_first_experts(g):
    return torch.arange(TOP_K).repeat(BATCH * SEQ, 1)


@pytest.mark.parametrize("mesh_shape", MESHES, ids=lambda m: f"{m[0]}x{m[1]}")
@pytest.mark.parametrize("cluster_axis", [0, 1])
def test_dispatch_and_combine_match_loops(mesh_shape, cluster_axis):
    mesh = Mesh(mesh_shape, cluster_axis)
    mapping = expert_mapping(NUM_EXPERTS, mesh.size)
    xs, ids, ws = make_inputs(mesh, seed=mesh.size + cluster_axis)
    outputs = all_to_all_dispatch_dense(xs, ids, ws, mapping, mesh_shape, cluster_axis)
    experts_per_device = NUM_EXPERTS // mesh.size
    group_size = mesh_shape[cluster_axis]
    capacity = math.ceil(group_size * BATCH * SEQ * min(TOP_K, experts_per_device) / 32) * 32 + 32 * experts_per_device
    check_dispatch(mesh, xs, ids, ws, mapping, capacity, outputs)

    combined = identity_expert_combine(mesh, outputs)
    partials = identity_expert_combine(mesh, outputs, return_partials=True)
    expected_partials = loop_partials(mesh, xs, ids, ws, owners_from(mapping))
    for d in range(mesh.size):
        expected = expected_partials[d].sum(0).reshape(BATCH, SEQ, HIDDEN)
        assert combined[d].dtype == torch.float32 and combined[d].shape == (BATCH, SEQ, HIDDEN)
        torch.testing.assert_close(combined[d].double(), expected, rtol=1e-5, atol=1e-5)
        assert_pcc(expected, combined[d], 0.99999, f"combine device {d}")
        assert partials[d].shape == (group_size, BATCH, SEQ, HIDDEN)
        torch.testing.assert_close(
            partials[d].double(), expected_partials[d].reshape(group_size, BATCH, SEQ, HIDDEN), rtol=1e-5, atol=1e-5
        )


@pytest.mark.parametrize("cluster_axis", [0, 1])
def test_skewed_routing_leaves_devices_empty(cluster_axis):
    """Every token picks experts 0..7, all on device 0: only device 0's group routes anything."""
    mesh = Mesh((4, 8), cluster_axis)
    mapping = expert_mapping(NUM_EXPERTS, mesh.size)
    xs, ids, ws = make_inputs(mesh, seed=5, pick=all_on_first_experts)
    outputs = all_to_all_dispatch_dense(xs, ids, ws, mapping, (4, 8), cluster_axis)
    check_dispatch(mesh, xs, ids, ws, mapping, outputs[0].tokens.shape[0], outputs)
    group_size = 4 if cluster_axis == 0 else 8
    assert outputs[0].num_routed_tokens[:, 0].tolist() == [group_size * BATCH * SEQ] * 8
    assert all(int(out.num_slots[0]) == 0 for out in outputs[1:])
    combined = identity_expert_combine(mesh, outputs)
    for d in range(mesh.size):
        expected = sum(ws[d][..., k : k + 1].double() * xs[d].double() for k in range(TOP_K))
        if not mesh.same_group(d, 0):
            expected = torch.zeros_like(expected)
        torch.testing.assert_close(combined[d].double(), expected, rtol=1e-5, atol=1e-5)


def test_repeated_experts_and_custom_placement():
    """Tokens pick one expert several times; experts are placed by an arbitrary one-hot map."""
    mesh = Mesh((2, 4), 0)
    owner = (torch.randperm(NUM_EXPERTS, generator=torch.Generator().manual_seed(3)) % mesh.size).tolist()
    mapping = torch.zeros(1, 1, NUM_EXPERTS, mesh.size, dtype=torch.int32)
    mapping[0, 0, torch.arange(NUM_EXPERTS), torch.tensor(owner)] = 1

    def repeats(g):
        chosen = torch.randint(0, 40, (BATCH * SEQ, TOP_K), generator=g)
        chosen[:, 1] = chosen[:, 0]
        return chosen

    xs, ids, ws = make_inputs(mesh, seed=9, pick=repeats)
    capacity = 32 * 40
    outputs = all_to_all_dispatch_dense(xs, ids, ws, mapping, (2, 4), 0, capacity=capacity)
    check_dispatch(mesh, xs, ids, ws, mapping, capacity, outputs)
    combined = identity_expert_combine(mesh, outputs)
    expected = loop_partials(mesh, xs, ids, ws, owner)
    for d in range(mesh.size):
        per_token = expected[d].sum(0).reshape(BATCH, SEQ, HIDDEN)
        torch.testing.assert_close(combined[d].double(), per_token, rtol=1e-5, atol=1e-5)


def test_default_capacity_formula():
    assert default_dispatch_capacity(4, 8, 16, 2) == 128 + 64
    assert default_dispatch_capacity(5, 8, 4, 8) == 160 + 256
    assert default_dispatch_capacity(1, 8, 8, 32) == 64 + 1024
    assert default_dispatch_capacity(3, 2, 1, 4) == 32 + 128
    with pytest.raises(ValueError, match="top_k must be positive, got 0"):
        default_dispatch_capacity(4, 0, 2, 2)


def overflow_case():
    """(1, 2) mesh on axis 1; device 0 owns experts 0..3 and gets 3 + 33 + 1 rows from its group."""
    mesh = Mesh((1, 2), 1)
    mapping = expert_mapping(8, 2)
    ids = [torch.full((1, 20, 1), 1, dtype=torch.int32), torch.full((1, 20, 1), 5, dtype=torch.int32)]
    ids[0][0, :3, 0] = 0
    ids[1][0, :16, 0] = 1
    ids[1][0, 19, 0] = 3
    xs = [torch.randn(1, 20, HIDDEN).to(torch.bfloat16) for _ in range(2)]
    ws = [torch.rand(1, 20, 1).to(torch.bfloat16) for _ in range(2)]
    return mesh, mapping, xs, ids, ws


def test_overflow_strict_raises_and_non_strict_drops_and_counts():
    mesh, mapping, xs, ids, ws = overflow_case()
    with pytest.raises(ValueError, match="device 0: dispatch needs 128 rows but capacity is 96"):
        all_to_all_dispatch_dense(xs, ids, ws, mapping, (1, 2), 1, capacity=96)
    outputs = all_to_all_dispatch_dense(xs, ids, ws, mapping, (1, 2), 1, capacity=64, strict=False)
    assert outputs[0].num_routed_tokens[:, 0].tolist() == [3, 32, 0, 0]
    assert outputs[0].expert_offsets[:, 0].tolist() == [0, 32, 64, 64]
    assert int(outputs[0].overflow[0]) == 2
    assert int(outputs[1].overflow[0]) == 0
    received = loop_received(mesh, ids, ws, owners_from(mapping))
    for d in range(2):
        for field, value in expected_device_output(received[d], xs, 64).items():
            assert_equal_exact(value, getattr(outputs[d], field), f"device {d} {field}")


def test_bad_ids_strict_raise_non_strict_skip():
    mesh = Mesh((2, 4), 1)
    mapping = expert_mapping(NUM_EXPERTS, mesh.size)
    xs, ids, ws = make_inputs(mesh, seed=4)
    ids[5][1, 0, 3] = NUM_EXPERTS
    ids[6][0, 1, 2] = -7
    with pytest.raises(ValueError, match=r"topk_indices\[5\] at \(b, s, k\) = \(1, 0, 3\) holds expert id 256"):
        all_to_all_dispatch_dense(xs, ids, ws, mapping, (2, 4), 1)
    outputs = all_to_all_dispatch_dense(xs, ids, ws, mapping, (2, 4), 1, strict=False)
    check_dispatch(mesh, xs, ids, ws, mapping, outputs[0].tokens.shape[0], outputs)


def test_dispatch_accepts_ttnn_4d_inputs():
    mesh = Mesh((2, 4), 0)
    mapping = expert_mapping(NUM_EXPERTS, mesh.size)
    xs, ids, ws = make_inputs(mesh, seed=6)
    flat = all_to_all_dispatch_dense(xs, ids, ws, mapping, (2, 4), 0)
    padded = all_to_all_dispatch_dense(
        [t.unsqueeze(0) for t in xs],
        [t.unsqueeze(0).to(torch.uint32) for t in ids],
        [t.unsqueeze(0) for t in ws],
        mapping,
        (2, 4),
        0,
    )
    for a, b in zip(flat, padded):
        for field, x, y in zip(a._fields, a, b):
            assert_equal_exact(x, y, field)


def test_dispatch_bad_inputs_raise():
    mapping = expert_mapping(16, 8)
    xs, ids, ws = make_inputs(Mesh((2, 4), 0), seed=1)
    ids = [t % 16 for t in ids]
    with pytest.raises(ValueError, match="x has 7 entries, the mesh has 8 devices"):
        all_to_all_dispatch_dense(xs[:7], ids, ws, mapping, (2, 4), 0)
    with pytest.raises(TypeError, match=r"topk_weights\[0\] must be torch.bfloat16, got torch.float32"):
        all_to_all_dispatch_dense(xs, ids, [w.float() for w in ws], mapping, (2, 4), 0)
    with pytest.raises(TypeError, match=r"topk_indices\[0\] must have an integer dtype"):
        all_to_all_dispatch_dense(xs, [i.float() for i in ids], ws, mapping, (2, 4), 0)
    with pytest.raises(ValueError, match=r"x\[3\] \(like x\[0\]\) must have shape \(2, 2, 64\), got \(2, 2, 32\)"):
        all_to_all_dispatch_dense(xs[:3] + [xs[3][..., :32]] + xs[4:], ids, ws, mapping, (2, 4), 0)
    with pytest.raises(ValueError, match="capacity 100 must be a multiple of 32"):
        all_to_all_dispatch_dense(xs, ids, ws, mapping, (2, 4), 0, capacity=100)
    with pytest.raises(ValueError, match="expert_mapping covers 4 devices, the 2x4 mesh has 8"):
        all_to_all_dispatch_dense(xs, ids, ws, expert_mapping(16, 4), (2, 4), 0)
    with pytest.raises(ValueError, match="cluster_axis must be 0 or 1, got 2"):
        all_to_all_dispatch_dense(xs, ids, ws, mapping, (2, 4), 2)


def test_combine_bad_inputs_raise():
    mesh_shape, capacity = (1, 2), 64
    reduced = [torch.zeros(capacity, 32) for _ in range(2)]
    source = [torch.zeros(capacity, 2, dtype=torch.int32) for _ in range(2)]
    slots = [torch.tensor([1], dtype=torch.int32) for _ in range(2)]
    args = (mesh_shape, 1, 1, 4)
    all_to_all_combine_dense(reduced, source, slots, *args)
    with pytest.raises(ValueError, match=r"num_slots\[1\] = 65 is outside \[0, 64\]"):
        all_to_all_combine_dense(reduced, source, [slots[0], torch.tensor([65])], *args)
    bad = [source[0], source[1].clone()]
    bad[1][0] = torch.tensor([2, 0])
    with pytest.raises(ValueError, match=r"slot_source\[1\]\[0\] has source position 2, outside \[0, 2\)"):
        all_to_all_combine_dense(reduced, bad, slots, *args)
    bad[1][0] = torch.tensor([0, 4])
    with pytest.raises(ValueError, match=r"slot_source\[1\]\[0\] has source token 4, outside \[0, 4\)"):
        all_to_all_combine_dense(reduced, bad, slots, *args)
    with pytest.raises(ValueError, match="more than one slot"):
        all_to_all_combine_dense(reduced, source, [torch.tensor([2]), slots[1]], *args)
    with pytest.raises(ValueError, match=r"reduced\[1\] \(like reduced\[0\]\) must have shape \(64, 32\)"):
        all_to_all_combine_dense([reduced[0], torch.zeros(32, 32)], source, slots, *args)
    with pytest.raises(ValueError, match="seq must be positive, got 0"):
        all_to_all_combine_dense(reduced, source, slots, mesh_shape, 1, 1, 0)


def test_combine_sums_senders_in_ascending_position_order():
    """All three devices send a partial for device 0's only token. fp32 addition is not
    associative: left to right both columns sum to 0, any other order gives 1 in one of them."""
    partial_of_sender = [[1e8, 1.0], [1.0, -1e8], [-1e8, 1e8]]
    reduced = [torch.zeros(32, 2) for _ in range(3)]
    for sender, values in enumerate(partial_of_sender):
        reduced[sender][0] = torch.tensor(values)
    source = [torch.zeros(32, 2, dtype=torch.int32) for _ in range(3)]  # slot 0 -> (position 0, token 0)
    slots = [torch.tensor([1], dtype=torch.int32) for _ in range(3)]
    out = all_to_all_combine_dense(reduced, source, slots, (3, 1), 0, 1, 1)
    assert out[0].tolist() == [[[0.0, 0.0]]]
    assert out[1].tolist() == out[2].tolist() == [[[0.0, 0.0]]]
    partials = all_to_all_combine_dense(reduced, source, slots, (3, 1), 0, 1, 1, return_partials=True)
    assert partials[0].reshape(3, 2).tolist() == partial_of_sender
    assert not partials[1].any() and not partials[2].any()
