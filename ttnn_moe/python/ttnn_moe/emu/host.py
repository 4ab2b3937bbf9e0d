"""Plumbing shared by the host built-ins: read a tensor's shards as compute values,
write per-device results back as a tensor on the same device or mesh.

Host built-ins are torch on the host, not kernels: they exist so model code can
call what it needs from ttnn around our device ops, with ttnn's signatures.
"""

from __future__ import annotations

from typing import Optional, Sequence

import torch

from ttnn_moe.emu.tensor import Tensor, device_shards, from_shards
from ttnn_moe.emu.types import DataType, Layout, MemoryConfig, check_dtype


def check_tensor(t, name: str) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name} must be an emulator Tensor, got {type(t).__name__}")
    return t


def compute_values(t: Tensor) -> list[torch.Tensor]:
    """Per-device values for host math: float32 for float dtypes, int64 for integer dtypes."""
    wide = torch.int64 if t.dtype.is_integer else torch.float32
    return [shard.to(wide) for shard in device_shards(t)]


def same_device(*tensors: Tensor):
    device = tensors[0].device()
    for t in tensors[1:]:
        if t.device() is not device:
            raise ValueError(f"tensors live on different devices: {device!r} and {t.device()!r}")
    return device


def place_like(
    outputs: Sequence[torch.Tensor],
    like: Tensor,
    dtype: Optional[DataType] = None,
    layout: Optional[Layout] = None,
    memory_config: Optional[MemoryConfig] = None,
) -> Tensor:
    """Per-device results -> a tensor on `like`'s device, by default with its dtype, layout, memory config."""
    return from_shards(
        outputs,
        like.dtype if dtype is None else check_dtype(dtype),
        like.layout if layout is None else layout,
        like.device(),
        like.memory_config() if memory_config is None else memory_config,
    )
