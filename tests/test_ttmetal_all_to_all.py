"""Tenstorrent's all_to_all_dispatch and all_to_all_combine (ttnn 0.81.1 kernels, unmodified) on
emulated meshes, against the torch goldens of their documented semantics (ttmetal_moe_golden).

Pure data movement: every defined value is compared exactly. Which rows are undefined:
- dispatch output: a row (global token a*T + t) for which none of the token's experts lives on the
  device is never written; ttnn documents it as garbage (here: whatever the DRAM held). Only the
  written rows are compared, and the test checks that exactly those are the ones the golden defines
  by filling the output with a sentinel first.
- dispatch metadata: fully defined along a cluster axis; with cluster_axis=None tt-metal 0.81.1's
  reader waits for too few devices (see test_dispatch_over_the_whole_mesh_on_a_2d_fabric), so there
  it is not compared.
- combine output: fully defined (it starts as zeros, so rows nobody sends, e.g. the second k of a
  token that chose one expert twice, are 0).
"""

from __future__ import annotations

import pytest
import torch
import ttmetal_moe_golden as golden
import ttnn_moe.emu as ttnn
from ttmetal_moe_cases import (
    EXPERTS_PER_DEVICE,
    B,
    H,
    K,
    S,
    T,
    dispatch_inputs,
    make_routing,
    open_mesh,
    per_device,
)
from ttnn_moe.emu.tensor import device_shards
from ttnn_moe.emu.ttmetal.all_to_all_combine import all_to_all_combine
from ttnn_moe.emu.ttmetal.all_to_all_dispatch import TransferType, all_to_all_dispatch

import ttnn_moe

SENTINEL = -12345.0  # exactly representable in bf16, never a token value of these tests
Topology = ttnn.Topology

pytestmark = pytest.mark.usefixtures("wheel")


def sentinel_outputs(mesh, axis):
    """Preallocated dispatch outputs, the token rows filled with SENTINEL."""
    rows, cols = mesh.shape
    groups = {None: rows * cols, 0: rows, 1: cols}[axis]
    devices = rows * cols
    out = per_device(mesh, [torch.full((1, B * groups, S, H), SENTINEL)] * devices, ttnn.bfloat16)
    md = per_device(mesh, [torch.zeros(1, B * groups, S, K, dtype=torch.int64)] * devices, ttnn.uint16)
    return out, md


def run_dispatch(mesh, routing, axis, **kwargs):
    x, idx, mapping = dispatch_inputs(mesh, routing)
    outputs = sentinel_outputs(mesh, axis)
    out, md = all_to_all_dispatch(x, idx, mapping, cluster_axis=axis, output_tensors=outputs, **kwargs)
    return out, md, mapping


def check_dispatch(mesh, routing, axis, out, md, metadata_defined=True):
    rows, cols = mesh.shape
    want = golden.dispatch(routing.xs, routing.indices, routing.mapping, rows, cols, axis)
    for d, (got_rows, got_md) in enumerate(zip(device_shards(out), device_shards(md))):
        want_rows, defined, want_md = want[d]
        got_rows = got_rows.reshape(-1, H)
        if metadata_defined:
            assert torch.equal(got_md.reshape(-1, K).to(torch.int64), want_md), f"device {d}: metadata"
        written = (got_rows != SENTINEL).any(dim=1)
        assert torch.equal(written, defined), f"device {d}: rows written {written.tolist()} vs {defined.tolist()}"
        assert torch.equal(got_rows[defined], want_rows[defined]), f"device {d}: token rows"


def expert_outputs(dispatched):
    """What each device's experts return (any values will do: combine only moves them): local expert j
    scales the dispatched rows by (j + 2), rounded to bf16 once, here."""
    return [
        torch.stack([(rows.reshape(-1, H).float() * (j + 2)).to(torch.bfloat16) for j in range(EXPERTS_PER_DEVICE)])
        for rows in dispatched
    ]


def check_combine(mesh, routing, axis, md, combined_inputs, combined, local_reduce=False):
    rows, cols = mesh.shape
    metadata = [m.reshape(-1, K).to(torch.int64) for m in device_shards(md)]
    want = golden.combine(combined_inputs, metadata, routing.mapping, rows, cols, axis, local_reduce)
    for d, got in enumerate(device_shards(combined)):
        assert list(got.shape) == [K, B, S, H]
        assert torch.equal(got.reshape(K, T, H), want[d]), f"device {d}: combined rows"


CASES = [
    # (mesh rows, cols, cluster_axis, fabric topology, routing, num_links)
    pytest.param(1, 2, 1, Topology.Linear, "random", 1, id="1x2-axis1-linear-random"),
    pytest.param(2, 2, 0, Topology.Linear, "same_device", 1, id="2x2-axis0-linear-same_device"),
    pytest.param(2, 2, 1, Topology.Linear, "one_device", 1, id="2x2-axis1-linear-one_device"),
    pytest.param(2, 4, 1, Topology.Linear, "random", 2, id="2x4-axis1-linear-2links"),
    pytest.param(2, 4, 0, Topology.Mesh, "same_device", 1, id="2x4-axis0-mesh2d"),
    pytest.param(1, 4, 1, Topology.Ring, "random", 1, id="1x4-axis1-ring"),
]


@pytest.mark.parametrize("rows, cols, axis, topology, kind, links", CASES)
def test_dispatch_then_combine_match_the_goldens(rows, cols, axis, topology, kind, links):
    mesh = open_mesh(rows, cols, topology)
    routing = make_routing(kind, rows * cols, seed=rows * 10 + cols + (axis or 0))
    out, md, mapping = run_dispatch(mesh, routing, axis, num_links=links)
    check_dispatch(mesh, routing, axis, out, md)

    experts = expert_outputs(device_shards(out))
    expert_in = per_device(mesh, [e.reshape(EXPERTS_PER_DEVICE, -1, S, H) for e in experts], ttnn.bfloat16)
    combined = all_to_all_combine(expert_in, md, mapping, cluster_axis=axis, num_links=links)
    check_combine(mesh, routing, axis, md, experts, combined)


def test_dispatch_page_by_page_matches_the_golden():
    mesh = open_mesh(1, 2)
    routing = make_routing("same_device", 2, seed=3)
    out, md, _ = run_dispatch(mesh, routing, 1, num_links=1, impl=TransferType.PAGE_BY_PAGE)
    check_dispatch(mesh, routing, 1, out, md)


def test_combine_local_reduce_sends_one_row_per_device():
    mesh = open_mesh(1, 2)
    routing = make_routing("same_device", 2, seed=4)
    out, md, mapping = run_dispatch(mesh, routing, 1, num_links=1)
    reduced = [(rows.reshape(1, -1, H).float() * 3).to(torch.bfloat16) for rows in device_shards(out)]
    reduced_in = per_device(mesh, [r.reshape(1, -1, S, H) for r in reduced], ttnn.bfloat16)
    combined = all_to_all_combine(reduced_in, md, mapping, cluster_axis=1, num_links=1, local_reduce=True)
    check_combine(mesh, routing, 1, md, reduced, combined, local_reduce=True)


def test_bad_inputs_name_the_value():
    mesh = open_mesh(1, 2)
    routing = make_routing("random", 2)
    x, idx, mapping = dispatch_inputs(mesh, routing)
    with pytest.raises(ValueError, match="cluster_axis must be 0, 1 or None, got 2"):
        all_to_all_dispatch(x, idx, mapping, cluster_axis=2)
    with pytest.raises(ValueError, match="expert_indices_tensor must be uint16, got uint32"):
        wrong = per_device(mesh, [t.reshape(B, S, 1, K) for t in routing.indices], ttnn.uint32)
        all_to_all_dispatch(x, wrong, mapping, cluster_axis=1)
    with pytest.raises(ValueError, match="output_concat_dim must be 1 or 2, got 3"):
        all_to_all_dispatch(x, idx, mapping, cluster_axis=1, output_concat_dim=3)
    with pytest.raises(ValueError, match="cluster_axis must be given"):
        all_to_all_combine(x, idx, mapping)


def test_a_profile_records_the_ops_with_their_modeled_device_time(tmp_path):
    mesh = open_mesh(1, 2)
    routing = make_routing("random", 2)
    with ttnn_moe.profile(tmp_path) as run:
        out, md, mapping = run_dispatch(mesh, routing, 1, num_links=1)
        expert_in = per_device(
            mesh, [e.reshape(EXPERTS_PER_DEVICE, -1, S, H) for e in expert_outputs(device_shards(out))], ttnn.bfloat16
        )
        all_to_all_combine(expert_in, md, mapping, cluster_axis=1, num_links=1)
    assert [op.name for op in run.ops] == ["all_to_all_dispatch", "all_to_all_combine"]
    assert all(op.device_ns() > 0 for op in run.ops)
    assert (tmp_path / "ops_perf_results.csv").read_text().count("all_to_all_") >= 2


def test_dispatch_over_the_whole_mesh_on_a_2d_fabric():
    """cluster_axis=None: the tokens reach every device that holds one of their experts. The metadata is
    not checked: the factory defines AXIS=-1 for the reader, which the reader takes as a concrete axis
    (dispatch group = the mesh row), so it waits for the increments of mesh_cols devices instead of all
    and writes only mesh_cols positions of the staged metadata, whatever has landed by then."""
    mesh = open_mesh(2, 2, Topology.Mesh)
    routing = make_routing("random", 4, seed=7)
    out, md, _ = run_dispatch(mesh, routing, None, num_links=1)
    check_dispatch(mesh, routing, None, out, md, metadata_defined=False)


def test_dispatch_concatenated_along_the_sequence():
    """output_concat_dim=2 with one batch row per device: [1, 1, S*D[A], H], device a's tokens at a*S + s.
    (The kernels place a token at a*B*S + t for either concat dim; with B > 1 that is not the documented
    sequence concatenation, so only B = 1 is checked.)"""
    mesh = open_mesh(1, 2)
    routing = make_routing("same_device", 2, seed=8)
    x = per_device(mesh, [t.reshape(1, T, 1, H) for t in routing.xs], ttnn.bfloat16)
    idx = per_device(mesh, [t.reshape(1, T, 1, K) for t in routing.indices], ttnn.uint16)
    mapping = per_device(mesh, [routing.mapping.reshape(1, 1, -1, 2)] * 2, ttnn.uint16)
    outputs = (
        per_device(mesh, [torch.full((1, 1, 2 * T, H), SENTINEL)] * 2, ttnn.bfloat16),
        per_device(mesh, [torch.zeros(1, 1, 2 * T, K, dtype=torch.int64)] * 2, ttnn.uint16),
    )
    out, md = all_to_all_dispatch(
        x, idx, mapping, cluster_axis=1, num_links=1, output_concat_dim=2, output_tensors=outputs
    )
    assert list(out.shape) == [1, 1, 2 * T, H] and list(md.shape) == [1, 1, 2 * T, K]
    check_dispatch(mesh, routing, 1, out, md)
