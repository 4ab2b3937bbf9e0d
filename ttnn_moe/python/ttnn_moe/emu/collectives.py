"""Host built-ins, not kernels: the collectives all_gather and reduce_scatter on mesh tensors.

They read every device's shard, combine them on the host with torch and write
each device's result back, with ttnn's semantics: the group of a device is the
whole mesh (row-major) when cluster_axis is None, else the devices that share
its coordinate on the other axis (cluster_axis 0: its mesh column, ordered by
row; 1: its mesh row, ordered by column). The fabric options num_links and
topology are accepted for ttnn's signature and have no effect here.
"""

from __future__ import annotations

from typing import Optional

import torch

from ttnn_moe.emu.device import MeshDevice
from ttnn_moe.emu.host import check_tensor, compute_values, place_like
from ttnn_moe.emu.tensor import Tensor
from ttnn_moe.emu.types import MemoryConfig


def groups(mesh_shape, cluster_axis: Optional[int]) -> list[list[int]]:
    """Device indices (row-major) of each communication group, each group in collective order."""
    rows, cols = mesh_shape
    if cluster_axis is None:
        return [list(range(rows * cols))]
    if cluster_axis == 0:
        return [[r * cols + c for r in range(rows)] for c in range(cols)]
    if cluster_axis == 1:
        return [[r * cols + c for c in range(cols)] for r in range(rows)]
    raise ValueError(f"cluster_axis must be None, 0 or 1, got {cluster_axis!r}")


def _mesh_values(t: Tensor, dim: int, op: str):
    check_tensor(t, "input_tensor")
    if not isinstance(t.device(), MeshDevice):
        raise ValueError(f"{op} needs a tensor on a mesh device, got {t!r}")
    rank = len(t.shape)
    if not isinstance(dim, int) or not -rank <= dim < rank:
        raise ValueError(f"{op}: dim {dim!r} is out of range for shape {list(t.shape)}")
    return compute_values(t), dim % rank


def all_gather(
    input_tensor: Tensor,
    dim: int,
    *,
    cluster_axis: Optional[int] = None,
    memory_config: Optional[MemoryConfig] = None,
    num_links: Optional[int] = None,
    topology=None,
) -> Tensor:
    """Host built-in, not a kernel: every device gets its group's shards concatenated along dim."""
    shards, dim = _mesh_values(input_tensor, dim, "all_gather")
    out = [None] * len(shards)
    for group in groups(input_tensor.device().shape, cluster_axis):
        gathered = torch.cat([shards[i] for i in group], dim=dim)
        for i in group:
            out[i] = gathered
    return place_like(out, input_tensor, memory_config=memory_config)


def reduce_scatter(
    input_tensor: Tensor,
    dim: int,
    *,
    cluster_axis: Optional[int] = None,
    memory_config: Optional[MemoryConfig] = None,
    num_links: Optional[int] = None,
    topology=None,
) -> Tensor:
    """Host built-in, not a kernel: the group's sum (fp32, in group order), split along dim;
    the device at position i of its group keeps chunk i."""
    shards, dim = _mesh_values(input_tensor, dim, "reduce_scatter")
    if input_tensor.dtype.is_integer:
        raise TypeError(f"reduce_scatter needs a floating-point tensor, got {input_tensor.dtype.name}")
    out = [None] * len(shards)
    for group in groups(input_tensor.device().shape, cluster_axis):
        if input_tensor.shape[dim] % len(group) != 0:
            raise ValueError(
                f"reduce_scatter: dim {dim} of size {input_tensor.shape[dim]} does not split into {len(group)} devices"
            )
        total = shards[group[0]].clone()
        for i in group[1:]:
            total += shards[i]
        for i, chunk in zip(group, torch.chunk(total, len(group), dim=dim)):
            out[i] = chunk
    return place_like(out, input_tensor, memory_config=memory_config)
