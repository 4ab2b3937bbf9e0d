"""Host built-ins, not kernels: to_layout, reshape, typecast.

Each reads the tensor from its device(s), converts on the host and writes a new
tensor back to the same device or mesh (a round trip through host memory, where
ttnn would run a device op). Values are preserved exactly except where the
target dtype rounds (typecast to bfloat16/bfloat8_b) or rejects them (an integer
dtype's range).
"""

from __future__ import annotations

from typing import Optional

from ttnn_moe.emu.host import check_tensor, place_like
from ttnn_moe.emu.pages import check_layout_supports, check_shape
from ttnn_moe.emu.tensor import Tensor, device_shards
from ttnn_moe.emu.types import DataType, Layout, MemoryConfig, check_dtype, check_layout


def to_layout(
    tensor: Tensor, layout: Layout, dtype: Optional[DataType] = None, memory_config: Optional[MemoryConfig] = None
) -> Tensor:
    """Host built-in, not a kernel: the same values in another page layout (and optionally dtype)."""
    check_tensor(tensor, "tensor")
    layout = check_layout(layout)
    check_layout_supports(tensor.dtype if dtype is None else check_dtype(dtype), layout)
    return place_like(device_shards(tensor), tensor, dtype=dtype, layout=layout, memory_config=memory_config)


def reshape(tensor: Tensor, shape, *, memory_config: Optional[MemoryConfig] = None) -> Tensor:
    """Host built-in, not a kernel: the same values (row-major order) in a new logical shape; one
    dim may be -1."""
    check_tensor(tensor, "tensor")
    shards = device_shards(tensor)
    try:
        reshaped = [shard.reshape(tuple(shape)) for shard in shards]
    except (RuntimeError, TypeError) as e:
        raise ValueError(f"cannot reshape {list(tensor.shape)} to {list(shape)}") from e
    check_shape(reshaped[0].shape)
    return place_like(reshaped, tensor, memory_config=memory_config)


def typecast(tensor: Tensor, dtype: DataType, *, memory_config: Optional[MemoryConfig] = None) -> Tensor:
    """Host built-in, not a kernel: the values converted to dtype (floats to integers truncate toward
    zero; values outside an integer dtype's range are a ValueError)."""
    check_tensor(tensor, "tensor")
    dtype = check_dtype(dtype)
    check_layout_supports(dtype, tensor.layout)
    return place_like(device_shards(tensor), tensor, dtype=dtype, memory_config=memory_config)
