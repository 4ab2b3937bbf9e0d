"""to_layout between ROW_MAJOR and TILE as a device program (kernels/layout_convert) and
page-keeping reshapes as views: values exact against torch, tile padding zero, no host
computation or read-back; other conversions take the counted host path."""

import pytest
import torch
import ttnn_moe.emu as ttnn
from emu_fixtures import emu_device_fixture, emu_mesh_fixture
from emu_programs import untilize
from ttnn_moe.emu.tensor import device_shards

device = emu_device_fixture(grid=(2, 2))
mesh = emu_mesh_fixture(2, 4, grid=(2, 2))


def _values(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    if dtype is ttnn.uint32:
        return torch.randint(0, 2**31, shape, generator=g, dtype=torch.int64).to(torch.int32)
    x = torch.randn(shape, generator=g)
    return x.bfloat16() if dtype is ttnn.bfloat16 else x


@pytest.mark.parametrize(
    "shape, dtype",
    [
        ((32, 64), ttnn.bfloat16),
        ((40, 96), ttnn.bfloat16),  # a partial tile row
        ((3, 17, 320), ttnn.bfloat16),  # batched, partial tiles, 10 tile columns (strips of 5)
        ((1, 48, 7 * 32), ttnn.bfloat16),
        ((32, 7 * 32), ttnn.bfloat16),  # one tile row: untilized by 4 cores, 2, 2, 2 and 1 tile columns
        ((64, 256), ttnn.bfloat16),  # 2 tile rows x 8 on 4 cores: untilized in 4 column blocks of 4
        ((64, 196 * 32), ttnn.bfloat16),  # past the codegen threshold: square blocks, the last cut short
        ((32, 40 * 32), ttnn.float32),  # a wide row: tilized in square blocks
        ((5, 48), ttnn.float32),  # a partial tile column
        ((33, 64), ttnn.uint32),
        ((256,), ttnn.bfloat16),
        # Rows narrower than DRAM's 32-byte alignment or not a multiple of it: each row is its own page.
        ((3, 45, 70), ttnn.bfloat16),
        ((1, 1, 32, 8), ttnn.bfloat16),  # a gate's top-8 weights
        ((45, 1), ttnn.float32),
        ((2, 45, 100), ttnn.uint32),
    ],
)
def test_round_trip_is_exact_on_the_device(device, shape, dtype):
    x = _values(shape, dtype, seed=len(shape) + shape[-1])
    rm = ttnn.from_torch(x, dtype=dtype, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
    before = ttnn.host_traffic()
    tiled = ttnn.to_layout(rm, ttnn.TILE_LAYOUT)
    back = ttnn.to_layout(tiled, ttnn.ROW_MAJOR_LAYOUT)
    assert ttnn.host_traffic() - before == ttnn.HostTraffic()
    assert tiled.layout is ttnn.TILE_LAYOUT and back.layout is ttnn.ROW_MAJOR_LAYOUT
    for result in (tiled, back):
        assert torch.equal(
            ttnn.to_torch(result).to(torch.int64 if dtype is ttnn.uint32 else x.dtype),
            x.to(torch.int64 if dtype is ttnn.uint32 else x.dtype),
        )


def test_tile_padding_is_zero(device):
    x = torch.randn(40, 96).bfloat16() + 3
    tiled = ttnn.to_layout(ttnn.from_torch(x, dtype=ttnn.bfloat16, device=device), ttnn.TILE_LAYOUT)
    pages = tiled._read_shard_pages()[0]
    padded = untilize(pages, 64, 96)
    assert torch.equal(padded[:40], x.float()) and torch.equal(padded[40:], torch.zeros(24, 96))


def test_every_device_of_a_mesh_converts_its_own_shard(mesh):
    x = torch.randn(8 * 64, 128).bfloat16()
    t = ttnn.from_torch(x, dtype=ttnn.bfloat16, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
    before = ttnn.host_traffic()
    tiled = ttnn.to_layout(t, ttnn.TILE_LAYOUT)
    view = ttnn.reshape(tiled, (1, 64, 128))
    assert ttnn.host_traffic() - before == ttnn.HostTraffic()
    assert view.shape == (1, 64, 128) and view.buffer_address() == tiled.buffer_address()
    for d, shard in enumerate(device_shards(view)):
        assert torch.equal(shard, x[64 * d : 64 * (d + 1)].reshape(1, 64, 128)), f"device {d}"


@pytest.mark.parametrize("dtype", [ttnn.uint16, ttnn.bfloat16])
def test_top_k_rows_untilize_into_l1_and_back(device, dtype):
    """tt-metal's optimized MoE moves its gate's (B, 8) outputs to ROW_MAJOR in L1 (16-byte rows) for the
    dispatch, which reads them there."""
    x = torch.randint(0, 256, (1, 1, 32, 8), generator=torch.Generator().manual_seed(3))
    x = x.to(torch.int32) if dtype is ttnn.uint16 else x.bfloat16()
    tiled = ttnn.from_torch(x, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device)
    before = ttnn.host_traffic()
    rows = ttnn.to_layout(tiled, ttnn.ROW_MAJOR_LAYOUT, memory_config=ttnn.L1_MEMORY_CONFIG)
    view = ttnn.reshape(rows, (32, 1, 1, 8))  # a view of the L1 pages
    back = ttnn.to_layout(view, ttnn.TILE_LAYOUT, memory_config=ttnn.DRAM_MEMORY_CONFIG)
    assert ttnn.host_traffic() - before == ttnn.HostTraffic()
    assert rows.memory_config() == ttnn.L1_MEMORY_CONFIG and view.memory_config() == ttnn.L1_MEMORY_CONFIG
    assert view.buffer_address() == rows.buffer_address()
    assert torch.equal(ttnn.to_torch(view).to(x.dtype), x.reshape(32, 1, 1, 8))
    assert torch.equal(ttnn.to_torch(back).to(x.dtype), x.reshape(32, 1, 1, 8))


def test_other_conversions_are_counted_host_built_ins(device):
    x = torch.randn(3, 45, 70).bfloat16()
    rm = ttnn.from_torch(x, dtype=ttnn.bfloat16, device=device)
    before = ttnn.host_traffic()
    tiled = ttnn.to_layout(rm, ttnn.TILE_LAYOUT, dtype=ttnn.float32)  # a conversion of the dtype too
    reshaped = ttnn.reshape(tiled, (1, 3, 90, 35))  # new last dims: the pages change
    traffic = ttnn.host_traffic() - before
    assert traffic.host_computations == 2 and traffic.device_reads == 2
    assert [e[2] for e in traffic.events if e[1] == "host_computations"] == ["to_layout", "reshape"]
    assert torch.equal(ttnn.to_torch(reshaped).bfloat16(), x.reshape(1, 3, 90, 35))
    assert ttnn.to_layout(tiled, ttnn.TILE_LAYOUT) is tiled
