"""all_gather / reduce_scatter against torch.cat / torch.sum over explicitly listed groups."""

import pytest
import torch
from ttnn_moe.golden import all_gather, reduce_scatter
from ttnn_moe.testing import assert_equal_exact

MESHES = [(1, 8), (2, 4), (4, 8), (8, 8), (16, 8)]


def members(device, mesh_shape, cluster_axis):
    """Devices of `device`'s group by position: walk the axis with the other coordinate fixed."""
    rows, cols = mesh_shape
    row, col = divmod(device, cols)
    if cluster_axis == 0:
        return [r * cols + col for r in range(rows)]
    return [row * cols + c for c in range(cols)]


def per_device(mesh_shape, shape, seed, dtype=torch.bfloat16):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*shape, generator=g).to(dtype) for _ in range(mesh_shape[0] * mesh_shape[1])]


@pytest.mark.parametrize("mesh_shape", MESHES, ids=lambda m: f"{m[0]}x{m[1]}")
@pytest.mark.parametrize("cluster_axis", [0, 1])
@pytest.mark.parametrize("dim", [-1, 0])
def test_all_gather_concatenates_the_group(mesh_shape, cluster_axis, dim):
    tensors = per_device(mesh_shape, (1, 2, 3, 8), seed=sum(mesh_shape) + cluster_axis)
    got = all_gather(tensors, mesh_shape, dim, cluster_axis)
    for d, out in enumerate(got):
        expected = torch.cat([tensors[m] for m in members(d, mesh_shape, cluster_axis)], dim=dim)
        assert out.dtype == torch.bfloat16
        assert_equal_exact(expected, out, f"all_gather device {d}")


@pytest.mark.parametrize("mesh_shape", MESHES, ids=lambda m: f"{m[0]}x{m[1]}")
@pytest.mark.parametrize("cluster_axis", [0, 1])
def test_reduce_scatter_sums_then_splits(mesh_shape, cluster_axis):
    group_size = mesh_shape[cluster_axis]
    tensors = per_device(mesh_shape, (1, 1, 4, 16 * group_size), seed=sum(mesh_shape) * 3 + cluster_axis)
    got = reduce_scatter(tensors, mesh_shape, 3, cluster_axis)
    for d, out in enumerate(got):
        group = members(d, mesh_shape, cluster_axis)
        total = torch.stack([tensors[m].double() for m in group]).sum(0)
        width = total.shape[3] // group_size
        position = group.index(d)
        assert out.dtype == torch.float32 and out.shape == (1, 1, 4, width)
        chunk = total[..., position * width : (position + 1) * width]
        torch.testing.assert_close(out.double(), chunk, rtol=1e-6, atol=1e-6)


def test_reduce_scatter_adds_in_ascending_position_order():
    """fp32 addition is not associative, so the order is observable. Column c holds device d's
    value values[d][c]; left to right every column sums to 0, while other orders give 1 somewhere:
    column 0 catches (d0 + d2) + d1, column 1 catches (d2 + d1) + d0 and d0 + (d1 + d2)."""
    values = [torch.tensor([[1e8, 1.0, 1.0]]), torch.tensor([[1.0, -1e8, 1e8]]), torch.tensor([[-1e8, 1e8, -1e8]])]
    got = reduce_scatter(values, (3, 1), 1, 0)
    assert [t.tolist() for t in got] == [[[0.0]], [[0.0]], [[0.0]]]


def test_bad_inputs_raise():
    tensors = per_device((2, 4), (2, 6), seed=0)
    with pytest.raises(ValueError, match="cluster_axis must be 0 or 1, got -1"):
        all_gather(tensors, (2, 4), 0, -1)
    with pytest.raises(ValueError, match="dim 1 of size 6 is not divisible by the group size 4"):
        reduce_scatter(tensors, (2, 4), 1, 1)
    with pytest.raises(ValueError, match=r"dim 2 is outside \[-2, 2\)"):
        all_gather(tensors, (2, 4), 2, 0)
    with pytest.raises(ValueError, match="tensors has 8 entries, the mesh has 6 devices"):
        all_gather(tensors, (2, 3), 0, 0)
    with pytest.raises(ValueError, match=r"tensors\[2\] \(like tensors\[0\]\) must have shape \(2, 6\), got \(2, 5\)"):
        all_gather(tensors[:2] + [tensors[2][:, :5]] + tensors[3:], (2, 4), 0, 0)
    with pytest.raises(TypeError, match=r"tensors\[1\] has dtype torch.float32"):
        all_gather([tensors[0], tensors[1].float()] + tensors[2:], (2, 4), 0, 0)
