"""Host built-ins of ttnn_moe.emu against float64 torch formulations: matmul, linear, add, mul,
silu, sigmoid, topk, all_gather, reduce_scatter, to_layout, reshape, typecast."""

import pytest
import torch
import ttnn_moe.emu as ttnn
from emu_fixtures import emu_device_fixture, emu_mesh_fixture
from ttnn_moe.emu.tensor import device_shards

BF16_RTOL = 2.0**-8  # one bfloat16 rounding


device = emu_device_fixture(grid=(2, 2))
mesh = emu_mesh_fixture(2, 4, grid=(2, 2))


def _rand(*shape, seed=0, scale=1.0):
    return (torch.randn(shape, generator=torch.Generator().manual_seed(seed)) * scale).to(torch.bfloat16)


def _tile(x, device, dtype=ttnn.bfloat16):
    return ttnn.from_torch(x, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device)


def _close(actual, golden, rtol=BF16_RTOL, atol=1e-3):
    torch.testing.assert_close(actual.to(torch.float64), golden, rtol=rtol, atol=atol)


def test_matmul_and_transpose(device):
    a, b = _rand(2, 40, 64, seed=1), _rand(96, 64, seed=2)
    out = ttnn.matmul(_tile(a, device), _tile(b, device), transpose_b=True)
    assert out.layout is ttnn.TILE_LAYOUT and out.dtype is ttnn.bfloat16 and out.shape == (2, 40, 96)
    _close(ttnn.to_torch(out), a.double() @ b.double().T)
    out32 = ttnn.matmul(_tile(a, device), _tile(b.T.contiguous(), device), dtype=ttnn.float32)
    assert out32.dtype is ttnn.float32
    _close(ttnn.to_torch(out32), a.double() @ b.double().T, rtol=1e-5, atol=1e-5)


def test_linear_with_bias_and_activation(device):
    x, w, bias = _rand(33, 64, seed=3), _rand(64, 40, seed=4), _rand(1, 40, seed=5)
    out = ttnn.linear(_tile(x, device), _tile(w, device), bias=_tile(bias, device), activation="silu")
    pre = x.double() @ w.double() + bias.double()
    _close(ttnn.to_torch(out), pre * torch.sigmoid(pre))


def test_matmul_with_bfloat8_b_weights(device):
    x, w = _rand(32, 64, seed=16), torch.randn(64, 64, generator=torch.Generator().manual_seed(17))
    wt = _tile(w, device, dtype=ttnn.bfloat8_b)
    quantized = ttnn.to_torch(wt).double()  # the weights as stored
    assert not torch.equal(quantized, w.double())
    _close(ttnn.to_torch(ttnn.matmul(_tile(x, device), wt)), x.double() @ quantized)


def test_matmul_runs_per_device_on_a_mesh(mesh):
    x = _rand(8, 32, 64, seed=6)
    w = _rand(8, 64, 32, seed=7)
    shard = ttnn.ShardTensorToMesh(mesh, dim=0)
    xt = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=shard)
    wt = ttnn.from_torch(w, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=shard)
    out = ttnn.to_torch(ttnn.matmul(xt, wt), mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
    _close(out, torch.bmm(x.double(), w.double()))


def test_matmul_errors(device):
    a = _tile(_rand(32, 64), device)
    with pytest.raises(ValueError, match=r"inner dims differ: \[32, 64\] @ \[32, 64\]"):
        ttnn.matmul(a, a)
    row_major = ttnn.from_torch(_rand(64, 32), dtype=ttnn.bfloat16, device=device)
    with pytest.raises(ValueError, match="TILE_LAYOUT.*ROW_MAJOR"):
        ttnn.matmul(a, row_major)
    with pytest.raises(ValueError, match="activation.*'gelu'"):
        ttnn.linear(a, a, transpose_b=True, activation="gelu")


def test_add_mul_broadcast_and_scalars(device):
    a, b = _rand(2, 40, 64, seed=8), _rand(1, 64, seed=9)
    ta, tb = _tile(a, device), _tile(b, device)
    _close(ttnn.to_torch(ttnn.add(ta, tb)), a.double() + b.double())
    _close(ttnn.to_torch(ttnn.mul(ta, tb)), a.double() * b.double())
    _close(ttnn.to_torch(ttnn.mul(ta, 2.5)), a.double() * 2.5)
    ints = torch.randint(-1000, 1000, (5, 7), generator=torch.Generator().manual_seed(10), dtype=torch.int32)
    ti = ttnn.from_torch(ints, dtype=ttnn.int32, device=device)
    assert torch.equal(ttnn.to_torch(ttnn.add(ti, ti)), ints * 2)
    with pytest.raises(ValueError, match=r"\[2, 40, 64\] and \[1, 63\]"):
        ttnn.add(ta, _tile(_rand(1, 63), device))
    with pytest.raises(TypeError, match="cannot mix bfloat16 and int32"):
        ttnn.add(ta, ti)


def test_silu_and_sigmoid(device):
    x = _rand(3, 50, 70, seed=11, scale=4.0)
    t = _tile(x, device)
    xd = x.double()
    _close(ttnn.to_torch(ttnn.sigmoid(t)), 1.0 / (1.0 + torch.exp(-xd)))
    _close(ttnn.to_torch(ttnn.silu(t)), xd / (1.0 + torch.exp(-xd)))
    with pytest.raises(TypeError, match="uint32"):
        ttnn.silu(ttnn.from_torch(torch.ones(4, dtype=torch.int64), device=device))


def test_topk_values_indices_and_dtypes(device):
    g = torch.Generator().manual_seed(12)
    # Distinct integers of magnitude <= 100: exact in bfloat16, so no ties.
    x = (torch.stack([torch.randperm(200, generator=g) for _ in range(4)]) - 100).to(torch.bfloat16)
    values, indices = ttnn.topk(_tile(x, device), k=8)
    assert values.dtype is ttnn.bfloat16 and indices.dtype is ttnn.uint16
    assert values.layout is ttnn.TILE_LAYOUT and indices.layout is ttnn.TILE_LAYOUT
    golden_values, golden_indices = torch.topk(x.double(), 8)
    assert torch.equal(ttnn.to_torch(values).double(), golden_values)
    assert torch.equal(ttnn.to_torch(indices).to(torch.int64), golden_indices)
    smallest, _ = ttnn.topk(_tile(x, device), k=3, largest=False)
    assert torch.equal(ttnn.to_torch(smallest).double(), torch.topk(x.double(), 3, largest=False).values)
    _, wide = ttnn.topk(_tile(x.float(), device, dtype=ttnn.float32), k=2)
    assert wide.dtype is ttnn.uint32


def test_topk_ties_go_to_the_lowest_index(device):
    x = torch.tensor([[1.0, 3.0, 3.0, 2.0, 3.0]]).to(torch.bfloat16)
    _, indices = ttnn.topk(_tile(x, device), k=4)
    assert ttnn.to_torch(indices).to(torch.int64).tolist() == [[1, 2, 4, 3]]
    with pytest.raises(ValueError, match=r"k must be in \[1, 5\], got 6"):
        ttnn.topk(_tile(x, device), k=6)


def _mesh_blocks(mesh, seed, dtype=torch.float32):
    """A tensor whose block k (of 8, along dim 0) lives on device k, and those blocks."""
    x = torch.randn(8 * 2, 32, 16, generator=torch.Generator().manual_seed(seed)).to(dtype)
    return x, list(torch.split(x, 2, dim=0))


@pytest.mark.parametrize("cluster_axis", [None, 0, 1])
def test_all_gather(mesh, cluster_axis):
    x, blocks = _mesh_blocks(mesh, seed=13, dtype=torch.bfloat16)
    t = ttnn.from_torch(x, dtype=ttnn.bfloat16, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
    out = device_shards(ttnn.all_gather(t, dim=2, cluster_axis=cluster_axis))
    rows, cols = mesh.shape
    for r in range(rows):
        for c in range(cols):
            if cluster_axis is None:
                members = [(rr, cc) for rr in range(rows) for cc in range(cols)]
            elif cluster_axis == 0:
                members = [(rr, c) for rr in range(rows)]
            else:
                members = [(r, cc) for cc in range(cols)]
            golden = torch.cat([blocks[rr * cols + cc] for rr, cc in members], dim=2)
            assert torch.equal(out[r * cols + c], golden), (r, c)


@pytest.mark.parametrize("cluster_axis", [None, 0, 1])
def test_reduce_scatter(mesh, cluster_axis):
    x, blocks = _mesh_blocks(mesh, seed=14)
    t = ttnn.from_torch(
        x, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0)
    )
    out = device_shards(ttnn.reduce_scatter(t, dim=1, cluster_axis=cluster_axis))
    rows, cols = mesh.shape
    for r in range(rows):
        for c in range(cols):
            if cluster_axis is None:
                members, position = [(rr, cc) for rr in range(rows) for cc in range(cols)], r * cols + c
            elif cluster_axis == 0:
                members, position = [(rr, c) for rr in range(rows)], r
            else:
                members, position = [(r, cc) for cc in range(cols)], c
            total = sum(blocks[rr * cols + cc].double() for rr, cc in members)
            part = 32 // len(members)
            golden = total[:, position * part : (position + 1) * part]
            _close(out[r * cols + c], golden, rtol=1e-6, atol=1e-5)


def test_collective_errors(device, mesh):
    on_one = ttnn.from_torch(torch.zeros(2, 8), dtype=ttnn.float32, device=device)
    with pytest.raises(ValueError, match="mesh device"):
        ttnn.all_gather(on_one, dim=0)
    t = ttnn.from_torch(torch.zeros(2, 6), dtype=ttnn.float32, device=mesh)
    with pytest.raises(ValueError, match="cluster_axis must be None, 0 or 1, got 2"):
        ttnn.all_gather(t, dim=0, cluster_axis=2)
    with pytest.raises(ValueError, match="size 6 does not split into 4 devices"):
        ttnn.reduce_scatter(t, dim=1, cluster_axis=1)


def test_to_layout_reshape_typecast(device):
    x = _rand(3, 45, 70, seed=15)
    rm = ttnn.from_torch(x, dtype=ttnn.bfloat16, device=device)
    tiled = ttnn.to_layout(rm, ttnn.TILE_LAYOUT)
    assert tiled.layout is ttnn.TILE_LAYOUT and tiled.padded_shape == (3, 64, 96)
    assert torch.equal(ttnn.to_torch(tiled), x)
    assert torch.equal(ttnn.to_torch(ttnn.to_layout(tiled, ttnn.ROW_MAJOR_LAYOUT)), x)

    reshaped = ttnn.reshape(tiled, (1, 3, -1, 35))
    assert reshaped.shape == (1, 3, 90, 35) and torch.equal(ttnn.to_torch(reshaped), x.reshape(1, 3, 90, 35))
    with pytest.raises(ValueError, match=r"cannot reshape \[3, 45, 70\] to \[7, 7\]"):
        ttnn.reshape(tiled, (7, 7))

    # Rows regrouped at tile-row boundaries under the same last dim keep every tile in place: a view.
    y = _rand(2, 64, 96, seed=16)
    tiles = ttnn.from_torch(y, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    before = ttnn.host_traffic()
    for shape in [(1, 1, 128, 96), (4, 32, 96), (1, 4, 32, 96)]:
        view = ttnn.reshape(tiles, shape)
        assert view.buffer_address() == tiles.buffer_address()
        assert torch.equal(ttnn.to_torch(view), y.reshape(shape))
    assert ttnn.host_traffic().host_computations == before.host_computations

    as_f32 = ttnn.typecast(tiled, ttnn.float32)
    assert torch.equal(ttnn.to_torch(as_f32), x.float())
    f = torch.tensor([[2.7, -2.7, 0.2]])
    as_int = ttnn.typecast(ttnn.from_torch(f, dtype=ttnn.float32, device=device), ttnn.int32)
    assert ttnn.to_torch(as_int).tolist() == [[2, -2, 0]]
    with pytest.raises(ValueError, match=r"-2 at index \[0, 1\].*uint32"):
        ttnn.typecast(ttnn.from_torch(f, dtype=ttnn.float32, device=device), ttnn.uint32)
    with pytest.raises(ValueError, match="bfloat8_b.*ROW_MAJOR"):
        ttnn.typecast(rm, ttnn.bfloat8_b)
