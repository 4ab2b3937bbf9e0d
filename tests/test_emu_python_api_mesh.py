"""ttnn_moe.emu on meshes: every mapper and composer on (1,8), (2,4), (4,8) against explicit
per-device slicing, lockstep buffer addresses, and bad mesh arguments."""

import pytest
import torch
import ttnn_moe.emu as ttnn

MESH_SHAPES = [(1, 8), (2, 4), (4, 8)]


@pytest.fixture(scope="module", params=MESH_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def mesh(request):
    m = ttnn.open_mesh_device(ttnn.MeshShape(*request.param), grid=(2, 2))
    yield m
    ttnn.close_mesh_device(m)


def _slice(x, dim, index, parts):
    """Part `index` of `parts` equal parts of x along dim, by explicit index ranges."""
    size = x.shape[dim] // parts
    return x.narrow(dim, index * size, size)


def _per_device(t):
    return ttnn.tensor.device_shards(t)


def _sample(shape, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(torch.bfloat16)


def test_replicate(mesh):
    x = _sample((2, 40, 48))
    t = ttnn.from_torch(
        x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh)
    )
    shards = _per_device(t)
    assert len(shards) == mesh.get_num_devices()
    assert all(torch.equal(s, x) for s in shards)
    back = ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
    assert torch.equal(back, torch.cat([x] * mesh.get_num_devices(), dim=0))


def test_no_mapper_replicates_on_a_mesh(mesh):
    x = torch.arange(6, dtype=torch.int32).reshape(2, 3)
    t = ttnn.from_torch(x, device=mesh)
    assert all(torch.equal(s, x) for s in _per_device(t))


@pytest.mark.parametrize("dim", [0, -1, 1], ids=lambda d: f"dim{d}")
def test_shard_and_concat_1d(mesh, dim):
    n = mesh.get_num_devices()
    x = _sample((n * 2, 3 * n), seed=1)
    t = ttnn.from_torch(
        x,
        dtype=ttnn.bfloat16,
        layout=ttnn.ROW_MAJOR_LAYOUT,
        device=mesh,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=dim),
    )
    shards = _per_device(t)
    assert t.shape == shards[0].shape
    for k, shard in enumerate(shards):
        assert torch.equal(shard, _slice(x, dim % 2, k, n))
    assert torch.equal(ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=dim)), x)
    assert torch.equal(torch.cat(torch.chunk(x, n, dim=dim), dim=dim), x)


@pytest.mark.parametrize("dims", [(0, 2), (2, 1), (None, 2), (1, None), (-1, -3)], ids=str)
def test_shard_2d_and_concat_2d(mesh, dims):
    rows, cols = mesh.shape
    x = _sample((rows * cols * 2, cols * 3, rows * cols * 4), seed=2)
    t = ttnn.from_torch(
        x,
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=mesh,
        mesh_mapper=ttnn.ShardTensor2dMesh(mesh, mesh_shape=tuple(mesh.shape), dims=dims),
    )
    shards = _per_device(t)
    row_dim, col_dim = dims
    for r in range(rows):
        for c in range(cols):
            expected = x
            if row_dim is not None:
                expected = _slice(expected, row_dim % 3, r, rows)
            if col_dim is not None:
                expected = _slice(expected, col_dim % 3, c, cols)
            assert torch.equal(shards[r * cols + c], expected), (r, c)
    if None not in dims:
        composer = ttnn.ConcatMesh2dToTensor(mesh, mesh_shape=tuple(mesh.shape), dims=dims)
        assert torch.equal(ttnn.to_torch(t, mesh_composer=composer), x)


def test_concat_2d_of_replicated_axis_stacks_copies(mesh):
    rows, cols = mesh.shape
    x = _sample((4, cols * 2), seed=4)
    t = ttnn.from_torch(
        x, dtype=ttnn.bfloat16, device=mesh, mesh_mapper=ttnn.ShardTensor2dMesh(mesh, tuple(mesh.shape), dims=(None, 1))
    )
    back = ttnn.to_torch(t, mesh_composer=ttnn.ConcatMesh2dToTensor(mesh, tuple(mesh.shape), dims=(0, 1)))
    assert torch.equal(back, torch.cat([x] * rows, dim=0))


def test_mesh_tensor_has_one_address_and_to_arg(mesh):
    t = ttnn.from_torch(torch.zeros(64, 64), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh)
    address = t.buffer_address()
    assert t.to_arg().address == address
    for chip in mesh.chips:
        assert chip.read(address, t.page_size, t.page_size).size == t.page_size


def test_uneven_shard_is_an_error(mesh):
    n = mesh.get_num_devices()
    with pytest.raises(ValueError, match=f"size {n + 1} does not split evenly into {n}"):
        ttnn.from_torch(
            torch.zeros(n + 1, 4), dtype=ttnn.float32, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0)
        )


def test_multi_device_to_torch_needs_a_composer(mesh):
    t = ttnn.from_torch(torch.zeros(4, 4), dtype=ttnn.float32, device=mesh)
    with pytest.raises(ValueError, match="mesh_composer"):
        ttnn.to_torch(t)


def test_bad_mesh_arguments(mesh):
    rows, cols = mesh.shape
    with pytest.raises(ValueError, match="must equal the mesh's shape"):
        ttnn.ShardTensor2dMesh(mesh, mesh_shape=(rows * cols, 1) if cols > 1 else (1, rows), dims=(0, 1))
    with pytest.raises(ValueError, match="out of range"):
        ttnn.from_torch(
            torch.zeros(8, 8), dtype=ttnn.float32, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=2)
        )
    with pytest.raises(ValueError, match="both mesh axes"):
        ttnn.ShardTensor2dMesh(mesh, tuple(mesh.shape), dims=(1, 1)).map(torch.zeros(8, 8))
    with pytest.raises(ValueError, match="mesh_mapper is for"):
        other = ttnn.open_device(device_id=7)
        ttnn.from_torch(
            torch.zeros(8, 8), dtype=ttnn.float32, device=other, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh)
        )


def test_mesh_shape_validation():
    with pytest.raises(ValueError, match=r"\(0, 4\)"):
        ttnn.MeshShape(0, 4)
    assert ttnn.MeshShape(4, 8).mesh_size() == 32 and tuple(ttnn.MeshShape((2, 4))) == (2, 4)
