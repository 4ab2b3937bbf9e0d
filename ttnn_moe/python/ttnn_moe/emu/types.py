"""ttnn-shaped value types of the emulator API: dtypes, layouts, memory configs, shapes, core grids.

Named as in ttnn 0.81.1 so model code reads the same on both backends.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Optional

import torch

from ttnn_moe._C import program as _program

DataFormat = _program.DataFormat

TILE_SIZE = 32  # tile height and width, elements


@dataclass(frozen=True)
class DataType:
    """A ttnn dtype: how values are stored on the device and what `to_torch` returns.

    `element_bytes` is None for block-float formats (bfloat8_b, bfloat4_b), which exist only as tiles.
    `torch_dtype` is the dtype `to_torch` returns; it is what ttnn 0.81.1 returns (its
    nanobind tensor export maps UINT32 -> torch.uint32, UINT16 -> torch.uint16,
    BFLOAT8_B and BFLOAT4_B -> torch.float32).
    """

    name: str
    data_format: DataFormat
    torch_dtype: torch.dtype
    element_bytes: Optional[int]
    is_integer: bool
    # Inclusive value range of integer dtypes.
    min_value: Optional[int] = None
    max_value: Optional[int] = None

    @property
    def is_block_float(self) -> bool:
        return self.element_bytes is None

    def __repr__(self) -> str:
        return f"ttnn_moe.emu.{self.name}"


bfloat16 = DataType("bfloat16", DataFormat.Float16_b, torch.bfloat16, 2, False)
bfloat8_b = DataType("bfloat8_b", DataFormat.Bfp8_b, torch.float32, None, False)
bfloat4_b = DataType("bfloat4_b", DataFormat.Bfp4_b, torch.float32, None, False)
float32 = DataType("float32", DataFormat.Float32, torch.float32, 4, False)
uint32 = DataType("uint32", DataFormat.UInt32, torch.uint32, 4, True, 0, 2**32 - 1)
uint16 = DataType("uint16", DataFormat.UInt16, torch.uint16, 2, True, 0, 2**16 - 1)
int32 = DataType("int32", DataFormat.Int32, torch.int32, 4, True, -(2**31), 2**31 - 1)

ALL_DTYPES = (bfloat16, bfloat8_b, bfloat4_b, float32, uint32, uint16, int32)

# dtype that from_torch infers when none is given (ttnn's dlpack ingress rules).
_INFERRED_DTYPE = {
    torch.float32: float32,
    torch.bfloat16: bfloat16,
    torch.float16: bfloat16,
    torch.int64: uint32,
    torch.int32: int32,
    torch.int16: uint16,
    torch.uint32: uint32,
    torch.uint16: uint16,
}


def check_dtype(dtype) -> DataType:
    if not isinstance(dtype, DataType):
        raise TypeError(f"dtype must be one of {[d.name for d in ALL_DTYPES]}, got {dtype!r}")
    return dtype


def infer_dtype(torch_dtype: torch.dtype) -> DataType:
    if torch_dtype not in _INFERRED_DTYPE:
        raise TypeError(f"cannot infer a ttnn dtype from torch dtype {torch_dtype}; pass dtype=")
    return _INFERRED_DTYPE[torch_dtype]


class Layout(enum.IntEnum):
    """Page layout in DRAM. Values match ttnn_moe._C.program.Layout."""

    ROW_MAJOR = 0  # one page = one row of the last dim
    TILE = 1  # one page = one 32x32 tile (four 16x16 faces)


ROW_MAJOR_LAYOUT = Layout.ROW_MAJOR
TILE_LAYOUT = Layout.TILE


def check_layout(layout) -> Layout:
    if not isinstance(layout, Layout):
        raise TypeError(f"layout must be TILE_LAYOUT or ROW_MAJOR_LAYOUT, got {layout!r}")
    return layout


class BufferType(enum.Enum):
    DRAM = "DRAM"
    L1 = "L1"


class TensorMemoryLayout(enum.Enum):
    INTERLEAVED = "INTERLEAVED"
    HEIGHT_SHARDED = "HEIGHT_SHARDED"


class ShardOrientation(enum.Enum):
    ROW_MAJOR = "ROW_MAJOR"


@dataclass(frozen=True, eq=False)
class ShardSpec:
    """ttnn.ShardSpec: the cores (a CoreRangeSet) and the [rows, cols] shape of each shard."""

    grid: object
    shape: tuple
    orientation: ShardOrientation = ShardOrientation.ROW_MAJOR

    def cores(self) -> list:
        return list(self.grid.cores())

    def _key(self) -> tuple:
        return (tuple((int(c.x), int(c.y)) for c in self.cores()), tuple(int(v) for v in self.shape), self.orientation)

    def __eq__(self, other) -> bool:
        return isinstance(other, ShardSpec) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


@dataclass(frozen=True)
class MemoryConfig:
    memory_layout: TensorMemoryLayout = TensorMemoryLayout.INTERLEAVED
    buffer_type: BufferType = BufferType.DRAM
    shard_spec: Optional[ShardSpec] = None


DRAM_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.INTERLEAVED, BufferType.DRAM)
L1_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.INTERLEAVED, BufferType.L1)


def _check_is_memory_config(memory_config) -> MemoryConfig:
    if memory_config is None:
        return DRAM_MEMORY_CONFIG
    if not isinstance(memory_config, MemoryConfig):
        raise TypeError(f"memory_config must be a MemoryConfig, got {memory_config!r}")
    return memory_config


def check_memory_config(memory_config) -> MemoryConfig:
    """Where the suite's ops put their outputs on the emulator: interleaved DRAM only."""
    memory_config = _check_is_memory_config(memory_config)
    if memory_config.buffer_type is not BufferType.DRAM:
        raise NotImplementedError(f"{memory_config} is not emulated: tensors live in interleaved DRAM")
    return memory_config


def check_tensor_memory_config(memory_config, shape=None) -> MemoryConfig:
    """Where a tensor may live on the emulator: interleaved DRAM, interleaved L1, or L1 height-sharded on one
    core as a single shard of the whole tensor (the layout tt-metal's MoE ops give their L1 metadata)."""
    memory_config = _check_is_memory_config(memory_config)
    layout, buffer_type, spec = memory_config.memory_layout, memory_config.buffer_type, memory_config.shard_spec
    if layout is TensorMemoryLayout.INTERLEAVED:
        if spec is not None:
            raise ValueError(f"{memory_config}: an interleaved memory config has no shard_spec")
        return memory_config
    if buffer_type is not BufferType.L1 or spec is None:
        raise ValueError(f"{memory_config}: a sharded memory config needs buffer_type L1 and a shard_spec")
    cores = spec.cores()
    if len(cores) != 1:
        raise NotImplementedError(
            f"{memory_config}: shards on {len(cores)} cores are not emulated (one core holding the whole tensor is)"
        )
    if shape is not None:
        rows = 1
        for d in list(shape)[:-1]:
            rows *= int(d)
        if [int(v) for v in spec.shape] != [rows, int(list(shape)[-1])]:
            raise ValueError(
                f"{memory_config}: shard shape {list(spec.shape)} must be the whole tensor, [{rows}, {list(shape)[-1]}]"
            )
    return memory_config


class Shape(tuple):
    """A tensor shape; compares equal to any sequence of the same ints (like ttnn.Shape)."""

    def __new__(cls, dims):
        return super().__new__(cls, (int(d) for d in dims))

    def __eq__(self, other):
        try:
            return tuple(self) == tuple(int(d) for d in other)
        except TypeError:
            return NotImplemented

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = tuple.__hash__

    @property
    def rank(self) -> int:
        return len(self)

    def volume(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n

    def __repr__(self) -> str:
        return f"Shape({list(self)})"


class MeshShape(tuple):
    """(rows, cols) of a device mesh, as ttnn.MeshShape(rows, cols)."""

    def __new__(cls, rows, cols=None):
        if cols is None:  # MeshShape((rows, cols)) or MeshShape([rows, cols])
            rows, cols = rows
        for n in (rows, cols):
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                raise ValueError(f"mesh dimensions must be positive ints, got ({rows!r}, {cols!r})")
        return super().__new__(cls, (rows, cols))

    @property
    def rows(self) -> int:
        return self[0]

    @property
    def cols(self) -> int:
        return self[1]

    def mesh_size(self) -> int:
        return self[0] * self[1]

    def dims(self) -> int:
        return 2

    def __repr__(self) -> str:
        return f"MeshShape({self[0]}, {self[1]})"


@dataclass(frozen=True)
class CoreGrid:
    """A grid of worker cores, ttnn.CoreGrid(y=rows, x=cols)."""

    y: int
    x: int

    @property
    def num_cores(self) -> int:
        return self.x * self.y
