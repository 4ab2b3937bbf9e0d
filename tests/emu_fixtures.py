"""Module-scoped emulator device and mesh fixtures for the ttnn_moe.emu API and op tests.

A test module binds one with `device = emu_device_fixture(grid=(2, 2))`; the device
is opened on first use and closed when the module's tests are done.
"""

import pytest
import ttnn_moe.emu as ttnn


def emu_device_fixture(**open_kwargs):
    """A fixture yielding `ttnn.open_device(**open_kwargs)`."""

    @pytest.fixture(scope="module")
    def device():
        dev = ttnn.open_device(**open_kwargs)
        yield dev
        ttnn.close_device(dev)

    return device


def emu_device_per_grid_fixture(grids):
    """A fixture parametrized over core grids, yielding `ttnn.open_device(grid=g)` for each (ids "gridXxY")."""

    @pytest.fixture(scope="module", params=grids, ids=lambda g: f"grid{g[0]}x{g[1]}")
    def device(request):
        dev = ttnn.open_device(grid=request.param)
        yield dev
        ttnn.close_device(dev)

    return device


def emu_devices_by_name_fixture(grids):
    """A fixture yielding {name: ttnn.open_device(device_id=i, grid=grid)} for `grids` {name: (x, y)}."""

    @pytest.fixture(scope="module")
    def devices():
        opened = {name: ttnn.open_device(device_id=i, grid=grid) for i, (name, grid) in enumerate(grids.items())}
        yield opened
        for device in opened.values():
            ttnn.close_device(device)

    return devices


def emu_mesh_fixture(rows: int, cols: int, **open_kwargs):
    """A fixture yielding a (rows, cols) `ttnn.open_mesh_device(..., **open_kwargs)`."""

    @pytest.fixture(scope="module")
    def mesh():
        m = ttnn.open_mesh_device(ttnn.MeshShape(rows, cols), **open_kwargs)
        yield m
        ttnn.close_mesh_device(m)

    return mesh


def emulator_device_limits(grid_x: int, grid_y: int):
    """The DeviceLimits an emulated device with this worker grid reports (for a hand-built MeshContext)."""
    device = ttnn.open_device(grid=(grid_x, grid_y))
    try:
        return device.device_limits()
    finally:
        ttnn.close_device(device)
