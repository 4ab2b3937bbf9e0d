"""Emulated devices and meshes: DRAM allocation, host read/write, core coordinates."""

import numpy as np
import pytest
from ttnn_moe._C import emu


def test_device_properties():
    dev = emu.open_device(3, grid=(8, 8))
    assert dev.id == 3
    assert dev.grid_size == (8, 8)
    assert dev.num_dram_banks == 12
    assert dev.l1_size == 1464 * 1024


def test_write_read_round_trip_many_pages():
    dev = emu.open_device()
    page = 2048
    pages = 29  # not a multiple of 12 banks: the last bank row is partial
    addr = dev.allocate(pages * page, page)
    data = np.random.default_rng(0).integers(0, 256, pages * page, dtype=np.uint8)
    dev.write(addr, page, data)
    np.testing.assert_array_equal(dev.read(addr, page, pages * page), data)
    # A prefix of the pages reads back alone.
    np.testing.assert_array_equal(dev.read(addr, page, 5 * page), data[: 5 * page])


def test_unaligned_row_pages_round_trip():
    dev = emu.open_device()
    page = 6  # e.g. one row of 3 bf16; padded to 32 B per page in the banks
    addr = dev.allocate(50 * page, page)
    data = np.arange(50 * page, dtype=np.uint8)
    dev.write(addr, page, data)
    np.testing.assert_array_equal(dev.read(addr, page, 50 * page), data)


def test_allocations_do_not_overlap_and_space_is_reused():
    dev = emu.open_device()
    a = dev.allocate(12 * 2048, 2048)  # one page per bank: 2048 B span
    b = dev.allocate(24 * 1024, 1024)  # two pages per bank: 2048 B span
    assert a % 32 == 0 and b % 32 == 0
    assert b >= a + 2048
    dev.write(a, 2048, np.full(12 * 2048, 1, np.uint8))
    dev.write(b, 1024, np.full(24 * 1024, 2, np.uint8))
    assert (dev.read(a, 2048, 12 * 2048) == 1).all()
    dev.deallocate(a)
    c = dev.allocate(12 * 64, 64)  # fits into the freed range: first fit
    assert c == a
    assert (dev.read(b, 1024, 24 * 1024) == 2).all()


def test_bad_host_transfers_raise_value_error():
    dev = emu.open_device()
    addr = dev.allocate(4 * 2048, 2048)
    with pytest.raises(ValueError, match="not a whole number"):
        dev.write(addr, 2048, np.zeros(100, np.uint8))
    with pytest.raises(ValueError, match="exceed the buffer"):
        dev.read(addr, 2048, 40 * 2048)
    with pytest.raises(ValueError, match="no DRAM buffer at address 12345"):
        dev.read(12345, 32, 32)
    with pytest.raises(ValueError, match="no buffer at address 999"):
        dev.deallocate(999)
    with pytest.raises(ValueError, match="page_size"):
        dev.allocate(100, 0)


def test_worker_coordinates_are_distinct_noc_endpoints():
    dev = emu.open_device(grid=(8, 8))
    coords = {dev.worker_core_from_logical_core(x, y) for x in range(8) for y in range(8)}
    assert len(coords) == 64
    # Wormhole-like: NOC column 0 and 5 carry DRAM, row 0 and 6 no workers.
    assert not any(x in (0, 5) or y in (0, 6) for x, y in coords)
    with pytest.raises(ValueError, match=r"\(8, 0\)"):
        dev.worker_core_from_logical_core(8, 0)


def test_mesh_shape_and_devices():
    mesh = emu.Mesh(2, 4, grid=(4, 4))
    assert mesh.shape == (2, 4)
    assert mesh.num_devices == 8
    devices = mesh.devices()
    assert [d.id for d in devices] == list(range(8))
    assert mesh.device(1, 2).id == 6
    assert mesh.device(1, 2).grid_size == (4, 4)
    with pytest.raises(ValueError, match=r"\(2, 0\)"):
        mesh.device(2, 0)


def test_devices_have_separate_dram():
    mesh = emu.Mesh(1, 2)
    d0, d1 = mesh.devices()
    a0 = d0.allocate(2048, 2048)
    a1 = d1.allocate(2048, 2048)
    assert a0 == a1  # same allocator state, separate memories
    d0.write(a0, 2048, np.full(2048, 7, np.uint8))
    d1.write(a1, 2048, np.full(2048, 9, np.uint8))
    assert (d0.read(a0, 2048, 2048) == 7).all()
    assert (d1.read(a1, 2048, 2048) == 9).all()


def test_emulator_error_is_runtime_error():
    assert issubclass(emu.EmulatorError, RuntimeError)
