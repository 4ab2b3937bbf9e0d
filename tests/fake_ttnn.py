"""A test double of the `ttnn` module's program-descriptor surface (field names of ttnn 0.81.1).

Every class records the keyword arguments it was built with and any attribute set later, so
tests can check that the hardware adapter carried each field over. Enum members are strings
"Enum.member"; dtypes are strings "DataType.NAME". Nothing here executes a program:
`generic_op` and `allocate_tensor_on_device` only record their calls.
"""

from __future__ import annotations

from types import SimpleNamespace


class Recorded:
    """Keeps constructor arguments as attributes (positional ones under `args`)."""

    def __init__(self, *args, **kwargs):
        self.args = args
        self.fields = dict(kwargs)
        for name, value in kwargs.items():
            setattr(self, name, value)

    def __setattr__(self, name, value):
        if name not in ("args", "fields"):
            self.fields[name] = value
        object.__setattr__(self, name, value)


def _recorded_class(name: str) -> type:
    return type(name, (Recorded,), {})


def _enum(name: str, *members: str) -> SimpleNamespace:
    return SimpleNamespace(**{m: f"{name}.{m}" for m in members})


class FakeMemoryConfig:
    """What the hardware backend reads of a ttnn.MemoryConfig."""

    def __init__(self, buffer_type="BufferType.DRAM", memory_layout="TensorMemoryLayout.INTERLEAVED"):
        self.buffer_type = buffer_type
        self.memory_layout = memory_layout

    def is_sharded(self):
        return "SHARDED" in self.memory_layout


class FakeGrid:
    def __init__(self, x, y):
        self.x, self.y = x, y


class FakeMeshDevice:
    """What the hardware backend reads of a ttnn.MeshDevice (a single device is a 1x1 mesh)."""

    def __init__(self, grid=(8, 8), arch="Arch.WORMHOLE_B0"):
        self._grid = FakeGrid(*grid)
        self._arch = arch

    def compute_with_storage_grid_size(self):
        return self._grid

    def arch(self):
        return self._arch

    def worker_core_from_logical_core(self, core):
        """Wormhole's NOC 0 layout: worker columns skip x = 0 and 5, rows skip y = 0 and 6."""
        x, y = core.args
        return FakeGrid(x + 1 + (x >= 4), y + 1 + (y >= 5))


class FakeTensor:
    """What the hardware backend reads of a ttnn.Tensor."""

    def __init__(self, shape, dtype, layout, device, address, element_size, padded_shape=None, memory_config=None):
        self.shape = list(shape)
        self.padded_shape = list(padded_shape or shape)
        self.dtype = dtype
        self.layout = layout
        self._device = device
        self._address = address
        self._element_size = element_size
        self._memory_config = memory_config or FakeMemoryConfig()

    def device(self):
        return self._device

    def memory_config(self):
        return self._memory_config

    def buffer_address(self):
        return self._address

    def element_size(self):
        return self._element_size


class FakeMeshProgramDescriptor:
    def __init__(self):
        self.items = []

    def __setitem__(self, key, value):
        self.items.append((key, value))


def make_fake_ttnn() -> SimpleNamespace:
    ttnn = SimpleNamespace()
    for cls in (
        "ProgramDescriptor",
        "KernelDescriptor",
        "CBDescriptor",
        "CBFormatDescriptor",
        "TileDescriptor",
        "SemaphoreDescriptor",
        "ComputeConfigDescriptor",
        "ReaderConfigDescriptor",
        "WriterConfigDescriptor",
        "DataMovementConfigDescriptor",
        "CoreCoord",
        "CoreRange",
        "CoreRangeSet",
        "MeshCoordinate",
        "MeshCoordinateRange",
        "Shape",
    ):
        setattr(ttnn, cls, _recorded_class(cls))
    ttnn.KernelDescriptor.SourceType = _enum("SourceType", "FILE_PATH", "SOURCE_CODE")
    ttnn.MeshProgramDescriptor = FakeMeshProgramDescriptor
    ttnn.MathFidelity = _enum("MathFidelity", "LoFi", "HiFi2", "HiFi3", "HiFi4")
    ttnn.UnpackToDestMode = _enum("UnpackToDestMode", "Default", "UnpackToDestFp32")
    ttnn.CoreType = _enum("CoreType", "WORKER", "ETH")
    ttnn.DataMovementProcessor = _enum("DataMovementProcessor", "RISCV_0", "RISCV_1")
    ttnn.NOC = _enum("NOC", "RISCV_0_default", "RISCV_1_default")
    for dtype in ("bfloat16", "float32", "bfloat8_b", "bfloat4_b", "uint32", "int32", "uint16", "uint8"):
        setattr(ttnn, dtype, f"DataType.{dtype.upper()}")
    ttnn.TILE_LAYOUT = "Layout.TILE"
    ttnn.ROW_MAJOR_LAYOUT = "Layout.ROW_MAJOR"
    ttnn.BufferType = _enum("BufferType", "DRAM", "L1")
    ttnn.TensorMemoryLayout = _enum("TensorMemoryLayout", "INTERLEAVED", "HEIGHT_SHARDED")
    ttnn.DRAM_MEMORY_CONFIG = FakeMemoryConfig()
    ttnn.L1_MEMORY_CONFIG = FakeMemoryConfig("BufferType.L1")
    # The values a Wormhole reports (the real runtime's answers on a mock n150).
    ttnn.get_dram_alignment = lambda: 32
    ttnn.get_l1_alignment = lambda: 16
    ttnn.get_max_worker_l1_unreserved_size = lambda: 1463968
    ttnn.Tensor = FakeTensor
    # tt-fabric: set before a mesh opens, read back by the ops' target (DISABLED until set, as in ttnn).
    ttnn.FabricConfig = _enum("FabricConfig", "DISABLED", "FABRIC_1D", "FABRIC_1D_RING", "FABRIC_2D")
    fabric = {"config": ttnn.FabricConfig.DISABLED}
    ttnn.set_fabric_config = lambda config: fabric.update(config=config)
    ttnn.get_fabric_config = lambda: fabric["config"]
    ttnn.generic_op_calls = []
    ttnn.allocations = []

    def generic_op(io_tensors, program):
        ttnn.generic_op_calls.append((list(io_tensors), program))
        return io_tensors[-1]

    def allocate_tensor_on_device(shape, dtype, layout, device, memory_config):
        ttnn.allocations.append((shape, dtype, layout, device, memory_config))
        element_size = {"DataType.BFLOAT16": 2, "DataType.UINT16": 2}.get(dtype, 4)
        address = 0x10000 * (len(ttnn.allocations) + 16)
        return FakeTensor(shape.args[0], dtype, layout, device, address, element_size, memory_config=memory_config)

    ttnn.generic_op = generic_op
    ttnn.allocate_tensor_on_device = allocate_tensor_on_device
    return ttnn
