"""ttnn.full on the emulator: a zero fill in DRAM takes a fresh buffer (the emulator's DRAM buffers
start zeroed) instead of writing the host's zeros, and reads as zeros where a freed tensor was, in L1,
in poison mode (whose new buffers hold its pattern: there the zeros are written) and in file-backed DRAM."""

import pytest
import torch
from ttnn_moe._C import emu as emulator
from ttnn_moe.emu.tensor import device_shards

from ttnn_moe import emu

SHAPE = (64, 96)


@pytest.fixture
def mesh():
    mesh_device = emu.open_mesh_device(emu.MeshShape(1, 2))
    yield mesh_device
    emu.close_mesh_device(mesh_device)


def fill_then_free(mesh, dtype, layout, memory_config=None):
    """Leaves non-zero bytes where the next tensor of the same size will be allocated."""
    ones = torch.full(SHAPE, 3.0) if not dtype.is_integer else torch.full(SHAPE, 7, dtype=torch.int32)
    t = emu.from_torch(ones, dtype=dtype, layout=layout, device=mesh, memory_config=memory_config)
    address = t.buffer_address()
    t.deallocate()
    return address


@pytest.mark.parametrize(
    "dtype, layout",
    [
        (emu.bfloat16, emu.ROW_MAJOR_LAYOUT),
        (emu.bfloat16, emu.TILE_LAYOUT),
        (emu.float32, emu.ROW_MAJOR_LAYOUT),
        (emu.uint32, emu.ROW_MAJOR_LAYOUT),
        (emu.bfloat8_b, emu.TILE_LAYOUT),
        (emu.bfloat4_b, emu.TILE_LAYOUT),
    ],
)
def test_zero_fill_reads_zeros_where_a_freed_tensor_was(mesh, dtype, layout):
    address = fill_then_free(mesh, dtype, layout)
    zeros = emu.full(SHAPE, 0.0, dtype=dtype, layout=layout, device=mesh)
    assert zeros.buffer_address() == address  # the freed tensor's DRAM address, so the test means something
    for shard in device_shards(zeros):
        assert shard.shape == SHAPE and not shard.any(), shard


def test_zero_fill_in_l1(mesh):
    """An L1 tensor takes the host's zeros, as before."""
    config = emu.L1_MEMORY_CONFIG
    address = fill_then_free(mesh, emu.bfloat16, emu.TILE_LAYOUT, config)
    zeros = emu.full(SHAPE, 0.0, dtype=emu.bfloat16, layout=emu.TILE_LAYOUT, device=mesh, memory_config=config)
    assert zeros.buffer_address() == address
    assert all(not shard.any() for shard in device_shards(zeros))


def test_zero_fill_in_poison_mode_is_written(mesh):
    """Poison mode fills new buffers with its pattern, so a zero fill must write (and reads of it are clean)."""
    was = emulator.poison()
    emulator.set_poison(True)
    try:
        zeros = emu.full(SHAPE, 0.0, dtype=emu.bfloat16, device=mesh)
        assert all(not shard.any() for shard in device_shards(zeros))
    finally:
        emulator.set_poison(was)


def test_zero_fill_of_file_backed_dram(mesh, tmp_path):
    was = emulator.dram_files()
    emulator.set_dram_files(enabled=True, threshold_bytes=1, directory=str(tmp_path))
    try:
        fill_then_free(mesh, emu.bfloat16, emu.ROW_MAJOR_LAYOUT)
        zeros = emu.full(SHAPE, 0.0, dtype=emu.bfloat16, device=mesh)
        assert all(not shard.any() for shard in device_shards(zeros))
    finally:
        emulator.set_dram_files(
            enabled=was["enabled"], threshold_bytes=was["threshold_bytes"], directory=was["directory"]
        )


def test_non_zero_fill(mesh):
    twos = emu.full(SHAPE, 2.0, dtype=emu.bfloat16, layout=emu.TILE_LAYOUT, device=mesh)
    assert all(torch.equal(shard, torch.full(SHAPE, 2.0)) for shard in device_shards(twos))
