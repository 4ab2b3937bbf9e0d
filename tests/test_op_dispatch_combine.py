"""all_to_all_dispatch_dense / all_to_all_combine_dense.

First the host side (C++ validation, the per-device programs and their fabric routes), then
the ops on emulated meshes against ttnn_moe.golden: every dispatch output exact, combine exact
in float32 and after bfloat16 rounding, fabric byte counters against an independent count,
determinism under different fabric delivery delays, strict-mode errors, and the expert
pipeline dispatch -> moe_bmm grouped -> local_reduce over slots -> combine.
"""

import dataclasses

import pytest
import torch
from emu_fixtures import emulator_device_limits
from ttnn_moe.emu.tensor import device_shards, from_shards
from ttnn_moe.ops._launch import topology_of
from ttnn_moe.paths import kernels_dir
from ttnn_moe.testing import assert_pcc

from ttnn_moe import (
    _C,
    DispatchHandle,
    all_to_all_combine_dense,
    all_to_all_combine_dense_partials,
    all_to_all_dispatch_dense,
    emu,
    expert_mapping,
    golden,
    local_reduce_moe_output,
    moe_bmm,
)

DF = _C.program.DataFormat
RM = _C.program.Layout.ROW_MAJOR
LINEAR, RING, MESH = (_C.ops.FabricTopology.Linear, _C.ops.FabricTopology.Ring, _C.ops.FabricTopology.Mesh)
DISPATCH_STATUS = _C.ops.all_to_all_dispatch_dense.StatusWord


def arg(shape, dtype, layout=RM, address=4096):
    element = {DF.Float16_b: 2, DF.UInt32: 4, DF.Int32: 4, DF.UInt16: 2, DF.Float32: 4}[dtype]
    rows = 1
    for d in shape[:-1]:
        rows *= d
    return _C.program.TensorArg(
        shape=list(shape),
        dtype=dtype,
        layout=layout,
        address=address,
        page_size=shape[-1] * element,
        num_pages=rows,
        is_dram=True,
        alignment=32,
    )


def dispatch_inputs(batch=2, seq=3, hidden=64, top_k=4, experts=64, devices=8, mapping_dtype=DF.Int32):
    return [
        arg((batch, seq, hidden), DF.Float16_b),
        arg((batch, seq, top_k), DF.UInt32),
        arg((batch, seq, top_k), DF.Float16_b),
        arg((1, 1, experts, devices), mapping_dtype),
    ]


def mesh_context(mesh=(1, 8), topology=LINEAR, node_ids=None, payload=4096, connections=None):
    """A MeshContext whose fabric connector records every connection and returns
    [0xC0DE, dst row, dst col] as that connection's runtime args."""
    rows, cols = mesh

    def connect(src, dst, link, program, core):
        if connections is not None:
            connections.append(((src.row, src.col), (dst.row, dst.col), link, (core.x, core.y)))
        return [0xC0DE, dst.row, dst.col]

    return _C.ops.MeshContext(
        kernels_root=str(kernels_dir()),
        device=emulator_device_limits(2, 2),
        rows=rows,
        cols=cols,
        topology=topology,
        max_packet_payload=payload,
        fabric_node_ids=node_ids or [(0, d) for d in range(rows * cols)],
        connect_fabric=connect,
    )


def dispatch_specs(inputs, mesh=(1, 8), axis=1, topology=LINEAR, capacity=0, num_links=1, payload=4096):
    attributes = _C.ops.all_to_all_dispatch_dense.Attributes(cluster_axis=axis, capacity=capacity, num_links=num_links)
    return _C.ops.all_to_all_dispatch_dense.output_specs(
        attributes, inputs, mesh_context(mesh, topology, payload=payload)
    )


def test_dispatch_output_specs_follow_the_spec_shapes():
    specs = dispatch_specs(dispatch_inputs(batch=3, seq=7, hidden=128, top_k=4, experts=64), capacity=256)
    shapes = [list(s.shape) for s in specs]
    # E_l = 64 / 8; D = 8 devices on axis 1 of a 1x8 mesh.
    assert shapes[:8] == [[256, 128], [8, 1], [8, 1], [256], [256], [256, 2], [1], [1, 8]]
    assert [s.dtype for s in specs[:8]] == [
        DF.Float16_b,
        DF.UInt32,
        DF.UInt32,
        DF.UInt32,
        DF.Float16_b,
        DF.UInt32,
        DF.UInt32,
        DF.UInt32,
    ]
    # routing_counts (D, E) and routing_lists (D, 2*T*K): one page per line position.
    assert shapes[8:] == [[8, 64], [8, 2 * 21 * 4]]


def test_status_records_keep_their_documented_word_order():
    dispatch = _C.ops.all_to_all_dispatch_dense
    combine = _C.ops.all_to_all_combine_dense
    assert list(dispatch.StatusWord.__members__) == [
        "kDroppedRows",
        "kNeededRows",
        "kInvalidIds",
        "kFirstInvalidToken",
        "kFirstInvalidK",
        "kFirstInvalidId",
        "kMappingErrors",
        "kFirstBadExpert",
    ]
    assert list(combine.StatusWord.__members__) == ["kBadSlots", "kFirstBadSlot", "kNumSlotsClamped", "kNumSlotsRead"]
    for op in (dispatch, combine):
        assert [int(w) for w in op.StatusWord.__members__.values()] == list(range(len(op.StatusWord.__members__)))
        assert op.STATUS_WORDS == 8


def test_default_capacity_is_the_worst_case_for_distinct_experts():
    # D * T * min(K, E_l) rows rounded to a tile, plus a tile of padding per block:
    # D = 4 (axis 0 of 4x8), T = 5, K = 4, E_l = 64 / 32 = 2 -> 40 -> 64, + 2 * 32.
    specs = dispatch_specs(dispatch_inputs(batch=1, seq=5, top_k=4, experts=64, devices=32), mesh=(4, 8), axis=0)
    assert list(specs[0].shape)[0] == 64 + 64
    assert (
        _C.ops.all_to_all_dispatch_dense.default_capacity(tokens_per_device=5, top_k=4, line_size=4, local_experts=2)
        == 64 + 64
    )


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(axis=2), "cluster_axis must be 0 or 1"),
        (dict(capacity=100), "capacity 100 must be a multiple of 32"),
        (dict(num_links=0), r"num_links must be in \[1, 4\], got 0"),
        (dict(num_links=5), r"num_links must be in \[1, 4\], got 5"),
        (dict(payload=100), "max_packet_payload must be"),
        (dict(mesh=(2, 8)), "covers 8 devices, the 2x8 mesh has 16"),
    ],
)
def test_dispatch_bad_attributes_raise(change, message):
    with pytest.raises(ValueError, match=message):
        dispatch_specs(dispatch_inputs(), **change)


@pytest.mark.parametrize("topology", ["Star", 3, None.__class__])
def test_unknown_topology_raises_naming_it(topology):
    with pytest.raises(ValueError, match="topology must be one of"):
        topology_of("all_to_all_dispatch_dense", topology, None)


def test_topology_must_match_the_fabric_when_the_target_knows_it():
    assert topology_of("op", "Ring", RING) == RING
    assert topology_of("op", None, None) == LINEAR
    with pytest.raises(ValueError, match="topology 'Linear' does not match the mesh's fabric topology Ring"):
        topology_of("op", "Linear", RING)


@pytest.mark.parametrize(
    "inputs, message",
    [
        (dispatch_inputs(experts=60), "E = 60 experts are not divisible by the 8 devices"),
        (dispatch_inputs(top_k=33), "K = 33 exceeds"),
        (dispatch_inputs(experts=65536 + 8), "exceeds the 65536 experts"),
        (dispatch_inputs(hidden=40), "H = 40 must be a multiple of 16"),
        (
            dispatch_inputs()[:3] + [arg((64, 8, 2), DF.Int32)],
            r"expert_mapping \(1, 1, E, num_devices\) must have rank 2",
        ),
        (dispatch_inputs()[:3] + [arg((1, 1, 64, 8), DF.Float16_b)], "expert_mapping must be uint16, uint32 or int32"),
        ([dispatch_inputs()[0], arg((2, 3, 4), DF.Int32)] + dispatch_inputs()[2:], "topk_indices must be uint32"),
        ([dispatch_inputs()[0], arg((2, 4, 4), DF.UInt32)] + dispatch_inputs()[2:], r"must match x \(2, 3, 64\)"),
        (dispatch_inputs()[:2] + [arg((2, 3, 5), DF.Float16_b), dispatch_inputs()[3]], "topk_weights"),
        ([arg((2, 3, 2, 64), DF.Float16_b)] + dispatch_inputs()[1:], r"x must be \(B, S, H\) or \(B, S, 1, H\)"),
        (dispatch_inputs()[:3], "expects 4 inputs"),
    ],
)
def test_dispatch_bad_inputs_raise(inputs, message):
    with pytest.raises(ValueError, match=message):
        dispatch_specs(inputs)


@pytest.mark.parametrize(
    "x_shape, k_shape",
    [((1, 2, 3, 64), (1, 2, 3, 4)), ((2, 3, 1, 64), (2, 3, 1, 4))],
    ids=["leading_1", "ttnn_B_S_1_H"],
)
def test_dispatch_accepts_ttnn_4d_inputs_and_uint16_mapping(x_shape, k_shape):
    inputs = [
        arg(x_shape, DF.Float16_b),
        arg(k_shape, DF.UInt32),
        arg(k_shape, DF.Float16_b),
        arg((1, 1, 64, 8), DF.UInt16),
    ]
    specs = dispatch_specs(inputs, capacity=64)
    assert list(specs[0].shape) == [64, 64]
    assert list(specs[9].shape) == [8, 2 * 6 * 4]  # routing lists: T = B * S = 6 tokens of K = 4


def dispatch_programs(mesh, axis, topology, node_ids=None, connections=None):
    inputs = dispatch_inputs(devices=mesh[0] * mesh[1], experts=8 * mesh[0] * mesh[1])
    specs = dispatch_specs(inputs, mesh=mesh, axis=axis, topology=topology, capacity=64)
    for i, spec in enumerate(specs):
        spec.address = 65536 * (i + 1)
    attributes = _C.ops.all_to_all_dispatch_dense.Attributes(cluster_axis=axis, capacity=64)
    context = mesh_context(mesh, topology, node_ids, connections=connections)
    return _C.ops.all_to_all_dispatch_dense.program(attributes, inputs + list(specs), context).mesh_programs


def coord(c):
    return None if c is None else (c.row, c.col)


def route_words(program, line_size):
    """The kernel's per-position route words: (direction, hops, chip id) of each line position."""
    args = program.kernels[0].runtime_args[0][1]
    start = 14 + 18 + line_size  # 14 addresses, 18 scalars, line device indices
    words = args[start : start + 2 * line_size]
    return [(w & 0xFF, (w >> 8) & 0xFF, n & 0xFFFF) for w, n in zip(words[::2], words[1::2])]


# mesh_context's 2x2 grid: the main kernel gets the NOC (x, y) of the first row's other core.
FIRST_ROW_CORES = 2


def fabric_neighbors(program, line_size):
    """(forward, backward) neighbors from the connection block after the route words and the NOC
    coordinates of the first row's other cores:
    [has_forward][0xC0DE, row, col][has_backward][0xC0DE, row, col] (one link)."""
    args = program.kernels[0].runtime_args[0][1]
    block = list(args[14 + 18 + 3 * line_size + 2 * (FIRST_ROW_CORES - 1) :])
    neighbors = []
    for _ in ("forward", "backward"):
        present, block = block[0], block[1:]
        if present:
            assert block[0] == 0xC0DE
            neighbors.append((block[1], block[2]))
            block = block[3:]
        else:
            neighbors.append(None)
    assert block == []  # the connection block ends the runtime args
    return tuple(neighbors)


@pytest.mark.parametrize("mesh, axis", [((1, 8), 1), ((2, 4), 0), ((2, 4), 1), ((4, 8), 0)])
def test_linear_line_connects_each_device_to_its_existing_neighbors(mesh, axis):
    connections = []
    programs = dispatch_programs(mesh, axis, LINEAR, connections=connections)
    assert [(coord(r.start), coord(r.end)) for r, _ in programs] == [
        ((r, c), (r, c)) for r in range(mesh[0]) for c in range(mesh[1])
    ]
    for device_range, program in programs:
        r, c = coord(device_range.start)
        pos, size = (r, mesh[0]) if axis == 0 else (c, mesh[1])
        step = (1, 0) if axis == 0 else (0, 1)
        forward = (r + step[0], c + step[1]) if pos + 1 < size else None
        backward = (r - step[0], c - step[1]) if pos > 0 else None
        assert fabric_neighbors(program, size) == (forward, backward)
    # One connection per neighbor and link, from the kernel's core (0, 0).
    assert len(connections) == sum(1 for _, p in programs for n in fabric_neighbors(p, mesh[axis]) if n)
    assert {core for *_, core in connections} == {(0, 0)}


def test_ring_connects_both_ways_round_the_line():
    programs = dispatch_programs((1, 8), 1, RING)
    assert fabric_neighbors(programs[0][1], 8) == ((0, 1), (0, 7))
    assert fabric_neighbors(programs[7][1], 8) == ((0, 0), (0, 6))


def test_routes_take_the_shorter_way_on_a_ring_and_the_straight_way_on_a_line():
    local, fwd, bwd = 0, 1, 2
    programs = dispatch_programs((1, 8), 1, RING)
    ring = route_words(programs[1][1], 8)
    # Position 5 is 4 hops either way: odd positions reach the device opposite backward, even ones forward.
    assert [(d, h) for d, h, _ in ring] == [
        (bwd, 1),
        (local, 0),
        (fwd, 1),
        (fwd, 2),
        (fwd, 3),
        (bwd, 4),
        (bwd, 3),
        (bwd, 2),
    ]
    assert route_words(programs[2][1], 8)[6][:2] == (fwd, 4)
    line = route_words(dispatch_programs((1, 8), 1, LINEAR)[1][1], 8)
    assert [(d, h) for d, h, _ in line] == [(bwd, 1), (local, 0)] + [(fwd, h) for h in range(1, 7)]


def test_2d_routes_name_the_destination_chip_of_each_position():
    node_ids = [(0, 100 + d) for d in range(8)]
    programs = dispatch_programs((2, 4), 0, MESH, node_ids)
    # Device (1, 2) (index 6) dispatches along column 2: positions 0, 1 are devices 2 and 6.
    assert [chip for _, _, chip in route_words(programs[6][1], 2)] == [102, 106]


def test_program_cache_hit_builds_nothing_and_sets_up_no_fabric_connection():
    first, second = [], []
    dispatch_programs((2, 4), 1, LINEAR, node_ids=[(7, d) for d in range(8)], connections=first)
    before = _C.ops.all_to_all_dispatch_dense.program_cache_info()
    programs = dispatch_programs((2, 4), 1, LINEAR, node_ids=[(7, d) for d in range(8)], connections=second)
    after = _C.ops.all_to_all_dispatch_dense.program_cache_info()
    assert (after["hits"], after["misses"]) == (before["hits"] + 1, before["misses"])  # the whole mesh program
    assert first and second == []
    assert len(programs) == 8


def combine_specs(inputs, mesh=(1, 8), axis=1, batch=2, seq=3, dtype=DF.Float16_b, partials=False, unit_dim=False):
    attributes = _C.ops.all_to_all_combine_dense.Attributes(
        cluster_axis=axis, batch=batch, seq=seq, output_dtype=dtype, unit_dim=unit_dim, return_partials=partials
    )
    return _C.ops.all_to_all_combine_dense.output_specs(attributes, inputs, mesh_context(mesh))


def combine_inputs(capacity=64, hidden=64):
    return [arg((capacity, hidden), DF.Float16_b), arg((capacity, 2), DF.UInt32), arg((1,), DF.UInt32)]


def test_combine_output_specs():
    specs = combine_specs(combine_inputs(), mesh=(4, 8), axis=0, batch=2, seq=3, dtype=DF.Float32)
    assert [list(s.shape) for s in specs] == [[2, 3, 64], [4, 2, 3, 64], [4, 6], [1, 8]]
    assert specs[0].dtype == DF.Float32
    ttnn_form = combine_specs(combine_inputs(), mesh=(4, 8), axis=0, batch=2, seq=3, unit_dim=True)
    assert list(ttnn_form[0].shape) == [2, 3, 1, 64]


@pytest.mark.parametrize(
    "inputs, change, message",
    [
        (combine_inputs(), dict(axis=-1 % 2**32), "cluster_axis must be 0 or 1"),
        (combine_inputs(), dict(batch=0), "batch and seq must be positive"),
        (combine_inputs(), dict(dtype=DF.UInt32), "output dtype must be bfloat16 or float32"),
        (combine_inputs(hidden=24), {}, "H = 24 must be a multiple of 16"),
        (
            [arg((64, 64), DF.Float16_b), arg((32, 2), DF.UInt32), arg((1,), DF.UInt32)],
            {},
            r"slot_source \(32, 2\) must be \(capacity, 2\) with capacity = 64",
        ),
        ([arg((64, 64), DF.Float32)] + combine_inputs()[1:], {}, "reduced must be bfloat16"),
        (combine_inputs()[:2] + [arg((2,), DF.UInt32)], {}, "num_slots must hold one value"),
    ],
)
def test_combine_bad_inputs_raise(inputs, change, message):
    with pytest.raises(ValueError, match=message):
        combine_specs(inputs, **change)


@pytest.mark.parametrize(
    "name, value, error",
    [
        ("cluster_axis", -1, ValueError),
        ("cluster_axis", 2, ValueError),
        ("cluster_axis", 1.0, TypeError),
        ("num_links", 0, ValueError),
        ("capacity", 2**32, ValueError),
        ("strict", 1, TypeError),
    ],
)
def test_dispatch_wrapper_rejects_bad_scalars_before_launching(name, value, error):
    kwargs = {"cluster_axis": 0, name: value}
    with pytest.raises(error, match=name):
        all_to_all_dispatch_dense(None, None, None, None, **kwargs)


def test_combine_wrapper_takes_the_dispatch_handle_and_rejects_bad_arguments():
    with pytest.raises(TypeError, match="handle must be the DispatchHandle all_to_all_dispatch_dense returned"):
        all_to_all_combine_dense(None, (None, None))
    handle = DispatchHandle(
        slot_source=None,
        num_slots=None,
        dispatch_status=None,
        cluster_axis=0,
        batch=1,
        seq=1,
        unit_dim=False,
        capacity=32,
        num_links=1,
        topology=None,
    )
    with pytest.raises(ValueError, match="output_dtype must be bfloat16 or float32, got 'int32'"):
        all_to_all_combine_dense(None, handle, output_dtype="int32")


# ---------------------------------------------------------------------------------------------
# The ops on emulated meshes.

NUM_EXPERTS, TOP_K, HIDDEN = 256, 4, 64
TOPOLOGY = {"Linear": _C.emu.Topology.Linear, "Ring": _C.emu.Topology.Ring, "Mesh": _C.emu.Topology.Mesh}


def open_mesh(shape, topology="Linear", seed=None):
    mesh = emu.open_mesh_device(emu.MeshShape(*shape), grid=(1, 1))
    mesh._mesh.fabric_topology = TOPOLOGY[topology]
    if seed is not None:
        mesh._mesh.set_fabric_seed(seed)
    return mesh


def owners(num_devices):
    return torch.arange(NUM_EXPERTS) // (NUM_EXPERTS // num_devices)


def pick_experts(kind, device, shape, axis, g, tokens):
    """(tokens, K) distinct expert ids for one device under a routing pattern."""
    rows, cols = shape
    num_devices = rows * cols
    if kind == "uniform":
        pool = torch.arange(NUM_EXPERTS)
        weights = torch.ones(NUM_EXPERTS)
    elif kind == "skewed":  # a few hot experts, a long tail
        pool = torch.arange(NUM_EXPERTS)
        weights = 1.0 / (pool + 1.0) ** 1.5
    elif kind == "one_device":  # every token to experts of the first device of its line
        first = device % cols if axis == 0 else device - device % cols
        pool = (owners(num_devices) == first).nonzero()[:, 0]
        weights = torch.ones(pool.numel())
    elif kind == "zero_token_experts":  # odd experts never chosen
        pool = torch.arange(0, NUM_EXPERTS, 2)
        weights = torch.ones(pool.numel())
    else:
        raise AssertionError(kind)
    k = min(TOP_K, pool.numel())
    return torch.stack([pool[torch.multinomial(weights, k, generator=g)] for _ in range(tokens)])


def make_inputs(shape, axis, kind, batch, seq, seed=0, hidden=HIDDEN):
    g = torch.Generator().manual_seed(seed)
    n = shape[0] * shape[1]
    xs = [torch.randn(batch, seq, hidden, generator=g).to(torch.bfloat16) for _ in range(n)]
    ids = [pick_experts(kind, d, shape, axis, g, batch * seq).reshape(batch, seq, -1).to(torch.int32) for d in range(n)]
    ws = [torch.rand(*i.shape, generator=g).to(torch.bfloat16) for i in ids]
    return xs, ids, ws, expert_mapping(NUM_EXPERTS, n)


def to_mesh(mesh, xs, ids, ws, mapping, mapping_dtype=emu.int32):
    n = len(xs)
    return (
        from_shards(xs, emu.bfloat16, emu.ROW_MAJOR_LAYOUT, mesh),
        from_shards(ids, emu.uint32, emu.ROW_MAJOR_LAYOUT, mesh),
        from_shards(ws, emu.bfloat16, emu.ROW_MAJOR_LAYOUT, mesh),
        from_shards([mapping] * n, mapping_dtype, emu.ROW_MAJOR_LAYOUT, mesh),
    )


def words(t):
    return t.to(torch.int64) & 0xFFFFFFFF


def dispatch_shards(out):
    """name -> per-device tensors of every dispatch output, the handle's tensors included."""
    tensors = {name: getattr(out, name) for name in out._fields if name != "handle"}
    tensors.update(
        slot_source=out.handle.slot_source, num_slots=out.handle.num_slots, dispatch_status=out.handle.dispatch_status
    )
    return {name: device_shards(t) for name, t in tensors.items()}


def rows_in_blocks(exp) -> int:
    """Rows of a device's blocks in the golden's dispatch output (the end of its last one): the op writes
    token_idx_map and routed_token_weights up to here and nothing past."""
    return int(exp.expert_offsets[-1, 0]) + -(-int(exp.num_routed_tokens[-1, 0]) // 32) * 32


def check_dispatch(out, expected):
    """Every metadata tensor exact where the op writes it (token_idx_map and the weights on the rows
    of the blocks, slot_source on the used slots); tokens exact on every block row, block padding
    rows 0."""
    got = dispatch_shards(out)
    for d, exp in enumerate(expected):
        for name in ("num_routed_tokens", "expert_offsets", "num_slots"):
            assert torch.equal(
                words(got[name][d]).reshape(exp_shape := getattr(exp, name).shape), getattr(exp, name).to(torch.int64)
            ), f"device {d}: {name} {exp_shape}"
        blocks_end = rows_in_blocks(exp)
        slots = int(exp.num_slots[0])
        idx_map = words(got["token_idx_map"][d]).reshape(-1)[:blocks_end]
        assert torch.equal(idx_map, exp.token_idx_map[:blocks_end].to(torch.int64)), f"device {d}: token_idx_map"
        weights = got["routed_token_weights"][d].reshape(-1)[:blocks_end]
        assert torch.equal(weights, exp.routed_token_weights[:blocks_end]), f"device {d}: weights"
        slot_source = words(got["slot_source"][d]).reshape(-1, 2)[:slots]
        assert torch.equal(slot_source, exp.slot_source.reshape(-1, 2)[:slots].to(torch.int64)), f"device {d}"
        for offset, count in zip(exp.expert_offsets.reshape(-1).tolist(), exp.num_routed_tokens.reshape(-1).tolist()):
            block = slice(offset, offset + -(-count // 32) * 32)
            assert torch.equal(got["tokens"][d][block], exp.tokens[block]), f"device {d}: rows {block}"
        assert words(got["dispatch_status"][d])[0, DISPATCH_STATUS.kDroppedRows] == exp.overflow[0], (
            f"device {d}: dropped rows"
        )


def unique_remote_pairs(ids, shape, axis):
    """Independent count of (token, remote destination device in the token's line) pairs."""
    owner = owners(shape[0] * shape[1])
    pairs = 0
    for d, chosen in enumerate(ids):
        line = golden.group_of(d, shape, axis)
        for token in chosen.reshape(-1, chosen.shape[-1]).tolist():
            pairs += len({int(owner[e]) for e in token if int(owner[e]) in line and int(owner[e]) != d})
    return pairs


def routing_metadata_bytes(ids, shape, axis):
    """What the design sends as routing metadata, counted from the routing: every device's
    per-line-expert counts (uint32, 32-byte aligned) to each peer, and to each peer an
    8-byte entry per assignment to that peer's experts."""
    owner = owners(shape[0] * shape[1])
    total = 0
    for d, chosen in enumerate(ids):
        line = golden.group_of(d, shape, axis)
        line_experts = int(sum(int(owner[e]) in line for e in range(NUM_EXPERTS)))
        total += (len(line) - 1) * (-(-line_experts * 4 // 32) * 32)
        total += 8 * sum(int(owner[e]) in line and int(owner[e]) != d for e in chosen.reshape(-1).tolist())
    return total


def fabric_bytes_by_type(counters):
    totals = {}
    for flow in counters["fabric"]["flows"]:
        totals[flow["type"]] = totals.get(flow["type"], 0) + flow["bytes"]
    return totals


CASES = [
    ((1, 8), 1, "uniform", "Linear", (1, 5)),
    ((2, 4), 0, "skewed", "Ring", (3, 7)),
    ((2, 4), 1, "one_device", "Mesh", (2, 3)),
    ((4, 8), 0, "zero_token_experts", "Linear", (1, 5)),
    ((4, 8), 1, "uniform", "Mesh", (1, 3)),
    ((8, 8), 0, "skewed", "Ring", (1, 3)),
    ((16, 8), 0, "uniform", "Linear", (1, 2)),
]


@pytest.mark.parametrize(
    "shape, axis, kind, topology, batch_seq", CASES, ids=[f"{s[0]}x{s[1]}-axis{a}-{k}-{t}" for s, a, k, t, _ in CASES]
)
def test_dispatch_and_combine_match_the_golden(shape, axis, kind, topology, batch_seq):
    batch, seq = batch_seq
    xs, ids, ws, mapping = make_inputs(shape, axis, kind, batch, seq)
    mesh = open_mesh(shape, topology)
    out = all_to_all_dispatch_dense(*to_mesh(mesh, xs, ids, ws, mapping), cluster_axis=axis)
    counters = emu.last_run_counters()
    capacity = out.tokens.shape[0]
    expected = golden.all_to_all_dispatch_dense(xs, ids, ws, mapping, shape, axis, capacity=capacity)
    check_dispatch(out, expected)

    # Token payload = plain writes: each (token, remote destination) pair once, H bf16 values.
    by_type = fabric_bytes_by_type(counters)
    assert by_type.get("write", 0) == unique_remote_pairs(ids, shape, axis) * HIDDEN * 2
    # Routing metadata = fused write+inc packets, reported separately.
    assert by_type.get("fused_write_atomic_inc", 0) == routing_metadata_bytes(ids, shape, axis)

    # Combine random slot rows back; float32 output is the golden sum bit for bit.
    g = torch.Generator().manual_seed(1)
    reduced = [torch.randn(capacity, HIDDEN, generator=g).to(torch.bfloat16) for _ in xs]
    reduced_mesh = from_shards(reduced, emu.bfloat16, emu.ROW_MAJOR_LAYOUT, mesh)
    want = golden.all_to_all_combine_dense(
        reduced, [e.slot_source for e in expected], [e.num_slots for e in expected], shape, axis, batch, seq
    )
    got32 = device_shards(all_to_all_combine_dense(reduced_mesh, out.handle, output_dtype="float32").output)
    got16 = device_shards(all_to_all_combine_dense(reduced_mesh, out.handle).output)
    # Every slot row goes back once: the same (token, remote device) pairs as the dispatch.
    assert fabric_bytes_by_type(emu.last_run_counters())["write"] == unique_remote_pairs(ids, shape, axis) * HIDDEN * 2
    for d in range(len(xs)):
        assert torch.equal(got32[d], want[d]), f"device {d}"
        assert torch.equal(got16[d], want[d].to(torch.bfloat16)), f"device {d}"
        assert_pcc(want[d], got16[d].float(), 0.9999, name=f"combine device {d}")


def test_rows_longer_than_a_fabric_packet_and_a_tile():
    # H = 2576: a 5152-byte row takes two fabric packets (4096-byte payloads) and three
    # 1024-element chunks in the combine sum, the last one partial.
    shape, axis, batch, seq, hidden = (2, 4), 1, 1, 5, 2576
    xs, ids, ws, mapping = make_inputs(shape, axis, "uniform", batch, seq, seed=13, hidden=hidden)
    mesh = open_mesh(shape, "Ring")
    out = all_to_all_dispatch_dense(*to_mesh(mesh, xs, ids, ws, mapping), cluster_axis=axis)
    by_type = fabric_bytes_by_type(emu.last_run_counters())
    expected = golden.all_to_all_dispatch_dense(xs, ids, ws, mapping, shape, axis, capacity=out.tokens.shape[0])
    check_dispatch(out, expected)
    assert by_type["write"] == unique_remote_pairs(ids, shape, axis) * hidden * 2
    g = torch.Generator().manual_seed(14)
    reduced = [torch.randn(out.tokens.shape[0], hidden, generator=g).to(torch.bfloat16) for _ in xs]
    got = device_shards(
        all_to_all_combine_dense(
            from_shards(reduced, emu.bfloat16, emu.ROW_MAJOR_LAYOUT, mesh), out.handle, output_dtype="float32"
        ).output
    )
    want = golden.all_to_all_combine_dense(
        reduced, [e.slot_source for e in expected], [e.num_slots for e in expected], shape, axis, batch, seq
    )
    assert all(torch.equal(got[d], want[d]) for d in range(len(xs)))


def test_a_ring_sends_as_much_each_way_round():
    """On a ring of 4 the device opposite is 2 hops either way. With every token choosing one expert on
    each device, each device sends every token to every peer: if the opposite device were always
    reached one way, links would carry 3 rows per token that way and 1 the other. Even positions go
    forward, odd ones backward: every directed link carries the same bytes, in dispatch and combine."""
    shape, axis, tokens = (1, 4), 1, 6
    g = torch.Generator().manual_seed(21)
    per_device = NUM_EXPERTS // 4
    ids = [
        (torch.arange(4) * per_device + torch.randint(per_device, (tokens, 4), generator=g)).reshape(1, tokens, 4).int()
        for _ in range(4)
    ]
    xs = [torch.randn(1, tokens, HIDDEN, generator=g).to(torch.bfloat16) for _ in range(4)]
    ws = [torch.rand(1, tokens, 4, generator=g).to(torch.bfloat16) for _ in range(4)]
    mapping = expert_mapping(NUM_EXPERTS, 4)
    mesh = open_mesh(shape, "Ring")
    out = all_to_all_dispatch_dense(*to_mesh(mesh, xs, ids, ws, mapping), cluster_axis=axis)
    dispatch_links = {key: t["bytes"] for key, t in emu.last_run_counters()["fabric"]["links"].items()}
    expected = golden.all_to_all_dispatch_dense(xs, ids, ws, mapping, shape, axis, capacity=out.tokens.shape[0])
    check_dispatch(out, expected)
    ring = {(q, (q + 1) % 4, 0) for q in range(4)} | {((q + 1) % 4, q, 0) for q in range(4)}
    assert set(dispatch_links) == ring
    assert len(set(dispatch_links.values())) == 1, dispatch_links
    all_to_all_combine_dense(out.tokens, out.handle)
    combine_links = {key: t["bytes"] for key, t in emu.last_run_counters()["fabric"]["links"].items()}
    assert set(combine_links) == ring
    assert len(set(combine_links.values())) == 1, combine_links


def test_combine_returns_the_unsummed_partials():
    shape, axis, batch, seq = (2, 4), 1, 2, 3
    xs, ids, ws, mapping = make_inputs(shape, axis, "uniform", batch, seq, seed=3)
    mesh = open_mesh(shape)
    out = all_to_all_dispatch_dense(*to_mesh(mesh, xs, ids, ws, mapping), cluster_axis=axis)
    expected = golden.all_to_all_dispatch_dense(xs, ids, ws, mapping, shape, axis, capacity=out.tokens.shape[0])
    g = torch.Generator().manual_seed(4)
    reduced = [torch.randn(out.tokens.shape[0], HIDDEN, generator=g).to(torch.bfloat16) for _ in xs]
    got = device_shards(
        all_to_all_combine_dense_partials(from_shards(reduced, emu.bfloat16, emu.ROW_MAJOR_LAYOUT, mesh), out.handle)
    )
    want = golden.all_to_all_combine_dense(
        reduced,
        [e.slot_source for e in expected],
        [e.num_slots for e in expected],
        shape,
        axis,
        batch,
        seq,
        return_partials=True,
    )
    for d in range(len(xs)):
        assert got[d].shape == (shape[axis], batch, seq, HIDDEN)
        assert torch.equal(got[d].float(), want[d]), f"device {d}"


def test_preallocated_dispatch_and_combine_outputs_are_written_in_place():
    shape, axis, batch, seq = (2, 4), 1, 2, 3
    xs, ids, ws, mapping = make_inputs(shape, axis, "uniform", batch, seq, seed=5)
    mesh = open_mesh(shape)
    inputs = to_mesh(mesh, xs, ids, ws, mapping)
    capacity = all_to_all_dispatch_dense(*inputs, cluster_axis=axis).tokens.shape[0]
    stale = [torch.full((capacity, HIDDEN), 3.0).to(torch.bfloat16) for _ in xs]
    tokens = from_shards(stale, emu.bfloat16, emu.ROW_MAJOR_LAYOUT, mesh)
    out = all_to_all_dispatch_dense(*inputs, cluster_axis=axis, output_tensors=[tokens])
    assert out.tokens is tokens
    check_dispatch(out, golden.all_to_all_dispatch_dense(xs, ids, ws, mapping, shape, axis, capacity=capacity))

    g = torch.Generator().manual_seed(6)
    reduced = from_shards(
        [torch.randn(capacity, HIDDEN, generator=g).to(torch.bfloat16) for _ in xs],
        emu.bfloat16,
        emu.ROW_MAJOR_LAYOUT,
        mesh,
    )
    want = device_shards(all_to_all_combine_dense(reduced, out.handle).output)
    combined = from_shards(
        [torch.full((batch, seq, HIDDEN), 5.0).to(torch.bfloat16) for _ in xs], emu.bfloat16, emu.ROW_MAJOR_LAYOUT, mesh
    )
    assert all_to_all_combine_dense(reduced, out.handle, output_tensor=combined).output is combined
    assert all(torch.equal(a, b) for a, b in zip(device_shards(combined), want))
    wrong = from_shards(
        [torch.zeros(batch, seq + 1, HIDDEN).to(torch.bfloat16) for _ in xs], emu.bfloat16, emu.ROW_MAJOR_LAYOUT, mesh
    )
    with pytest.raises(
        ValueError,
        match=r"all_to_all_combine_dense: output_tensor is \[2, 4, 64\] bfloat16 "
        r"ROW_MAJOR, the op writes \[2, 3, 64\] bfloat16 ROW_MAJOR",
    ):
        all_to_all_combine_dense(reduced, out.handle, output_tensor=wrong)


def test_results_are_bitwise_identical_under_different_fabric_delays():
    shape, axis, batch, seq = (2, 4), 1, 1, 7
    xs, ids, ws, mapping = make_inputs(shape, axis, "skewed", batch, seq, seed=5)
    results = []
    for seed in (1, 2, 3):
        mesh = open_mesh(shape, "Ring", seed=seed)
        mesh._mesh.set_fabric_max_delay(12)
        out = all_to_all_dispatch_dense(*to_mesh(mesh, xs, ids, ws, mapping), cluster_axis=axis)
        reduced = emu.to_layout(out.tokens, emu.ROW_MAJOR_LAYOUT)  # the dispatched rows as partials
        combined = all_to_all_combine_dense(reduced, out.handle, output_dtype="float32").output
        results.append([*dispatch_shards(out).values(), device_shards(combined)])
    for other in results[1:]:
        for a, b in zip(results[0], other):
            assert all(torch.equal(x, y) for x, y in zip(a, b))


def test_two_links_split_the_payload_and_give_the_same_results():
    shape, axis, batch, seq = (1, 8), 1, 1, 12
    xs, ids, ws, mapping = make_inputs(shape, axis, "uniform", batch, seq, seed=12)
    mesh = open_mesh(shape)
    inputs = to_mesh(mesh, xs, ids, ws, mapping)
    out = all_to_all_dispatch_dense(*inputs, cluster_axis=axis, num_links=2)
    counters = emu.last_run_counters()
    check_dispatch(
        out, golden.all_to_all_dispatch_dense(xs, ids, ws, mapping, shape, axis, capacity=out.tokens.shape[0])
    )
    payload_by_link = {}
    for flow in counters["fabric"]["flows"]:
        if flow["type"] == "write":
            payload_by_link[flow["link"]] = payload_by_link.get(flow["link"], 0) + flow["bytes"]
    assert sorted(payload_by_link) == [0, 1] and min(payload_by_link.values()) > 0
    assert sum(payload_by_link.values()) == unique_remote_pairs(ids, shape, axis) * HIDDEN * 2
    reduced = emu.to_layout(out.tokens, emu.ROW_MAJOR_LAYOUT)
    one, two = (
        device_shards(all_to_all_combine_dense(reduced, dataclasses.replace(out.handle, num_links=links)).output)
        for links in (1, 2)
    )
    assert all(torch.equal(a, b) for a, b in zip(one, two))


def test_duplicate_experts_per_token_fan_out_on_the_destination():
    # Tokens choosing the same expert twice and several experts of one device: one row on the
    # fabric per (token, device), copied into every row of that device's blocks.
    shape, axis, batch, seq = (1, 8), 1, 1, 6
    g = torch.Generator().manual_seed(6)
    xs = [torch.randn(batch, seq, HIDDEN, generator=g).to(torch.bfloat16) for _ in range(8)]
    ids = [
        torch.tensor([[e, e, e + 1, 200] for e in range(0, 96, 16)][:seq], dtype=torch.int32).reshape(batch, seq, 4)
        for _ in range(8)
    ]
    ws = [torch.rand(batch, seq, 4, generator=g).to(torch.bfloat16) for _ in range(8)]
    mapping = expert_mapping(NUM_EXPERTS, 8)
    mesh = open_mesh(shape)
    out = all_to_all_dispatch_dense(*to_mesh(mesh, xs, ids, ws, mapping, emu.uint16), cluster_axis=axis, capacity=256)
    by_type = fabric_bytes_by_type(emu.last_run_counters())
    check_dispatch(out, golden.all_to_all_dispatch_dense(xs, ids, ws, mapping, shape, axis, capacity=256))
    assert by_type["write"] == unique_remote_pairs(ids, shape, axis) * HIDDEN * 2
    assert by_type["fused_write_atomic_inc"] == routing_metadata_bytes(ids, shape, axis)


def test_overflow_raises_in_strict_mode_and_is_dropped_and_counted_otherwise():
    shape, axis, batch, seq = (1, 8), 1, 1, 20
    xs, ids, ws, mapping = make_inputs(shape, axis, "one_device", batch, seq, seed=7)
    mesh = open_mesh(shape)
    inputs = to_mesh(mesh, xs, ids, ws, mapping)
    with pytest.raises(ValueError, match=r"device 0: dispatch needs \d+ rows but capacity is smaller"):
        all_to_all_dispatch_dense(*inputs, cluster_axis=axis, capacity=64)
    out = all_to_all_dispatch_dense(*inputs, cluster_axis=axis, capacity=64, strict=False)
    expected = golden.all_to_all_dispatch_dense(xs, ids, ws, mapping, shape, axis, capacity=64, strict=False)
    assert int(expected[0].overflow[0]) > 0
    check_dispatch(out, expected)


def test_invalid_ids_raise_in_strict_mode_and_are_skipped_otherwise():
    shape, axis, batch, seq = (2, 4), 0, 1, 3
    xs, ids, ws, mapping = make_inputs(shape, axis, "uniform", batch, seq, seed=8)
    ids[5][0, 2, 1] = NUM_EXPERTS + 3
    mesh = open_mesh(shape)
    inputs = to_mesh(mesh, xs, ids, ws, mapping)
    with pytest.raises(ValueError, match=r"device 5: expert id 259 at token 2, k 1 is outside"):
        all_to_all_dispatch_dense(*inputs, cluster_axis=axis)
    out = all_to_all_dispatch_dense(*inputs, cluster_axis=axis, strict=False)
    check_dispatch(
        out,
        golden.all_to_all_dispatch_dense(xs, ids, ws, mapping, shape, axis, capacity=out.tokens.shape[0], strict=False),
    )


def test_combine_strict_mode_names_a_bad_slot_and_a_num_slots_over_capacity():
    shape, axis = (1, 4), 1
    xs, ids, ws, mapping = make_inputs(shape, axis, "uniform", 1, 3, seed=16)
    mesh = open_mesh(shape)
    out = all_to_all_dispatch_dense(*to_mesh(mesh, xs, ids, ws, mapping), cluster_axis=axis)
    capacity = out.tokens.shape[0]
    reduced = from_shards(
        [torch.zeros(capacity, HIDDEN, dtype=torch.bfloat16)] * 4, emu.bfloat16, emu.ROW_MAJOR_LAYOUT, mesh
    )

    def uint32_mesh(shards):
        return from_shards(shards, emu.uint32, emu.ROW_MAJOR_LAYOUT, mesh)

    sources = [torch.zeros(capacity, 2, dtype=torch.int32) for _ in range(4)]
    sources[2][0] = torch.tensor([9, 0])  # position 9 is outside the line of 4
    one_slot = uint32_mesh([torch.ones(1, dtype=torch.int32)] * 4)
    bad_slot = dataclasses.replace(out.handle, slot_source=uint32_mesh(sources), num_slots=one_slot)
    with pytest.raises(ValueError, match=r"device 2: slot 0 names a source outside the line .*\(1 bad slots\)"):
        all_to_all_combine_dense(reduced, bad_slot)
    over_capacity = uint32_mesh([torch.tensor([capacity + 1], dtype=torch.int32)] * 4)
    with pytest.raises(ValueError, match=f"device 0: num_slots = {capacity + 1} exceeds the capacity {capacity}"):
        all_to_all_combine_dense(reduced, dataclasses.replace(out.handle, num_slots=over_capacity))


def test_a_mapping_that_is_not_one_hot_raises():
    shape, axis = (1, 8), 1
    xs, ids, ws, mapping = make_inputs(shape, axis, "uniform", 1, 2, seed=9)
    mapping[0, 0, 17, 6] = 1  # expert 17 on devices 0 and 6
    mesh = open_mesh(shape)
    with pytest.raises(ValueError, match="first bad expert 17"):
        all_to_all_dispatch_dense(*to_mesh(mesh, xs, ids, ws, mapping), cluster_axis=axis)


def test_a_topology_other_than_the_mesh_fabric_raises():
    xs, ids, ws, mapping = make_inputs((1, 8), 1, "uniform", 1, 3, seed=15)
    mesh = open_mesh((1, 8), "Linear")
    with pytest.raises(ValueError, match="topology 'Ring' does not match the mesh's fabric topology Linear"):
        all_to_all_dispatch_dense(*to_mesh(mesh, xs, ids, ws, mapping), cluster_axis=1, topology="Ring")


def test_inputs_on_a_single_device_are_rejected():
    device = emu.open_device(0, grid=(1, 1))
    x = emu.from_torch(
        torch.zeros(1, 2, HIDDEN, dtype=torch.bfloat16), emu.bfloat16, layout=emu.ROW_MAJOR_LAYOUT, device=device
    )
    with pytest.raises(ValueError, match="needs tensors on a mesh device"):
        all_to_all_dispatch_dense(x, x, x, x, cluster_axis=0)


def test_dispatch_moe_bmm_local_reduce_combine_equals_the_experts_output():
    """The mesh expert stage: per token, the sum over its experts owned in its line of
    weight * (x @ W_e), from the ops (moe_bmm and local_reduce run per device)."""
    shape, axis, batch, seq = (2, 4), 0, 1, 7
    rows, cols = shape
    xs, ids, ws, mapping = make_inputs(shape, axis, "skewed", batch, seq, seed=10)
    g = torch.Generator().manual_seed(11)
    experts = (torch.randn(NUM_EXPERTS, HIDDEN, HIDDEN, generator=g) / HIDDEN**0.5).to(torch.bfloat16)
    mesh = open_mesh(shape)
    out = all_to_all_dispatch_dense(*to_mesh(mesh, xs, ids, ws, mapping), cluster_axis=axis)
    capacity = out.tokens.shape[0]
    local = NUM_EXPERTS // (rows * cols)
    single = emu.open_device(1, grid=(2, 2))
    shards = dispatch_shards(out)

    def on_single(t, dtype, layout=emu.ROW_MAJOR_LAYOUT):
        return emu.from_torch(t, dtype, layout=layout, device=single)

    reduced = []
    for d in range(rows * cols):
        counts = on_single(words(shards["num_routed_tokens"][d]).to(torch.int32), emu.uint32)
        offsets = on_single(words(shards["expert_offsets"][d]).to(torch.int32), emu.uint32)
        y = moe_bmm(
            on_single(shards["tokens"][d], emu.bfloat16, emu.TILE_LAYOUT),
            on_single(experts[d * local : (d + 1) * local], emu.bfloat16, emu.TILE_LAYOUT),
            counts,
            expert_offsets=offsets,
        )
        y = emu.to_layout(y, emu.ROW_MAJOR_LAYOUT)
        r = local_reduce_moe_output(
            y,
            on_single(words(shards["token_idx_map"][d]).to(torch.int32), emu.uint32),
            on_single(shards["routed_token_weights"][d], emu.bfloat16),
            counts,
            num_out_rows=capacity,
            expert_offsets=offsets,
        )
        reduced.append(emu.to_torch(r.output))
    combined = device_shards(
        all_to_all_combine_dense(
            from_shards(reduced, emu.bfloat16, emu.ROW_MAJOR_LAYOUT, mesh), out.handle, output_dtype="float32"
        ).output
    )
    owner = owners(rows * cols)
    for d in range(rows * cols):
        line = golden.group_of(d, shape, axis)
        want = torch.zeros(batch * seq, HIDDEN)
        for t, (chosen, weights) in enumerate(
            zip(ids[d].reshape(-1, TOP_K).tolist(), ws[d].reshape(-1, TOP_K).float().tolist())
        ):
            for e, w in zip(chosen, weights):
                if int(owner[e]) in line:
                    want[t] += w * (xs[d].reshape(-1, HIDDEN)[t].float() @ experts[e].float())
        assert_pcc(want, combined[d].reshape(-1, HIDDEN), 0.9999, name=f"device {d}")


# ---------------------------------------------------------------------------------------------
# The hardware path (never executed here): the program ttnn.generic_op would get, with ttnn's
# fabric connection helper, checked against a test double of ttnn.


def test_hardware_mesh_target_appends_ttnn_fabric_connections():
    from fake_ttnn import FakeMeshDevice, FakeTensor, make_fake_ttnn
    from ttnn_moe.hardware import HardwareTarget
    from ttnn_moe.ops import _launch

    ttnn = make_fake_ttnn()
    calls = []

    def setup_fabric_connection(src, dst, link_idx, program_descriptor, worker_core):
        calls.append((src.chip_id, dst.chip_id, link_idx, worker_core.args))
        # The runtime takes the next free semaphore ids of the worker's program (ours use 0..5, and on
        # the gather-only core (1, 0) 0 for sem_go and 1 for its padding writer's start flag).
        return [100 + dst.chip_id, 6, 7]  # eth channel, teardown and buffer-index semaphores

    class FakeMesh(FakeMeshDevice):
        shape = (1, 2)

        def get_fabric_node_id(self, coord):
            row, col = coord.args
            return type("Node", (), {"mesh_id": 0, "chip_id": 10 + row * 2 + col})()

    ttnn.setup_fabric_connection = setup_fabric_connection
    mesh = FakeMesh(grid=(2, 2))
    _launch.register_target(HardwareTarget(ttnn))

    def tensor(shape, dtype, element_size, address):
        return FakeTensor(shape, dtype, ttnn.ROW_MAJOR_LAYOUT, mesh, address, element_size)

    x = tensor([1, 3, 64], ttnn.bfloat16, 2, 0x1000)
    ids = tensor([1, 3, 4], ttnn.uint32, 4, 0x2000)
    ws = tensor([1, 3, 4], ttnn.bfloat16, 2, 0x3000)
    mapping = tensor([1, 1, 16, 2], ttnn.uint16, 2, 0x4000)
    all_to_all_dispatch_dense(x, ids, ws, mapping, cluster_axis=1, capacity=64, strict=False)

    # Device (0, 0) connects forward to chip 11, device (0, 1) backward to chip 10, on link 0.
    assert calls == [(10, 11, 0, (0, 0)), (11, 10, 0, (0, 0))]  # (src chip, dst chip, link, worker core)
    [(io_tensors, mesh_program)] = ttnn.generic_op_calls
    assert len(io_tensors) == 4 + 10
    programs = [program for _, program in mesh_program.items]
    blocks = [program.kernels[0].runtime_args[0][1][-5:] for program in programs]
    assert blocks[0] == [1, 111, 6, 7, 0]  # has_forward, connection args, has_backward
    assert blocks[1] == [0, 1, 110, 6, 7]
    semaphore_ids = [sorted(s.id for s in program.semaphores) for program in programs]
    assert semaphore_ids == [[0, 0, 1, 1, 2, 3, 4, 5, 6, 7], [0, 0, 1, 1, 2, 3, 4, 5, 6, 7]]
