"""Mesh mappers and composers with ttnn 0.81.1's semantics.

Devices are numbered row-major over the mesh (device k sits at (k // cols, k % cols)).
- ReplicateTensorToMesh: every device gets the whole tensor.
- ShardTensorToMesh(mesh, dim): the tensor is cut into num_devices equal chunks
  along dim; device k gets chunk k.
- ShardTensor2dMesh(mesh, mesh_shape, dims=(row_dim, col_dim)): device (r, c) gets
  chunk r along row_dim and chunk c along col_dim; None replicates along that mesh axis.
- ConcatMeshToTensor(mesh, dim): concatenates all device tensors (row-major) along dim.
- ConcatMesh2dToTensor(mesh, mesh_shape, dims=(row_dim, col_dim)): concatenates each
  mesh row's tensors along col_dim, then the rows along row_dim.
Chunks must be equal (ttnn requires one shard shape); an uneven split is a ValueError.
Mappers return shards in device order; composers take them in device order.
"""

from __future__ import annotations

from typing import Sequence

import torch

from ttnn_moe.emu.types import MeshShape


def _normalized_dim(dim, rank: int, what: str) -> int:
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{what} must be an int, got {dim!r}")
    if not -rank <= dim < rank:
        raise ValueError(f"{what} {dim} is out of range for a rank-{rank} tensor")
    return dim % rank


def _chunks(t: torch.Tensor, dim: int, n: int) -> list[torch.Tensor]:
    if t.shape[dim] % n != 0:
        raise ValueError(
            f"dim {dim} of size {t.shape[dim]} does not split evenly into {n} shards (tensor shape {list(t.shape)})"
        )
    return list(torch.chunk(t, n, dim=dim))


def _check_mesh_shape(mesh_device, mesh_shape) -> MeshShape:
    mesh_shape = MeshShape(*mesh_shape)
    if tuple(mesh_shape) != tuple(mesh_device.shape):
        raise ValueError(f"mesh_shape {tuple(mesh_shape)} must equal the mesh's shape {tuple(mesh_device.shape)}")
    return mesh_shape


def _check_dims_pair(dims) -> tuple:
    try:
        row_dim, col_dim = dims
    except (TypeError, ValueError):
        raise TypeError(f"dims must be a pair (row_dim, col_dim), got {dims!r}") from None
    return row_dim, col_dim


class ReplicateTensorToMesh:
    def __init__(self, mesh_device):
        self.mesh_device = mesh_device

    def map(self, t: torch.Tensor) -> list[torch.Tensor]:
        return [t] * self.mesh_device.get_num_devices()


class ShardTensorToMesh:
    def __init__(self, mesh_device, dim: int):
        self.mesh_device = mesh_device
        self.dim = dim

    def map(self, t: torch.Tensor) -> list[torch.Tensor]:
        dim = _normalized_dim(self.dim, t.dim(), "shard dim")
        return _chunks(t, dim, self.mesh_device.get_num_devices())


class ShardTensor2dMesh:
    def __init__(self, mesh_device, mesh_shape, dims):
        self.mesh_device = mesh_device
        self.mesh_shape = _check_mesh_shape(mesh_device, mesh_shape)
        self.dims = _check_dims_pair(dims)

    def map(self, t: torch.Tensor) -> list[torch.Tensor]:
        rows, cols = self.mesh_shape
        row_dim, col_dim = (None if d is None else _normalized_dim(d, t.dim(), "shard dim") for d in self.dims)
        if row_dim is not None and row_dim == col_dim:
            raise ValueError(f"dims {self.dims} shard one tensor dim over both mesh axes")
        row_parts = [t] * rows if row_dim is None else _chunks(t, row_dim, rows)
        shards = []
        for part in row_parts:
            shards += [part] * cols if col_dim is None else _chunks(part, col_dim, cols)
        return shards


class ConcatMeshToTensor:
    def __init__(self, mesh_device, dim: int):
        self.mesh_device = mesh_device
        self.dim = dim

    def compose(self, shards: Sequence[torch.Tensor]) -> torch.Tensor:
        dim = _normalized_dim(self.dim, shards[0].dim(), "concat dim")
        return torch.cat(list(shards), dim=dim)


class ConcatMesh2dToTensor:
    def __init__(self, mesh_device, mesh_shape, dims):
        self.mesh_device = mesh_device
        self.mesh_shape = _check_mesh_shape(mesh_device, mesh_shape)
        self.dims = _check_dims_pair(dims)

    def compose(self, shards: Sequence[torch.Tensor]) -> torch.Tensor:
        rows, cols = self.mesh_shape
        if len(shards) != rows * cols:
            raise ValueError(f"{len(shards)} shards do not fill a {rows}x{cols} mesh")
        row_dim, col_dim = (_normalized_dim(d, shards[0].dim(), "concat dim") for d in self.dims)
        if row_dim == col_dim:
            raise ValueError(f"dims {self.dims} concatenate both mesh axes along one tensor dim")
        mesh_rows = [torch.cat(list(shards[r * cols : (r + 1) * cols]), dim=col_dim) for r in range(rows)]
        return torch.cat(mesh_rows, dim=row_dim)
