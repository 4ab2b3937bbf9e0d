"""Host tensors piece by piece, as ttnn 0.81.1 names these calls: concat, get_device_tensors,
copy_host_to_device_tensor, dump_tensor, load_tensor.

They let a caller fill a large multi-device tensor one device (and one piece) at a time, so the
host never holds more than one device's share of it in torch form: `concat` joins host tensors
along a leading dim by joining their encoded pages (no re-encoding), `get_device_tensors` gives
each device's view of a mesh tensor, `copy_host_to_device_tensor` writes a host tensor into one
of them. `dump_tensor` / `load_tensor` keep a host tensor's encoded pages in a file (this
emulator's own format: a JSON header line, then the pages); a loaded tensor's pages are
memory-mapped from the file, not read into memory.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from ttnn_moe.emu import pages as _pages
from ttnn_moe.emu.device import MeshDevice
from ttnn_moe.emu.tensor import Tensor, _place
from ttnn_moe.emu.types import ALL_DTYPES, Layout, Shape, check_memory_config

_FILE_MAGIC = "ttnn_moe.emu tensor v1"


def _check_host(tensor, name: str) -> Tensor:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{name} must be an emulator Tensor, got {type(tensor).__name__}")
    if tensor.device() is not None:
        raise ValueError(f"{name} must be a host tensor, got {tensor!r}")
    return tensor


def concat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Host tensors of one dtype and layout joined along `dim`, a leading dim (not one of the
    last two, which TILE pages cut), by joining their pages. Single-shard tensors only."""
    if not tensors:
        raise ValueError("concat needs at least one tensor")
    first = _check_host(tensors[0], "tensors[0]")
    rank = len(first.shape)
    if not isinstance(dim, int) or isinstance(dim, bool) or not -rank <= dim < rank:
        raise ValueError(f"dim {dim!r} is out of range for rank-{rank} tensors")
    dim %= rank
    if dim >= rank - 2:
        raise ValueError(f"concat of host tensors joins pages: dim must be a leading dim (< {rank - 2}), got {dim}")
    for i, t in enumerate(tensors):
        _check_host(t, f"tensors[{i}]")
        if len(t._host_pages) != 1:
            raise ValueError(f"tensors[{i}] holds {len(t._host_pages)} shards; concat takes single-shard tensors")
        other = list(t.shape[:dim]) + list(t.shape[dim + 1 :])
        if (t.dtype, t.layout, other) != (
            first.dtype,
            first.layout,
            list(first.shape[:dim]) + list(first.shape[dim + 1 :]),
        ):
            raise ValueError(f"tensors[{i}] {t!r} does not match tensors[0] {first!r} outside dim {dim}")
    if any(d != 1 for d in first.shape[:dim]):
        raise ValueError(f"dims before dim {dim} must be 1 to join pages, got shape {list(first.shape)}")
    shape = list(first.shape)
    shape[dim] = sum(t.shape[dim] for t in tensors)
    joined = np.concatenate([np.asarray(t._host_pages[0], dtype=np.uint8) for t in tensors])
    return Tensor(Shape(shape), first.dtype, first.layout, first.memory_config(), host_pages=[joined])


def get_device_tensors(tensor: Tensor) -> list[Tensor]:
    """Each device's view of a device tensor (row-major device order): writing a view writes the
    tensor's buffer on that device."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"tensor must be an emulator Tensor, got {type(tensor).__name__}")
    tensor._check_on_device()
    group = tensor.device()
    members = group.get_devices() if isinstance(group, MeshDevice) else [group]
    return [
        Tensor(tensor.shape, tensor.dtype, tensor.layout, tensor.memory_config(), member, tensor._buffers)
        for member in members
    ]


def copy_host_to_device_tensor(host_tensor: Tensor, device_tensor: Tensor) -> None:
    """Writes a host tensor's pages into a device tensor of the same shape, dtype and layout
    (one shard per device of `device_tensor`)."""
    _check_host(host_tensor, "host_tensor")
    if not isinstance(device_tensor, Tensor):
        raise TypeError(f"device_tensor must be an emulator Tensor, got {type(device_tensor).__name__}")
    device_tensor._check_on_device()
    spec = (list(host_tensor.shape), host_tensor.dtype, host_tensor.layout)
    if spec != (list(device_tensor.shape), device_tensor.dtype, device_tensor.layout):
        raise ValueError(f"host_tensor {host_tensor!r} does not match device_tensor {device_tensor!r}")
    chips = device_tensor.device()._chips
    if len(host_tensor._host_pages) != len(chips):
        raise ValueError(
            f"host_tensor holds {len(host_tensor._host_pages)} shards, device_tensor lives on {len(chips)} devices"
        )
    device_tensor._check_on_device()
    for chip, data in zip(chips, host_tensor._host_pages):
        device_tensor._buffers.write(chip, data)


def dump_tensor(file_name, tensor: Tensor) -> None:
    """Writes a host tensor (all shards) to `file_name`, atomically (a temporary file renamed)."""
    _check_host(tensor, "tensor")
    path = Path(file_name)
    header = {
        "magic": _FILE_MAGIC,
        "shape": list(tensor.shape),
        "dtype": tensor.dtype.name,
        "layout": tensor.layout.name,
        "shards": len(tensor._host_pages),
    }
    partial = path.with_name(path.name + f".{os.getpid()}.partial")
    with open(partial, "wb") as out:
        out.write((json.dumps(header) + "\n").encode())
        for shard in tensor._host_pages:
            out.write(memoryview(np.ascontiguousarray(shard, dtype=np.uint8)))  # no bytes copy
    os.replace(partial, path)


def load_tensor(file_name, device=None) -> Tensor:
    """A tensor written by `dump_tensor`: on the host (pages memory-mapped from the file), or on
    `device` when given (one shard per device)."""
    path = Path(file_name)
    with open(path, "rb") as f:
        line = f.readline()
    try:
        header = json.loads(line)
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("magic") != _FILE_MAGIC:
        raise ValueError(f"{path} is not a tensor file written by dump_tensor")
    dtype, layout = {d.name: d for d in ALL_DTYPES}[header["dtype"]], Layout[header["layout"]]
    shape = _pages.check_shape(header["shape"])
    shard_bytes = _pages.page_size(shape, dtype, layout) * _pages.num_pages(shape, layout)
    expected = len(line) + header["shards"] * shard_bytes
    if path.stat().st_size != expected:
        raise ValueError(f"{path} holds {path.stat().st_size} bytes, its header describes {expected}")
    # Copy-on-write: the pages stay backed by the file yet are writable. The file is read ahead
    # whole: page faults alone read a cold file 128 KiB at a time, ~60 MB/s on a disk that streams
    # 400 MB/s (a full-size layer's converted experts are 6-12 GB).
    with open(path, "rb") as f:
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_WILLNEED)
    pages = np.memmap(path, dtype=np.uint8, mode="c", offset=len(line), shape=(header["shards"], shard_bytes))
    host = list(pages)
    return _place(host, shape, dtype, layout, check_memory_config(None), device)


__all__ = ["concat", "copy_host_to_device_tensor", "dump_tensor", "get_device_tensors", "load_tensor"]
