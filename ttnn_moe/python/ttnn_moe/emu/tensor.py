"""Tensors of the emulator API: ttnn-shaped host and device tensors, from_torch / to_torch.

A device tensor holds one buffer per device of its device or mesh, all at the
same address (allocated in lockstep, like a ttnn MeshBuffer), so one TensorArg
describes it for a program on any of those devices: interleaved DRAM (the
default), interleaved L1, or L1 on one core (a height-sharded single shard).
A multi-device tensor's `shape` is the per-device shape, as in ttnn. A host
tensor (no device) keeps its encoded pages in memory, one set per shard.
"""

from __future__ import annotations

import weakref
from typing import Optional, Sequence

import numpy as np
import torch

from ttnn_moe._C import emu as _emu
from ttnn_moe._C import program as _program
from ttnn_moe.emu import pages as _pages
from ttnn_moe.emu.device import MeshDevice, _DeviceGroup
from ttnn_moe.emu.host_traffic import count_device_read
from ttnn_moe.emu.types import (
    BufferType,
    DataType,
    Layout,
    MemoryConfig,
    Shape,
    bfloat16,
    check_dtype,
    check_layout,
    check_tensor_memory_config,
    infer_dtype,
)


def _release(group: _DeviceGroup, address: int, in_l1: bool) -> None:
    # A closed device's memory is gone with it; nothing to give back.
    if group.is_open:
        for chip in group._chips:
            _release_one(chip, address, in_l1)


def _shard_core(memory_config: MemoryConfig):
    """The logical (x, y) of a single-core shard, or None for an interleaved tensor."""
    if memory_config.shard_spec is None:
        return None
    [core] = memory_config.shard_spec.cores()
    return (int(core.x), int(core.y))


class _DeviceBuffers:
    """One buffer per device of a group (DRAM, L1 interleaved or L1 on one core), at one common address;
    freed with the tensor."""

    def __init__(self, group: _DeviceGroup, num_pages: int, page_size: int, memory_config: MemoryConfig):
        group.check_open()
        self.in_l1 = memory_config.buffer_type is BufferType.L1
        self.core = _shard_core(memory_config)
        self.page_size = page_size
        if self.in_l1:
            addresses = [chip.allocate_l1(num_pages, page_size, self.core) for chip in group._chips]
        else:
            addresses = [chip.allocate(num_pages * page_size, page_size) for chip in group._chips]
        if len(set(addresses)) != 1:
            for address, chip in zip(addresses, group._chips):
                _release_one(chip, address, self.in_l1)
            raise RuntimeError(
                f"allocators of {group!r} diverged (addresses {sorted(set(addresses))}): allocate mesh tensors "
                "on the mesh, not on its member devices"
            )
        self.address = addresses[0]
        self._finalizer = weakref.finalize(self, _release, group, self.address, self.in_l1)

    def write(self, chip, data: np.ndarray) -> None:
        if self.in_l1:
            chip.write_l1(self.address, data)
        else:
            chip.write(self.address, self.page_size, data)

    def read(self, chip, nbytes: int) -> np.ndarray:
        return chip.read_l1(self.address, nbytes) if self.in_l1 else chip.read(self.address, self.page_size, nbytes)

    def release(self) -> None:
        self._finalizer()

    @property
    def alive(self) -> bool:
        return self._finalizer.alive


def _release_one(chip, address: int, in_l1: bool) -> None:
    if in_l1:
        chip.deallocate_l1(address)
    else:
        chip.deallocate(address)


class Tensor:
    """A ttnn-shaped tensor: logical shape, dtype, layout, and its pages on a device or the host."""

    def __init__(
        self,
        shape: Shape,
        dtype: DataType,
        layout: Layout,
        memory_config: MemoryConfig,
        device: Optional[_DeviceGroup] = None,
        buffers: Optional[_DeviceBuffers] = None,
        host_pages: Optional[list] = None,
    ):
        # Internal: use from_torch / allocate_tensor_on_device. A device tensor has `device` and
        # `buffers`; a host tensor has `host_pages` (encoded page bytes per shard).
        self._shape = shape
        self._dtype = dtype
        self._layout = layout
        self._memory_config = memory_config
        self._device = device
        self._buffers = buffers
        self._host_pages = host_pages

    # --- ttnn-like properties ---------------------------------------------------------------
    @property
    def shape(self) -> Shape:
        return self._shape

    @property
    def padded_shape(self) -> Shape:
        return _pages.padded_shape(self._shape, self._layout)

    @property
    def dtype(self) -> DataType:
        return self._dtype

    @property
    def layout(self) -> Layout:
        return self._layout

    def memory_config(self) -> MemoryConfig:
        return self._memory_config

    def device(self) -> Optional[_DeviceGroup]:
        return self._device

    @property
    def page_size(self) -> int:
        return _pages.page_size(self._shape, self._dtype, self._layout)

    @property
    def num_pages(self) -> int:
        return _pages.num_pages(self._shape, self._layout)

    @property
    def nbytes(self) -> int:
        return self.page_size * self.num_pages

    def is_allocated(self) -> bool:
        return self._buffers is not None and self._buffers.alive

    def buffer_address(self) -> int:
        self._check_on_device()
        return self._buffers.address

    def to_arg(self):
        """What a program factory needs: `_C.program.TensorArg` (or its Python mirror while unbound)."""
        self._check_on_device()
        chip = self._device.chips[0]
        in_l1 = self._buffers.in_l1
        fields = dict(
            shape=list(self._shape),
            dtype=self._dtype.data_format,
            address=self._buffers.address,
            page_size=self.page_size,
            num_pages=self.num_pages,
            is_dram=not in_l1,
            alignment=chip.l1_alignment if in_l1 else chip.dram_alignment,
        )
        return _program.TensorArg(layout=getattr(_program.Layout, self._layout.name), **fields)

    def deallocate(self) -> None:
        if self._buffers is not None:
            self._buffers.release()

    def __repr__(self) -> str:
        where = repr(self._device) if self._device is not None else "host"
        return f"emu.Tensor(shape={list(self._shape)}, dtype={self._dtype.name}, layout={self._layout.name}, {where})"

    # --- internal ---------------------------------------------------------------------------
    def _check_on_device(self) -> None:
        if self._device is None:
            raise ValueError(f"{self!r} is a host tensor; move it with to_device first")
        if not self.is_allocated():
            raise RuntimeError(f"{self!r} has been deallocated")
        self._device.check_open()

    def _read_shard_pages(self) -> list[np.ndarray]:
        """Page bytes of every shard (device order)."""
        if self._device is None:
            return list(self._host_pages)
        self._check_on_device()
        count_device_read(repr(self))
        return [self._buffers.read(chip, self.nbytes) for chip in self._device._chips]


# --- construction -------------------------------------------------------------------------------


def _encode_shards(shards: Sequence[torch.Tensor], dtype: DataType, layout: Layout) -> list[np.ndarray]:
    shape = shards[0].shape
    for shard in shards:
        if shard.shape != shape:
            raise ValueError(f"shards must share one shape, got {list(shape)} and {list(shard.shape)}")
    encoded = {}  # replicated shards are one tensor object: encode it once
    for s in shards:
        if id(s) not in encoded:
            encoded[id(s)] = _pages.to_pages(s, dtype, layout)
    return [encoded[id(s)] for s in shards]


def _buffers_for(
    device: _DeviceGroup, shape: Shape, dtype: DataType, layout: Layout, memory_config: MemoryConfig
) -> _DeviceBuffers:
    page_size = _pages.page_size(shape, dtype, layout)
    return _DeviceBuffers(device, _pages.num_pages(shape, layout), page_size, memory_config)


def _place(shard_pages: list[np.ndarray], shape: Shape, dtype, layout, memory_config, device) -> Tensor:
    """Encoded shards -> a host tensor (device None) or a tensor with one shard per device."""
    if device is None:
        return Tensor(shape, dtype, layout, memory_config, host_pages=shard_pages)
    if len(shard_pages) != len(device._chips):
        raise ValueError(f"{len(shard_pages)} shards cannot be placed on {device!r} ({len(device._chips)} devices)")
    buffers = _buffers_for(device, shape, dtype, layout, memory_config)
    for chip, data in zip(device._chips, shard_pages):
        buffers.write(chip, data)
    return Tensor(shape, dtype, layout, memory_config, device, buffers)


def from_shards(
    shards: Sequence[torch.Tensor],
    dtype: DataType,
    layout: Layout,
    device: Optional[_DeviceGroup],
    memory_config: Optional[MemoryConfig] = None,
) -> Tensor:
    """One logical tensor per device (row-major device order) -> a multi-device tensor."""
    dtype, layout = check_dtype(dtype), check_layout(layout)
    shape = _pages.check_shape(shards[0].shape)
    memory_config = check_tensor_memory_config(memory_config, shape)
    return _place(_encode_shards(shards, dtype, layout), shape, dtype, layout, memory_config, device)


def from_torch(
    tensor,
    dtype: Optional[DataType] = None,
    *,
    layout: Optional[Layout] = None,
    device: Optional[_DeviceGroup] = None,
    memory_config: Optional[MemoryConfig] = None,
    mesh_mapper=None,
) -> Tensor:
    """torch tensor -> emulator tensor, like ttnn.from_torch.

    dtype defaults to ttnn's inference from the torch dtype; layout defaults to
    ROW_MAJOR_LAYOUT (TILE_LAYOUT for bfloat8_b and bfloat4_b). On a mesh without a mapper the tensor is replicated.
    Integer dtypes reject values outside their range (ValueError).
    """
    if isinstance(tensor, np.ndarray):
        tensor = torch.from_numpy(tensor)
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"from_torch expects a torch.Tensor, got {type(tensor).__name__}")
    dtype = infer_dtype(tensor.dtype) if dtype is None else check_dtype(dtype)
    if layout is None:  # ttnn's default; block floats exist only as tiles
        layout = Layout.TILE if dtype.is_block_float else Layout.ROW_MAJOR
    layout = check_layout(layout)
    memory_config = check_tensor_memory_config(memory_config)  # the shard shape is checked per device shard
    if device is not None and not isinstance(device, _DeviceGroup):
        raise TypeError(f"device must be an emulator Device or MeshDevice, got {device!r}")
    _pages.check_shape(tensor.shape)
    _pages.check_layout_supports(dtype, layout)

    if mesh_mapper is not None:
        if device is not None and tuple(device.shape) != tuple(mesh_mapper.mesh_device.shape):
            raise ValueError(f"mesh_mapper is for a {mesh_mapper.mesh_device.shape} mesh, device is {device!r}")
        shards = mesh_mapper.map(tensor)
    elif isinstance(device, MeshDevice):
        shards = [tensor] * device.get_num_devices()
    else:
        shards = [tensor]
    return from_shards(shards, dtype, layout, device, memory_config)


def allocate_tensor_on_device(
    shape, dtype: DataType, layout: Layout, device: _DeviceGroup, memory_config: Optional[MemoryConfig] = None
) -> Tensor:
    """A device tensor whose contents are unspecified (what the DRAM held), like ttnn."""
    shape = _pages.check_shape(shape)
    dtype, layout = check_dtype(dtype), check_layout(layout)
    memory_config = check_tensor_memory_config(memory_config, shape)
    _pages.check_layout_supports(dtype, layout)
    if not isinstance(device, _DeviceGroup):
        raise TypeError(f"device must be an emulator Device or MeshDevice, got {device!r}")
    return Tensor(
        shape, dtype, layout, memory_config, device, _buffers_for(device, shape, dtype, layout, memory_config)
    )


def full(
    shape,
    fill_value,
    dtype: Optional[DataType] = None,
    layout: Optional[Layout] = None,
    device: Optional[_DeviceGroup] = None,
    memory_config: Optional[MemoryConfig] = None,
) -> Tensor:
    """A tensor of `shape` holding `fill_value` everywhere, like ttnn.full (dtype defaults to bfloat16,
    layout to ROW_MAJOR_LAYOUT; replicated on a mesh). Model code makes small device constants with it
    without torch."""
    shape = _pages.check_shape(shape)
    dtype = bfloat16 if dtype is None else check_dtype(dtype)
    if layout is None:  # ttnn's default; block floats exist only as tiles
        layout = Layout.TILE if dtype.is_block_float else Layout.ROW_MAJOR
    if fill_value == 0 and _fresh_dram_is_zeros(device, dtype, layout, memory_config):
        # The emulator's DRAM buffers start zeroed: a full-size layer's (capacity, H) buffers per device
        # are written by nobody instead of by the host (tens of GB of a QUAD's file-backed DRAM).
        return allocate_tensor_on_device(shape, dtype, layout, device, memory_config)
    values = torch.full(tuple(shape), fill_value, dtype=torch.int64 if dtype.is_integer else torch.float32)
    return from_torch(values, dtype, layout=layout, device=device, memory_config=memory_config)


def _fresh_dram_is_zeros(device, dtype: DataType, layout: Layout, memory_config) -> bool:
    """Whether a new DRAM buffer of `dtype` already reads as a tensor of zeros: an interleaved DRAM tensor
    (L1 tensors, a few pages, take the host's zeros as before), poison mode off (it fills new buffers with
    its pattern), and zero encoded as zero bytes in the format."""
    if not isinstance(device, _DeviceGroup) or _emu.poison():
        return False
    if memory_config is not None and memory_config.buffer_type is not BufferType.DRAM:
        return False
    zero_page = _pages.to_pages(torch.zeros(32, 32), dtype, check_layout(layout))
    return not zero_page.any()


# --- conversion back ----------------------------------------------------------------------------


def device_shards(tensor: Tensor) -> list[torch.Tensor]:
    """The logical tensor on each device (row-major device order), in to_torch's dtype."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"expected an emulator Tensor, got {type(tensor).__name__}")
    return [_pages.from_pages(raw, tensor.shape, tensor.dtype, tensor.layout) for raw in tensor._read_shard_pages()]


def to_torch(tensor: Tensor, dtype: Optional[torch.dtype] = None, *, mesh_composer=None) -> torch.Tensor:
    """Emulator tensor -> torch tensor (logical shape, padding dropped), like ttnn.to_torch.

    uint32 comes back as torch.uint32, uint16 as torch.uint16 and bfloat8_b and bfloat4_b
    as torch.float32, as ttnn 0.81.1 returns them. A tensor on several devices needs a mesh_composer.
    """
    shards = device_shards(tensor)
    if mesh_composer is not None:
        result = mesh_composer.compose(shards)
    elif len(shards) == 1:
        result = shards[0]
    else:
        raise ValueError(f"{tensor!r} lives on {len(shards)} devices: pass a mesh_composer")
    return result if dtype is None else result.to(dtype)


def to_device(tensor: Tensor, device: _DeviceGroup, memory_config: Optional[MemoryConfig] = None) -> Tensor:
    if tensor.device() is not None:
        raise ValueError(f"{tensor!r} is already on a device")
    memory_config = check_tensor_memory_config(memory_config or tensor.memory_config(), tensor.shape)
    return _place(tensor._host_pages, tensor.shape, tensor.dtype, tensor.layout, memory_config, device)


def from_device(tensor: Tensor) -> Tensor:
    return _place(tensor._read_shard_pages(), tensor.shape, tensor.dtype, tensor.layout, tensor.memory_config(), None)


def deallocate(tensor: Tensor) -> None:
    tensor.deallocate()
