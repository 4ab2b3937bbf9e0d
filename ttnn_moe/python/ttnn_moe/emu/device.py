"""Emulated devices and meshes in ttnn's shape: open_device, open_mesh_device, close_*.

A `Device` is one emulated chip; a `MeshDevice` is rows x cols of them. Both
expose the same small protocol that tensors and generic_op rely on:
`shape` (MeshShape; (1, 1) for a single device), `get_devices()` (row-major)
and `_chips` (the `_C.emu.Device` objects, row-major).
"""

from __future__ import annotations

from ttnn_moe._C import emu as _emu
from ttnn_moe._C import program as _program
from ttnn_moe.emu.types import CoreGrid, MeshShape


def _check_grid(grid) -> tuple[int, int]:
    try:
        x, y = grid
    except (TypeError, ValueError):
        raise TypeError(f"grid must be (x, y), got {grid!r}") from None
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in (x, y)):
        raise ValueError(f"grid must be two positive ints (x, y), got {grid!r}")
    return x, y


class _DeviceGroup:
    """What a single device and a mesh have in common."""

    _chips: list
    shape: MeshShape

    def __init__(self):
        self._open = True

    @property
    def is_open(self) -> bool:
        return self._open

    def check_open(self) -> None:
        if not self._open:
            raise RuntimeError(f"{self!r} is closed")

    @property
    def chips(self) -> list:
        """The `_C.emu.Device` objects, row-major: raw DRAM access and counters."""
        return list(self._chips)

    def get_num_devices(self) -> int:
        return len(self._chips)

    def compute_with_storage_grid_size(self) -> _program.CoreCoord:
        x, y = self._chips[0].grid_size
        return _program.CoreCoord(x, y)

    def device_limits(self) -> _program.DeviceLimits:
        """What a program may use of each device: worker grid, L1 for CBs, CBs and semaphores per core."""
        return self._chips[0].limits

    @property
    def core_grid(self) -> CoreGrid:
        x, y = self._chips[0].grid_size
        return CoreGrid(y=y, x=x)

    def counters(self) -> list[dict]:
        """Cumulative emulator counters of each device, row-major."""
        return [chip.counters() for chip in self._chips]

    def reset_counters(self) -> None:
        for chip in self._chips:
            chip.reset_counters()


class Device(_DeviceGroup):
    """One emulated device (ttnn.open_device)."""

    def __init__(self, chip):
        super().__init__()
        self._chip = chip
        self._chips = [chip]
        self.shape = MeshShape(1, 1)

    def id(self) -> int:
        return self._chip.id

    def get_devices(self) -> list["Device"]:
        return [self]

    def worker_core_from_logical_core(self, core: _program.CoreCoord) -> _program.CoreCoord:
        x, y = self._chip.worker_core_from_logical_core(core.x, core.y)
        return _program.CoreCoord(x, y)

    def __repr__(self) -> str:
        return f"emu.Device(id={self._chip.id}, grid={self._chip.grid_size})"


class MeshDevice(_DeviceGroup):
    """rows x cols emulated devices (ttnn.open_mesh_device)."""

    def __init__(self, mesh):
        super().__init__()
        self._mesh = mesh
        self._chips = list(mesh.devices())
        self.shape = MeshShape(*mesh.shape)
        self._devices = [Device(chip) for chip in self._chips]

    def get_devices(self) -> list[Device]:
        return list(self._devices)

    def get_device(self, row: int, col: int) -> Device:
        rows, cols = self.shape
        if not (0 <= row < rows and 0 <= col < cols):
            raise ValueError(f"mesh coordinate ({row}, {col}) is outside the {rows}x{cols} mesh")
        return self._devices[row * cols + col]

    # tt-fabric of the emulated mesh (see ttnn_moe.emu.fabric).
    def get_fabric_node_id(self, coord: _program.MeshCoordinate):
        return self._mesh.get_fabric_node_id(coord)

    @property
    def fabric_topology(self):
        return self._mesh.fabric_topology

    @fabric_topology.setter
    def fabric_topology(self, topology) -> None:
        self._mesh.fabric_topology = topology

    def set_fabric_seed(self, seed: int) -> None:
        """Seed of the fabric's random delivery delays (results must not depend on it)."""
        self._mesh.set_fabric_seed(seed)

    @property
    def chip_mesh(self):
        """The underlying `ttnn_moe._C.emu.Mesh` (for run_mesh_program)."""
        return self._mesh

    def __repr__(self) -> str:
        return f"emu.MeshDevice({self.shape[0]}x{self.shape[1]}, grid={self._chips[0].grid_size})"


def open_device(device_id: int = 0, grid=(8, 8)) -> Device:
    return Device(_emu.open_device(device_id, _check_grid(grid)))


def open_mesh_device(mesh_shape: MeshShape, grid=(8, 8)) -> MeshDevice:
    if not isinstance(mesh_shape, MeshShape):
        raise TypeError(f"mesh_shape must be a MeshShape, got {mesh_shape!r}")
    return MeshDevice(_emu.Mesh(mesh_shape.rows, mesh_shape.cols, _check_grid(grid)))


def close_device(device: _DeviceGroup) -> None:
    """Closes a device or mesh; its tensors can no longer be read or written."""
    if not isinstance(device, _DeviceGroup):
        raise TypeError(f"expected an emulator Device or MeshDevice, got {device!r}")
    device._open = False
    if isinstance(device, MeshDevice):
        for member in device._devices:
            member._open = False


close_mesh_device = close_device
