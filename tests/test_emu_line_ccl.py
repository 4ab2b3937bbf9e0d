"""all_gather and reduce_scatter as device programs on the emulated fabric (kernels/ccl_line),
against ttnn_moe.golden on every mesh shape the DeepSeek-V3 layer uses, both cluster axes:
gathers exact, reduce-scatters bitwise equal to the fp32 sum in ascending position rounded
once to bfloat16, under any fabric delay; no host computation; fabric bytes as the
algorithm sends them."""

import pytest
import torch
import ttnn_moe.emu as ttnn
from ttnn_moe.emu.tensor import device_shards, from_shards

from ttnn_moe import golden

MESH_SHAPES = [(1, 2), (2, 2), (2, 4), (1, 8), (4, 8)]
TILE_BYTES = 2048


@pytest.fixture(scope="module", params=MESH_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def mesh(request):
    m = ttnn.open_mesh_device(ttnn.MeshShape(*request.param), grid=(2, 2))
    yield m
    ttnn.close_mesh_device(m)


def _shards(mesh, shape, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(shape, generator=g).to(torch.bfloat16) for _ in range(mesh.get_num_devices())]


def _to_mesh(mesh, shards):
    return from_shards(shards, ttnn.bfloat16, ttnn.TILE_LAYOUT, mesh)


def _fabric_bytes(counters):
    return counters["fabric"]["bytes"]


@pytest.mark.parametrize("cluster_axis", [0, 1])
@pytest.mark.parametrize("dim", [0, 1])
def test_all_gather_matches_the_golden_exactly(mesh, cluster_axis, dim):
    shards = _shards(mesh, (32, 64), seed=10 + dim)
    x = _to_mesh(mesh, shards)
    before = ttnn.host_traffic()
    out = ttnn.all_gather(x, dim, cluster_axis=cluster_axis)
    assert ttnn.host_traffic() - before == ttnn.HostTraffic()
    counters = ttnn.last_run_counters()
    want = golden.all_gather(shards, tuple(mesh.shape), dim, cluster_axis)
    size = mesh.shape[cluster_axis]
    assert list(out.shape) == [32 * size, 64] if dim == 0 else [32, 64 * size]
    for d, (got, expected) in enumerate(zip(device_shards(out), want)):
        assert torch.equal(got, expected), f"device {d}"
    # Every device sends each of its 2 pages to the size - 1 others, once.
    assert _fabric_bytes(counters) == mesh.get_num_devices() * 2 * TILE_BYTES * (size - 1)


@pytest.mark.parametrize("cluster_axis", [0, 1])
def test_reduce_scatter_is_the_ordered_fp32_sum_rounded_once(mesh, cluster_axis):
    size = mesh.shape[cluster_axis]
    shards = _shards(mesh, (64, 64 * size), seed=20 + cluster_axis)
    x = _to_mesh(mesh, shards)
    before = ttnn.host_traffic()
    out = ttnn.reduce_scatter(x, 1, cluster_axis=cluster_axis)
    assert ttnn.host_traffic() - before == ttnn.HostTraffic()
    counters = ttnn.last_run_counters()
    want = golden.reduce_scatter(shards, tuple(mesh.shape), 1, cluster_axis)
    assert list(out.shape) == [64, 64]
    for d, (got, expected) in enumerate(zip(device_shards(out), want)):
        assert torch.equal(got, expected.to(torch.bfloat16)), f"device {d}"
    # Every device sends the 4 tiles of each other member's chunk to it.
    assert _fabric_bytes(counters) == mesh.get_num_devices() * 4 * TILE_BYTES * (size - 1)


def test_reduce_scatter_does_not_depend_on_fabric_delays(mesh):
    cluster_axis = 1 if mesh.shape[1] > 1 else 0
    size = mesh.shape[cluster_axis]
    shards = _shards(mesh, (32, 32 * size * 2), seed=30)
    results = []
    for seed in (1, 2, 3):
        mesh.set_fabric_seed(seed)
        out = ttnn.reduce_scatter(_to_mesh(mesh, shards), 1, cluster_axis=cluster_axis, num_links=2)
        results.append(device_shards(out))
    want = golden.reduce_scatter(shards, tuple(mesh.shape), 1, cluster_axis)
    for run in results:
        for got, expected in zip(run, want):
            assert torch.equal(got, expected.to(torch.bfloat16))


@pytest.mark.parametrize("topology", ["Ring", "Mesh"])
def test_collectives_on_ring_and_2d_fabrics(topology):
    m = ttnn.open_mesh_device(ttnn.MeshShape(2, 4), grid=(2, 2))
    try:
        m.fabric_topology = getattr(ttnn.Topology, topology)
        shards = _shards(m, (32, 128), seed=40)
        for axis in (0, 1):
            gathered = device_shards(ttnn.all_gather(_to_mesh(m, shards), 1, cluster_axis=axis, num_links=2))
            for got, expected in zip(gathered, golden.all_gather(shards, (2, 4), 1, axis)):
                assert torch.equal(got, expected)
            summed = device_shards(ttnn.reduce_scatter(_to_mesh(m, shards), 1, cluster_axis=axis))
            for got, expected in zip(summed, golden.reduce_scatter(shards, (2, 4), 1, axis)):
                assert torch.equal(got, expected.to(torch.bfloat16))
    finally:
        ttnn.close_mesh_device(m)


def test_unaligned_splits_take_the_counted_host_path():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), grid=(2, 2))
    try:
        shards = _shards(m, (32, 48), seed=50)
        before = ttnn.host_traffic()
        out = ttnn.reduce_scatter(_to_mesh(m, shards), 1, cluster_axis=1)
        traffic = ttnn.host_traffic() - before
        assert traffic.host_computations == 1 and traffic.events[0][1:] == ("host_computations", "reduce_scatter")
        for got, expected in zip(device_shards(out), golden.reduce_scatter(shards, (1, 2), 1, 1)):
            assert torch.equal(got, expected.to(torch.bfloat16))
        with pytest.raises(ValueError, match="num_links must be in \\[1, 4\\], got 5"):
            ttnn.all_gather(_to_mesh(m, shards), 0, cluster_axis=1, num_links=5)
    finally:
        ttnn.close_mesh_device(m)


def test_line_all_gather_carries_each_page_once_per_link():
    """1x8 line, 2 pages per device: a page is multicast along each side of the line, so the link
    from position k + 1 to k carries the pages of the 7 - k members beyond it once each (not once
    per member they are for), plus the line barrier's increments to the members on its far side."""
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 8), grid=(2, 2))
    try:
        shards = _shards(m, (32, 64), seed=60)
        out = ttnn.all_gather(_to_mesh(m, shards), 0, cluster_axis=1)
        for got, expected in zip(device_shards(out), golden.all_gather(shards, (1, 8), 0, 1)):
            assert torch.equal(got, expected)
        counters = ttnn.last_run_counters()
    finally:
        ttnn.close_mesh_device(m)
    links = {(lk["from_chip"], lk["to_chip"]): lk for d in counters["devices"].values() for lk in d["timing"]["links"]}
    page_wire = TILE_BYTES + 48 + 2 * 50  # payload, 1D header, 2 Ethernet frames of framing
    inc_wire = 48 + 50
    for k in range(7):
        beyond = 7 - k  # members k + 1 .. 7 send their 2 pages towards k, and increment 0 .. k
        assert links[(k + 1, k)]["wire_bytes"] == beyond * 2 * page_wire + beyond * (k + 1) * inc_wire
        assert links[(k, k + 1)]["wire_bytes"] == (k + 1) * 2 * page_wire + (k + 1) * beyond * inc_wire
