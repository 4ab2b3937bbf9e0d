"""all_to_all_dispatch_dense / all_to_all_combine_dense: C++ validation and the per-device programs.

The emulator runs of both ops (against ttnn_moe.golden) are in tests/test_op_dispatch_combine_emu.py.
"""

import pytest

from ttnn_moe import _C, all_to_all_combine_dense, all_to_all_dispatch_dense
from ttnn_moe.paths import kernels_dir

DF = _C.program.DataFormat
RM = _C.program.Layout.ROW_MAJOR
LINEAR, RING, MESH = 0, 1, 2


def arg(shape, dtype, layout=RM, address=4096):
    element = {DF.Float16_b: 2, DF.UInt32: 4, DF.Int32: 4, DF.UInt16: 2, DF.Float32: 4}[dtype]
    rows = 1
    for d in shape[:-1]:
        rows *= d
    return _C.program.TensorArg(shape=list(shape), dtype=dtype, layout=layout, address=address,
                                page_size=shape[-1] * element, num_pages=rows, is_dram=True)


def dispatch_inputs(batch=2, seq=3, hidden=64, top_k=4, experts=64, devices=8, mapping_dtype=DF.Int32):
    return [
        arg((batch, seq, hidden), DF.Float16_b),
        arg((batch, seq, top_k), DF.UInt32),
        arg((batch, seq, top_k), DF.Float16_b),
        arg((1, 1, experts, devices), mapping_dtype),
    ]


def dispatch_specs(inputs, mesh=(1, 8), axis=1, topology=LINEAR, capacity=0, num_links=1, payload=4096):
    return _C.ops.all_to_all_dispatch_dense_output_specs(
        inputs, mesh_shape=mesh, cluster_axis=axis, topology=topology, capacity=capacity, num_links=num_links,
        max_packet_payload=payload)


def test_dispatch_output_specs_follow_the_spec_shapes():
    specs = dispatch_specs(dispatch_inputs(batch=3, seq=7, hidden=128, top_k=4, experts=64), capacity=256)
    shapes = [list(s.shape) for s in specs]
    # E_l = 64 / 8; D = 8 devices on axis 1 of a 1x8 mesh.
    assert shapes[:8] == [[256, 128], [8, 1], [8, 1], [256], [256], [256, 2], [1], [1, 8]]
    assert [s.dtype for s in specs[:8]] == [DF.Float16_b, DF.UInt32, DF.UInt32, DF.UInt32, DF.Float16_b,
                                            DF.UInt32, DF.UInt32, DF.UInt32]
    assert shapes[8][0] == 8  # one routing-metadata page per line position
    assert shapes[8][1] * 4 >= 21 * 4 * 6  # T*K ids (4 B) and weights (2 B)


def test_default_capacity_is_the_worst_case_for_distinct_experts():
    # D * T * min(K, E_l) rows rounded to a tile, plus a tile of padding per block:
    # D = 4 (axis 0 of 4x8), T = 5, K = 4, E_l = 64 / 32 = 2 -> 40 -> 64, + 2 * 32.
    specs = dispatch_specs(dispatch_inputs(batch=1, seq=5, top_k=4, experts=64, devices=32), mesh=(4, 8), axis=0)
    assert list(specs[0].shape)[0] == 64 + 64
    assert _C.ops.all_to_all_dispatch_dense_default_capacity(5, 4, 4, 2) == 64 + 64


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(axis=2), "cluster_axis must be 0 or 1"),
        (dict(topology=3), "topology must be"),
        (dict(capacity=100), "capacity 100 must be a multiple of 32"),
        (dict(num_links=0), "num_links must be at least 1"),
        (dict(payload=100), "max_packet_payload must be"),
        (dict(mesh=(2, 8)), "covers 8 devices, the 2x8 mesh has 16"),
    ],
)
def test_dispatch_bad_attributes_raise(change, message):
    with pytest.raises(ValueError, match=message):
        dispatch_specs(dispatch_inputs(), **change)


@pytest.mark.parametrize(
    "inputs, message",
    [
        (dispatch_inputs(experts=60), "E = 60 experts are not divisible by the 8 devices"),
        (dispatch_inputs(top_k=33), "K = 33 exceeds"),
        (dispatch_inputs(hidden=40), "H = 40 must be a multiple of 16"),
        (dispatch_inputs()[:3] + [arg((64, 8, 2), DF.Int32)], r"expert_mapping \(1, 1, E, num_devices\) must have rank 2"),
        (dispatch_inputs()[:3] + [arg((1, 1, 64, 8), DF.Float16_b)], "expert_mapping must be uint16, uint32 or int32"),
        ([dispatch_inputs()[0], arg((2, 3, 4), DF.Int32)] + dispatch_inputs()[2:], "topk_indices must be uint32"),
        ([dispatch_inputs()[0], arg((2, 4, 4), DF.UInt32)] + dispatch_inputs()[2:], r"must match x \(2, 3, 64\)"),
        (dispatch_inputs()[:2] + [arg((2, 3, 5), DF.Float16_b), dispatch_inputs()[3]], "topk_weights"),
        (dispatch_inputs()[:3], "expects 4 inputs"),
    ],
)
def test_dispatch_bad_inputs_raise(inputs, message):
    with pytest.raises(ValueError, match=message):
        dispatch_specs(inputs)


def test_dispatch_accepts_ttnn_4d_inputs_and_uint16_mapping():
    inputs = [arg((1, 2, 3, 64), DF.Float16_b), arg((1, 2, 3, 4), DF.UInt32), arg((1, 2, 3, 4), DF.Float16_b),
              arg((1, 1, 64, 8), DF.UInt16)]
    assert list(dispatch_specs(inputs, capacity=64)[0].shape) == [64, 64]


def dispatch_programs(mesh, axis, topology, node_ids=None):
    inputs = dispatch_inputs(devices=mesh[0] * mesh[1], experts=8 * mesh[0] * mesh[1])
    specs = dispatch_specs(inputs, mesh=mesh, axis=axis, topology=topology, capacity=64)
    for i, spec in enumerate(specs):
        spec.address = 65536 * (i + 1)
    node_ids = node_ids or [(0, d) for d in range(mesh[0] * mesh[1])]
    return _C.ops.all_to_all_dispatch_dense_program(
        inputs + list(specs), str(kernels_dir()), grid=(2, 2), mesh_shape=mesh, cluster_axis=axis,
        topology=topology, capacity=64, num_links=1, max_packet_payload=4096, fabric_node_ids=node_ids)


def coord(c):
    return None if c is None else (c.row, c.col)


@pytest.mark.parametrize("mesh, axis", [((1, 8), 1), ((2, 4), 0), ((2, 4), 1), ((4, 8), 0)])
def test_linear_line_connects_each_device_to_its_existing_neighbors(mesh, axis):
    entries = dispatch_programs(mesh, axis, LINEAR)
    assert [coord(e["coord"]) for e in entries] == [(r, c) for r in range(mesh[0]) for c in range(mesh[1])]
    for e in entries:
        r, c = coord(e["coord"])
        pos, size = (r, mesh[0]) if axis == 0 else (c, mesh[1])
        step = (1, 0) if axis == 0 else (0, 1)
        forward = (r + step[0], c + step[1]) if pos + 1 < size else None
        backward = (r - step[0], c - step[1]) if pos > 0 else None
        assert (coord(e["forward"]), coord(e["backward"])) == (forward, backward)


def test_ring_connects_both_ways_round_the_line():
    entries = dispatch_programs((1, 8), 1, RING)
    assert (coord(entries[0]["forward"]), coord(entries[0]["backward"])) == ((0, 1), (0, 7))
    assert (coord(entries[7]["forward"]), coord(entries[7]["backward"])) == ((0, 0), (0, 6))


def route_words(entry, line_size):
    """The kernel's per-position route words: (direction, hops, chip id) of each line position."""
    args = entry["program"].kernels[0].runtime_args[0][1]
    start = 13 + 13 + line_size  # 13 addresses, 13 scalars, line device indices
    words = args[start:start + 2 * line_size]
    return [(w & 0xFF, (w >> 8) & 0xFF, n & 0xFFFF) for w, n in zip(words[::2], words[1::2])]


def test_routes_take_the_shorter_way_on_a_ring_and_the_straight_way_on_a_line():
    local, fwd, bwd = 0, 1, 2
    ring = route_words(dispatch_programs((1, 8), 1, RING)[1], 8)
    assert [(d, h) for d, h, _ in ring] == [(bwd, 1), (local, 0), (fwd, 1), (fwd, 2), (fwd, 3), (fwd, 4),
                                            (bwd, 3), (bwd, 2)]
    line = route_words(dispatch_programs((1, 8), 1, LINEAR)[1], 8)
    assert [(d, h) for d, h, _ in line] == [(bwd, 1), (local, 0)] + [(fwd, h) for h in range(1, 7)]


def test_2d_routes_name_the_destination_chip_of_each_position():
    node_ids = [(0, 100 + d) for d in range(8)]
    entries = dispatch_programs((2, 4), 0, MESH, node_ids)
    # Device (1, 2) (index 6) dispatches along column 2: positions 0, 1 are devices 2 and 6.
    assert [chip for _, _, chip in route_words(entries[6], 2)] == [102, 106]


def test_program_cache_hits_on_a_repeated_call():
    before = _C.ops.all_to_all_dispatch_dense_cache_stats()
    dispatch_programs((2, 4), 1, LINEAR)
    dispatch_programs((2, 4), 1, LINEAR)
    after = _C.ops.all_to_all_dispatch_dense_cache_stats()
    assert after["hits"] - before["hits"] >= 8  # every device's program of the second call


def combine_specs(inputs, mesh=(1, 8), axis=1, batch=2, seq=3, dtype=DF.Float16_b, partials=False):
    return _C.ops.all_to_all_combine_dense_output_specs(
        inputs, mesh_shape=mesh, cluster_axis=axis, topology=LINEAR, batch=batch, seq=seq, output_dtype=dtype,
        return_partials=partials, num_links=1, max_packet_payload=4096)


def combine_inputs(capacity=64, hidden=64):
    return [arg((capacity, hidden), DF.Float16_b), arg((capacity, 2), DF.UInt32), arg((1,), DF.UInt32)]


def test_combine_output_specs():
    specs = combine_specs(combine_inputs(), mesh=(4, 8), axis=0, batch=2, seq=3, dtype=DF.Float32)
    assert [list(s.shape) for s in specs] == [[2, 3, 64], [4, 2, 3, 64], [4, 6], [1, 8]]
    assert specs[0].dtype == DF.Float32


@pytest.mark.parametrize(
    "inputs, change, message",
    [
        (combine_inputs(), dict(axis=-1 % 2**32), "cluster_axis must be 0 or 1"),
        (combine_inputs(), dict(batch=0), "batch and seq must be positive"),
        (combine_inputs(), dict(dtype=DF.UInt32), "output dtype must be bfloat16 or float32"),
        (combine_inputs(hidden=24), {}, "H = 24 must be a multiple of 16"),
        ([arg((64, 64), DF.Float16_b), arg((32, 2), DF.UInt32), arg((1,), DF.UInt32)], {},
         r"slot_source \(32, 2\) must be \(capacity, 2\) with capacity = 64"),
        ([arg((64, 64), DF.Float32)] + combine_inputs()[1:], {}, "reduced must be bfloat16"),
        (combine_inputs()[:2] + [arg((2,), DF.UInt32)], {}, "num_slots must hold one value"),
    ],
)
def test_combine_bad_inputs_raise(inputs, change, message):
    with pytest.raises(ValueError, match=message):
        combine_specs(inputs, **change)


@pytest.mark.parametrize("name, value", [("cluster_axis", -1), ("cluster_axis", 1.0), ("num_links", 0)])
def test_dispatch_wrapper_rejects_bad_scalars_before_launching(name, value):
    kwargs = {"cluster_axis": 0, name: value}
    with pytest.raises(ValueError, match=name):
        all_to_all_dispatch_dense(None, None, None, None, **kwargs)


@pytest.mark.parametrize("name, value", [("batch", 0), ("seq", True), ("output_dtype", "int32")])
def test_combine_wrapper_rejects_bad_scalars_before_launching(name, value):
    kwargs = {"cluster_axis": 0, "batch": 1, "seq": 1, name: value}
    with pytest.raises(ValueError, match=name):
        all_to_all_combine_dense(None, None, None, **kwargs)
