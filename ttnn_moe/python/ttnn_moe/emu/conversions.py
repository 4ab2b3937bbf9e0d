"""to_layout, reshape, typecast.

On device: to_layout between ROW_MAJOR and TILE of an element format (rows DRAM-aligned)
is a device program (layout_programs.py); a reshape that keeps the page contents (the
last dim of ROW_MAJOR, the last two of TILE) is a view of the same buffers. Everything
else is a HOST BUILT-IN, counted in host_traffic: the tensor is read from its device(s),
converted on the host and written back as a new tensor (a round trip through host memory,
where ttnn would run a device op). Values are preserved exactly except where the target
dtype rounds (typecast to bfloat16/bfloat8_b) or rejects them (an integer dtype's range).
"""

from __future__ import annotations

from typing import Optional

import torch

from ttnn_moe.emu.host import check_tensor, place_like
from ttnn_moe.emu.host_traffic import count_host_computation, host_builtin
from ttnn_moe.emu.layout_programs import converts_on_device, to_layout_on_device
from ttnn_moe.emu.pages import check_layout_supports, check_shape
from ttnn_moe.emu.tensor import Tensor, allocate_tensor_on_device, device_shards
from ttnn_moe.emu.types import (
    TILE_SIZE,
    DataType,
    Layout,
    MemoryConfig,
    check_dtype,
    check_layout,
    check_tensor_memory_config,
)


def to_layout(
    tensor: Tensor, layout: Layout, dtype: Optional[DataType] = None, memory_config: Optional[MemoryConfig] = None
) -> Tensor:
    """The same values in another page layout (and optionally dtype); the tensor itself when nothing changes."""
    check_tensor(tensor, "tensor")
    layout = check_layout(layout)
    new_dtype = tensor.dtype if dtype is None else check_dtype(dtype)
    check_layout_supports(new_dtype, layout)
    if layout is tensor.layout and new_dtype is tensor.dtype and memory_config is None:
        return tensor
    changes_layout = layout is not tensor.layout
    target = memory_config or tensor.memory_config()
    on_device = changes_layout and tensor.device() is not None and new_dtype is tensor.dtype
    if on_device and converts_on_device(tensor.dtype, tensor.memory_config()) and converts_on_device(new_dtype, target):
        output = allocate_tensor_on_device(list(tensor.shape), new_dtype, layout, tensor.device(), target)
        return to_layout_on_device(tensor, output)
    count_host_computation("to_layout")
    return place_like(device_shards(tensor), tensor, dtype=dtype, layout=layout, memory_config=memory_config)


def _resolved_shape(old_shape, shape) -> list[int]:
    """`shape` with its -1 resolved against `old_shape`, by torch's rules and errors (on the meta
    device: no values are touched)."""
    return list(torch.empty(tuple(old_shape), device="meta").reshape(tuple(shape)).shape)


def _keeps_pages(tensor: Tensor, shape) -> bool:
    """Whether the pages stay as they are: ROW_MAJOR keeps its rows; TILE keeps its last two dims, or its last
    dim with rows regrouped at tile-row boundaries (both row counts a multiple of the tile height, no padding)."""
    kept = 1 if tensor.layout is Layout.ROW_MAJOR else 2
    if len(shape) < kept or len(tensor.shape) < kept:
        return False
    if tuple(shape[-kept:]) == tuple(tensor.shape[-kept:]):
        return True
    old = tensor.shape
    return (
        tensor.layout is Layout.TILE
        and len(shape) >= 2
        and len(old) >= 2
        and shape[-1] == old[-1]
        and shape[-2] % TILE_SIZE == 0
        and old[-2] % TILE_SIZE == 0
    )


def reshape(tensor: Tensor, shape, *, memory_config: Optional[MemoryConfig] = None) -> Tensor:
    """The same values (row-major order) in a new logical shape; one dim may be -1."""
    check_tensor(tensor, "tensor")
    try:
        new_shape = check_shape(_resolved_shape(tensor.shape, shape))
    except (RuntimeError, TypeError) as e:
        raise ValueError(f"cannot reshape {list(tensor.shape)} to {list(shape)}") from e
    stays = memory_config is None or memory_config == tensor.memory_config()
    if tensor.device() is not None and stays and _keeps_pages(tensor, new_shape):
        # A view of the same buffers, wherever they live (DRAM, or L1 for tt-metal's L1 inputs).
        tensor._check_on_device()
        config = check_tensor_memory_config(tensor.memory_config(), new_shape)
        return Tensor(new_shape, tensor.dtype, tensor.layout, config, tensor.device(), tensor._buffers)
    count_host_computation("reshape")
    reshaped = [shard.reshape(tuple(new_shape)) for shard in device_shards(tensor)]
    return place_like(reshaped, tensor, memory_config=memory_config)


@host_builtin
def typecast(tensor: Tensor, dtype: DataType, *, memory_config: Optional[MemoryConfig] = None) -> Tensor:
    """Host built-in, not a kernel: the values converted to dtype (floats to integers truncate toward
    zero; values outside an integer dtype's range are a ValueError)."""
    check_tensor(tensor, "tensor")
    dtype = check_dtype(dtype)
    check_layout_supports(dtype, tensor.layout)
    return place_like(device_shards(tensor), tensor, dtype=dtype, memory_config=memory_config)
