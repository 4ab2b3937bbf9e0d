"""Goldens of the CCLs the MoE layer uses around dispatch/combine: all_gather and reduce_scatter."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ttnn_moe.golden._validate import mesh_dims, require_axis, require_device_list, require_shape
from ttnn_moe.golden.mesh import axis_groups


def _check(tensors, mesh_shape, dim, cluster_axis) -> tuple[list[torch.Tensor], int]:
    """Same shape and dtype on every device; -> tensors and dim normalised to >= 0."""
    rows, cols = mesh_dims(mesh_shape)
    require_axis(cluster_axis)
    tensors = require_device_list(tensors, rows * cols, "tensors")
    for d, t in enumerate(tensors):
        require_shape(t, tensors[0].shape, f"tensors[{d}] (like tensors[0])")
        if t.dtype != tensors[0].dtype:
            raise TypeError(f"tensors[{d}] has dtype {t.dtype}, tensors[0] has {tensors[0].dtype}")
    rank = tensors[0].dim()
    if isinstance(dim, bool) or not isinstance(dim, int) or not -rank <= dim < rank:
        raise ValueError(f"dim {dim!r} is outside [{-rank}, {rank}) for shape {tuple(tensors[0].shape)}")
    return tensors, dim % rank


def all_gather(tensors: list[torch.Tensor], mesh_shape: Sequence[int], dim: int, cluster_axis: int) -> list[torch.Tensor]:
    """Each device gets its group's tensors concatenated along `dim` in position order (dtype kept)."""
    tensors, dim = _check(tensors, mesh_shape, dim, cluster_axis)
    out: list[torch.Tensor | None] = [None] * len(tensors)
    for group in axis_groups(mesh_shape, cluster_axis):
        gathered = torch.cat([tensors[d] for d in group], dim=dim)
        for d in group:
            out[d] = gathered.clone()
    return out


def reduce_scatter(tensors: list[torch.Tensor], mesh_shape: Sequence[int], dim: int, cluster_axis: int) -> list[torch.Tensor]:
    """fp32 sum over the group in ascending position, split into D chunks along `dim`; chunk i goes
    to the device at position i."""
    tensors, dim = _check(tensors, mesh_shape, dim, cluster_axis)
    group_size = mesh_shape[cluster_axis]
    if tensors[0].shape[dim] % group_size:
        raise ValueError(f"dim {dim} of size {tensors[0].shape[dim]} is not divisible by the group size {group_size}")
    out: list[torch.Tensor | None] = [None] * len(tensors)
    for group in axis_groups(mesh_shape, cluster_axis):
        total = tensors[group[0]].float().clone()
        for d in group[1:]:
            total += tensors[d].float()
        for d, chunk in zip(group, total.split(tensors[0].shape[dim] // group_size, dim=dim)):
            out[d] = chunk.clone()
    return out
