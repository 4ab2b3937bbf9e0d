"""all_gather and reduce_scatter as device programs on the emulated fabric (kernels/ccl_line),
against ttnn_moe.golden on every mesh shape the DeepSeek-V3 layer uses, both cluster axes (lines
of 1, 2, 4 and 8): gathers exact; reduce-scatters close to the fp32 sum (PCC, max error) and
bitwise equal to a hand computation of the line's summation order (partials rounded to bfloat16
at every hop, as ttnn's line reduce_scatter does), under any fabric delay; no host computation;
fabric bytes per link as the algorithms send them."""

import pytest
import torch
import ttnn_moe.emu as ttnn
from ttnn_moe.emu.tensor import device_shards, from_shards
from ttnn_moe.golden.collectives import axis_groups
from ttnn_moe.testing import assert_pcc, max_abs_error

from ttnn_moe import golden

MESH_SHAPES = [(1, 2), (2, 2), (2, 4), (1, 8), (4, 8)]
TILE_BYTES = 2048


@pytest.fixture(scope="module", params=MESH_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def mesh(request):
    m = ttnn.open_mesh_device(ttnn.MeshShape(*request.param), grid=(2, 4))
    yield m
    ttnn.close_mesh_device(m)


def _shards(mesh, shape, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(shape, generator=g).to(torch.bfloat16) for _ in range(mesh.get_num_devices())]


def _to_mesh(mesh, shards, layout=ttnn.TILE_LAYOUT):
    return from_shards(shards, ttnn.bfloat16, layout, mesh)


def _fabric_bytes(counters):
    return counters["fabric"]["bytes"]


def _link_payload(counters) -> dict:
    """Payload bytes per (from chip, to chip), summed over the parallel links."""
    out: dict = {}
    for (src, dst, _link), traffic in counters["fabric"]["links"].items():
        out[(src, dst)] = out.get((src, dst), 0) + traffic["bytes"]
    return out


def _line_order_sum(shards, mesh_shape, dim, cluster_axis):
    """Chunk d of each line, summed as the line reduce_scatter does: forward partials from
    position 0 up, F_0 = x_0, F_p = bf16(x_p + F_(p-1)); backward from the far end down,
    B_(N-1) = x_(N-1), B_p = bf16(x_p + B_(p+1)); member d keeps F_d (the last member),
    bf16(x_0 + B_1) (the first) or bf16(F_d + B_(d+1)) (a middle one)."""

    def add(a, b):
        return (a.float() + b.float()).to(torch.bfloat16)

    out = [None] * len(shards)
    for group in axis_groups(mesh_shape, cluster_axis):
        n = len(group)
        chunks = [shards[m].chunk(n, dim=dim) for m in group]
        for d, member in enumerate(group):
            parts = [chunks[p][d] for p in range(n)]
            forward = parts[0]
            for p in range(1, d + 1):
                forward = add(parts[p], forward)
            backward = parts[n - 1] if d < n - 1 else None
            for p in range(n - 2, d, -1):
                backward = add(parts[p], backward)
            if d == 0:
                out[member] = parts[0] if n == 1 else add(parts[0], backward)
            else:
                out[member] = forward if backward is None else add(forward, backward)
    return out


def _check_reduce_scatter(out, shards, mesh_shape, dim, cluster_axis):
    """PCC and max error against the fp32 sum, and bitwise against the line's order."""
    got = device_shards(out)
    fp32 = golden.reduce_scatter(shards, mesh_shape, dim, cluster_axis)
    size = mesh_shape[cluster_axis]
    for d, (result, want) in enumerate(zip(got, fp32)):
        assert_pcc(want, result.float(), 0.9999, f"device {d}")
        # Each of the size - 1 roundings to bf16 is off by at most half an ulp of its partial.
        bound = size * 2.0**-8 * float(sum(s.float().abs().max() for s in shards))
        assert max_abs_error(want, result.float()) <= bound, f"device {d}"
    for d, (result, want) in enumerate(zip(got, _line_order_sum(shards, mesh_shape, dim, cluster_axis))):
        assert torch.equal(result, want), f"device {d}"


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
def test_all_gather_of_row_major_rows_along_the_rows(mesh, cluster_axis):
    """(5, 48) bf16 rows, 96 B, DRAM-aligned: each becomes a segment of the gathered row, on the device."""
    shards = _shards(mesh, (5, 48), seed=17)
    x = _to_mesh(mesh, shards, ttnn.ROW_MAJOR_LAYOUT)
    before = ttnn.host_traffic()
    out = ttnn.all_gather(x, 1, cluster_axis=cluster_axis)
    assert ttnn.host_traffic() - before == ttnn.HostTraffic()
    counters = ttnn.last_run_counters()
    size = mesh.shape[cluster_axis]
    assert list(out.shape) == [5, 48 * size] and out.layout is ttnn.ROW_MAJOR_LAYOUT
    for d, (got, expected) in enumerate(
        zip(device_shards(out), golden.all_gather(shards, tuple(mesh.shape), 1, cluster_axis))
    ):
        assert torch.equal(got, expected), f"device {d}"
    # Every device sends each of its 5 rows to the size - 1 others, once.
    assert _fabric_bytes(counters) == mesh.get_num_devices() * 5 * 96 * (size - 1)


def test_all_gather_of_unaligned_row_major_rows_along_the_rows_is_a_host_built_in(mesh):
    """(5, 40) bf16 rows are 80 B, not DRAM-aligned: no segment write, the counted host path."""
    shards = _shards(mesh, (5, 40), seed=18)
    before = ttnn.host_traffic()
    out = ttnn.all_gather(_to_mesh(mesh, shards, ttnn.ROW_MAJOR_LAYOUT), 1, cluster_axis=1)
    assert (ttnn.host_traffic() - before).host_computations == 1
    for d, (got, expected) in enumerate(zip(device_shards(out), golden.all_gather(shards, tuple(mesh.shape), 1, 1))):
        assert torch.equal(got, expected), f"device {d}"


@pytest.mark.parametrize("cluster_axis", [0, 1])
def test_all_gather_of_row_major_rows_with_an_uneven_split_over_links(mesh, cluster_axis):
    """5 rows per device (5 pages) over the 4 links (one core each): shares 2, 1, 1, 1."""
    shards = _shards(mesh, (5, 48), seed=15)
    out = ttnn.all_gather(_to_mesh(mesh, shards, ttnn.ROW_MAJOR_LAYOUT), 0, cluster_axis=cluster_axis)
    for d, (got, expected) in enumerate(
        zip(device_shards(out), golden.all_gather(shards, tuple(mesh.shape), 0, cluster_axis))
    ):
        assert torch.equal(got, expected), f"device {d}"


@pytest.mark.parametrize("cluster_axis", [0, 1])
def test_reduce_scatter_sums_in_the_line_order(mesh, cluster_axis):
    size = mesh.shape[cluster_axis]
    shards = _shards(mesh, (64, 64 * size), seed=20 + cluster_axis)
    x = _to_mesh(mesh, shards)
    before = ttnn.host_traffic()
    out = ttnn.reduce_scatter(x, 1, cluster_axis=cluster_axis)
    assert ttnn.host_traffic() - before == ttnn.HostTraffic()
    counters = ttnn.last_run_counters()
    assert list(out.shape) == [64, 64]
    _check_reduce_scatter(out, shards, tuple(mesh.shape), 1, cluster_axis)
    # Every device sends size - 1 partials of its 4-tile chunk, once each.
    assert _fabric_bytes(counters) == mesh.get_num_devices() * 4 * TILE_BYTES * (size - 1)


def test_reduce_scatter_of_leading_dims_with_an_uneven_split_over_links(mesh):
    """dim 0 of (N, 32, 96): 3 output pages per member over the 2 links the 2x4 grid has room for
    (per link and direction a mux core and a worker): 2 and 1; and dim 1 of (32, 96 N): 3 tile
    columns per member, 2 and 1."""
    cluster_axis = 1 if mesh.shape[1] > 1 else 0
    size = mesh.shape[cluster_axis]
    shards = _shards(mesh, (size, 32, 96), seed=25)
    _check_reduce_scatter(ttnn.reduce_scatter(_to_mesh(mesh, shards), 0, cluster_axis=cluster_axis), shards,
                          tuple(mesh.shape), 0, cluster_axis)  # fmt: skip
    wide = _shards(mesh, (32, 96 * size), seed=26)
    _check_reduce_scatter(ttnn.reduce_scatter(_to_mesh(mesh, wide), 1, cluster_axis=cluster_axis), wide,
                          tuple(mesh.shape), 1, cluster_axis)  # fmt: skip


def test_reduce_scatter_does_not_depend_on_fabric_delays(mesh):
    cluster_axis = 1 if mesh.shape[1] > 1 else 0
    size = mesh.shape[cluster_axis]
    shards = _shards(mesh, (32, 32 * size * 2), seed=30)
    results = []
    for seed in (1, 2, 3):
        mesh.set_fabric_seed(seed)
        out = ttnn.reduce_scatter(_to_mesh(mesh, shards), 1, cluster_axis=cluster_axis, num_links=2)
        results.append(device_shards(out))
    want = _line_order_sum(shards, tuple(mesh.shape), 1, cluster_axis)
    for run in results:
        for got, expected in zip(run, want):
            assert torch.equal(got, expected)


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
            summed = ttnn.reduce_scatter(_to_mesh(m, shards), 1, cluster_axis=axis)
            _check_reduce_scatter(summed, shards, (2, 4), 1, axis)
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
        with pytest.raises(ValueError, match="num_links 3 needs 12 cores, the grid has 4"):
            ttnn.reduce_scatter(_to_mesh(m, _shards(m, (32, 64), seed=51)), 1, cluster_axis=1, num_links=3)
    finally:
        ttnn.close_mesh_device(m)


def test_row_major_reduce_scatter_takes_the_counted_host_path():
    """ttnn's line reduce_scatter takes tiles only; a ROW_MAJOR tensor is summed on the host, in fp32
    in ascending position, rounded once."""
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 4), grid=(2, 2))
    try:
        shards = _shards(m, (8, 4 * 32), seed=55)
        before = ttnn.host_traffic()
        out = ttnn.reduce_scatter(_to_mesh(m, shards, ttnn.ROW_MAJOR_LAYOUT), 1, cluster_axis=1)
        assert (ttnn.host_traffic() - before).host_computations == 1
        for got, expected in zip(device_shards(out), golden.reduce_scatter(shards, (1, 4), 1, 1)):
            assert torch.equal(got, expected.to(torch.bfloat16))
    finally:
        ttnn.close_mesh_device(m)


def test_line_all_gather_carries_each_page_once_per_link():
    """1x8 line, 2 pages per device: a page is multicast along each side of the line, so the link
    from position k + 1 to k carries the pages of the 7 - k members beyond it once each (not once
    per member they are for), plus the line barrier's increments to the members on its far side."""
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 8), grid=(2, 2))
    try:
        shards = _shards(m, (32, 64), seed=60)
        out = ttnn.all_gather(_to_mesh(m, shards), 0, cluster_axis=1, num_links=1)
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


def test_line_collectives_cross_each_link_once_per_slice_and_direction():
    """1x8 line, 2 links (a 4x4 grid: 2 workers per direction and link, as ttnn picks them),
    (64, 8 x 64) partials (4 tiles per slice): the reduce_scatter link from
    position k to k + 1 carries the partials of the 7 - k slices of members k + 1 .. 7 once each, the
    link back from k + 1 to k those of slices 0 .. k; the all_gather of (64, 64) carries the same
    counts of whole inputs. So the links next to the ends carry 7/8 of the tensor, the middle ones 4/8."""
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 8), grid=(4, 4))
    slice_bytes = 4 * TILE_BYTES
    try:
        partials = _shards(m, (64, 8 * 64), seed=70)
        out = ttnn.reduce_scatter(_to_mesh(m, partials), 1, cluster_axis=1, num_links=2)
        _check_reduce_scatter(out, partials, (1, 8), 1, 1)
        reduce_links = _link_payload(ttnn.last_run_counters())
        gathered = ttnn.all_gather(_to_mesh(m, _shards(m, (64, 64), seed=71)), 1, cluster_axis=1, num_links=2)
        gather_links = _link_payload(ttnn.last_run_counters())
        assert list(gathered.shape) == [64, 8 * 64]
    finally:
        ttnn.close_mesh_device(m)
    assert set(reduce_links) == {(k, k + 1) for k in range(7)} | {(k + 1, k) for k in range(7)}
    for k in range(7):
        assert reduce_links[(k, k + 1)] == (7 - k) * slice_bytes
        assert reduce_links[(k + 1, k)] == (k + 1) * slice_bytes
        assert gather_links[(k, k + 1)] == (k + 1) * slice_bytes
        assert gather_links[(k + 1, k)] == (7 - k) * slice_bytes


def test_a_grid_too_small_for_a_link_is_named():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), grid=(1, 2))
    try:
        with pytest.raises(ValueError, match="a fabric link needs 4 cores here, the grid has 2"):
            ttnn.reduce_scatter(_to_mesh(m, _shards(m, (32, 64), seed=80)), 1, cluster_axis=1)
    finally:
        ttnn.close_mesh_device(m)
