"""The collectives all_gather and reduce_scatter on mesh tensors, with ttnn 0.81.1's signatures.

The group of a device is the whole mesh (row-major) when cluster_axis is None, else the
devices that share its coordinate on the other axis (cluster_axis 0: its mesh column,
ordered by row; 1: its mesh row, ordered by column).

A group that is a line of the mesh (a cluster_axis, or a 1xN / Nx1 mesh) and a tensor
whose pages line up with the split run as device programs on the emulated fabric
(line_ccl.py: ttnn's line algorithms over num_links links, by default every link between
neighbours). There reduce_scatter adds as it forwards, partials rounded to the input format
at every hop in a fixed order (docs/emulated_collectives.md). Otherwise they are HOST
BUILT-INS, counted in host_traffic: every device's shard is read, combined on the host with
torch and written back; reduce_scatter then sums in fp32 in ascending group position and
rounds once. topology, subdevice_id, chunks_per_sync and the other tuning options are
accepted for ttnn's signature; the emulated mesh's topology rules.
"""

from __future__ import annotations

from typing import Optional

import torch

from ttnn_moe.emu.device import MeshDevice
from ttnn_moe.emu.host import check_tensor, compute_values, place_like
from ttnn_moe.emu.host_traffic import count_host_computation
from ttnn_moe.emu.line_ccl import all_gather_on_fabric, gather_pages, reduce_scatter_on_fabric, scatter_pages
from ttnn_moe.emu.tensor import Tensor, allocate_tensor_on_device
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


def _line_axis(mesh_shape, cluster_axis: Optional[int]) -> Optional[int]:
    """The mesh axis the group runs along, or None when the group is not a line of the mesh."""
    if cluster_axis is not None:
        return cluster_axis
    rows, cols = mesh_shape
    return 1 if rows == 1 else 0 if cols == 1 else None


def _check(t: Tensor, dim: int, cluster_axis, op: str) -> int:
    check_tensor(t, "input_tensor")
    if not isinstance(t.device(), MeshDevice):
        raise ValueError(f"{op} needs a tensor on a mesh device, got {t!r}")
    rank = len(t.shape)
    if isinstance(dim, bool) or not isinstance(dim, int) or not -rank <= dim < rank:
        raise ValueError(f"{op}: dim {dim!r} is out of range for shape {list(t.shape)}")
    groups(t.device().shape, cluster_axis)  # validates cluster_axis
    return dim % rank


def _output(t: Tensor, dim: int, size: int, memory_config, output_tensor: Optional[Tensor]) -> Tensor:
    shape = list(t.shape)
    shape[dim] = size
    if output_tensor is None:
        return allocate_tensor_on_device(shape, t.dtype, t.layout, t.device(), memory_config or t.memory_config())
    check_tensor(output_tensor, "output_tensor")
    if (list(output_tensor.shape), output_tensor.dtype, output_tensor.layout) != (shape, t.dtype, t.layout):
        raise ValueError(f"output_tensor must be {shape} {t.dtype.name} {t.layout.name}, got {output_tensor!r}")
    return output_tensor


def _host_path_takes_no_output_tensor(output_tensor: Optional[Tensor], op: str) -> None:
    if output_tensor is not None:
        raise ValueError(
            f"{op}: output_tensor is supported where the op runs on the fabric (a mesh line, a split along "
            "whole pages); this call takes the host path"
        )


def all_gather(
    input_tensor: Tensor,
    dim: int,
    *,
    cluster_axis: Optional[int] = None,
    memory_config: Optional[MemoryConfig] = None,
    output_tensor: Optional[Tensor] = None,
    subdevice_id=None,
    sub_core_grids=None,
    num_links: Optional[int] = None,
    topology=None,
    chunks_per_sync: Optional[int] = None,
    num_workers_per_link: Optional[int] = None,
    num_buffers_per_channel: Optional[int] = None,
    use_l1_small_for_semaphores: bool = False,
) -> Tensor:
    """Every device gets its group's shards concatenated along dim, in group order."""
    dim = _check(input_tensor, dim, cluster_axis, "all_gather")
    mesh_shape = input_tensor.device().shape
    axis = _line_axis(mesh_shape, cluster_axis)
    size = len(groups(mesh_shape, cluster_axis)[0])
    if axis is not None and gather_pages(input_tensor, dim):
        out = _output(input_tensor, dim, input_tensor.shape[dim] * size, memory_config, output_tensor)
        return all_gather_on_fabric(input_tensor, out, dim, axis, num_links)
    _host_path_takes_no_output_tensor(output_tensor, "all_gather")
    count_host_computation("all_gather")
    shards = compute_values(input_tensor)
    out = [None] * len(shards)
    for group in groups(mesh_shape, cluster_axis):
        gathered = torch.cat([shards[i] for i in group], dim=dim)
        for i in group:
            out[i] = gathered
    return place_like(out, input_tensor, memory_config=memory_config)


def reduce_scatter(
    input_tensor: Tensor,
    dim: int,
    *,
    cluster_axis: Optional[int] = None,
    subdevice_id=None,
    memory_config: Optional[MemoryConfig] = None,
    intermediate_memory_config: Optional[MemoryConfig] = None,
    output_tensor: Optional[Tensor] = None,
    num_links: Optional[int] = None,
    topology=None,
    chunks_per_sync: Optional[int] = None,
    num_workers_per_link: Optional[int] = None,
    num_buffers_per_channel: Optional[int] = None,
    compute_kernel_config=None,
    use_l1_small_for_semaphores: bool = False,
) -> Tensor:
    """The group's sum split along dim; the device at position i of its group keeps chunk i
    (summation order and rounding: the module docstring)."""
    dim = _check(input_tensor, dim, cluster_axis, "reduce_scatter")
    if input_tensor.dtype.is_integer:
        raise TypeError(f"reduce_scatter needs a floating-point tensor, got {input_tensor.dtype.name}")
    mesh_shape = input_tensor.device().shape
    size = len(groups(mesh_shape, cluster_axis)[0])
    if input_tensor.shape[dim] % size != 0:
        raise ValueError(
            f"reduce_scatter: dim {dim} of size {input_tensor.shape[dim]} does not split into {size} devices"
        )
    axis = _line_axis(mesh_shape, cluster_axis)
    if axis is not None and scatter_pages(input_tensor, dim, size):
        out = _output(input_tensor, dim, input_tensor.shape[dim] // size, memory_config, output_tensor)
        return reduce_scatter_on_fabric(input_tensor, out, dim, axis, num_links)
    _host_path_takes_no_output_tensor(output_tensor, "reduce_scatter")
    count_host_computation("reduce_scatter")
    shards = compute_values(input_tensor)
    out = [None] * len(shards)
    for group in groups(mesh_shape, cluster_axis):
        total = shards[group[0]].clone()
        for i in group[1:]:
            total += shards[i]
        for i, chunk in zip(group, torch.chunk(total, size, dim=dim)):
            out[i] = chunk
    return place_like(out, input_tensor, memory_config=memory_config)
