"""The emulator's piece-by-piece host tensors: concat, get_device_tensors, copy_host_to_device_tensor,
dump_tensor, load_tensor."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from ttnn_moe import emu


@pytest.fixture
def mesh():
    mesh_device = emu.open_mesh_device(emu.MeshShape(1, 2))
    yield mesh_device
    emu.close_mesh_device(mesh_device)


def device_bytes(tensor):
    """Each device's raw page bytes, read straight from its DRAM."""
    return [chip.read(tensor.buffer_address(), tensor.page_size, tensor.nbytes) for chip in tensor.device().chips]


@pytest.mark.parametrize("dtype", [emu.bfloat16, emu.bfloat8_b, emu.bfloat4_b])
def test_pieces_written_per_device_equal_one_sharded_upload(mesh, dtype):
    """Experts converted one at a time, joined per device and written per device hold the very bytes
    from_torch writes for the whole stack sharded over the mesh."""
    stack = torch.randn(4, 64, 96, generator=torch.Generator().manual_seed(0))  # 2 experts per device
    whole = emu.from_torch(
        stack, dtype=dtype, layout=emu.TILE_LAYOUT, device=mesh, mesh_mapper=emu.ShardTensorToMesh(mesh, dim=0)
    )
    pieced = emu.allocate_tensor_on_device(emu.Shape([2, 64, 96]), dtype, emu.TILE_LAYOUT, mesh)
    for d, view in enumerate(emu.get_device_tensors(pieced)):
        experts = [emu.from_torch(stack[e : e + 1], dtype=dtype, layout=emu.TILE_LAYOUT) for e in (2 * d, 2 * d + 1)]
        emu.copy_host_to_device_tensor(emu.concat(experts, dim=0), view)
    for expected, got in zip(device_bytes(whole), device_bytes(pieced)):
        assert np.array_equal(expected, got)


def test_device_views_write_only_their_device(mesh):
    target = emu.from_torch(torch.zeros(32, 32), dtype=emu.float32, layout=emu.TILE_LAYOUT, device=mesh)
    views = emu.get_device_tensors(target)
    assert [v.device() for v in views] == mesh.get_devices()
    emu.copy_host_to_device_tensor(
        emu.from_torch(torch.ones(32, 32), dtype=emu.float32, layout=emu.TILE_LAYOUT), views[1]
    )
    values = emu.to_torch(target, mesh_composer=emu.ConcatMeshToTensor(mesh, dim=0))
    assert torch.equal(values[:32], torch.zeros(32, 32)) and torch.equal(values[32:], torch.ones(32, 32))


def test_dump_and_load_round_trip_memory_mapped(tmp_path, mesh):
    host = emu.from_torch(torch.randn(3, 32, 64), dtype=emu.bfloat8_b, layout=emu.TILE_LAYOUT)
    file = tmp_path / "t.tensor"
    emu.dump_tensor(file, host)
    loaded = emu.load_tensor(file)
    assert isinstance(loaded._host_pages[0], np.memmap)
    assert (list(loaded.shape), loaded.dtype, loaded.layout) == ([3, 32, 64], emu.bfloat8_b, emu.TILE_LAYOUT)
    assert torch.equal(emu.to_torch(loaded), emu.to_torch(host))
    header = json.loads(Path(file).read_bytes().split(b"\n")[0])
    assert header["shards"] == 1 and header["dtype"] == "bfloat8_b"
    halves = torch.arange(64 * 32, dtype=torch.float32).reshape(64, 32)
    sharded_host = emu.from_torch(halves, dtype=emu.float32, mesh_mapper=emu.ShardTensorToMesh(mesh, dim=0))
    on_mesh = emu.load_tensor(_dumped(tmp_path / "sharded.tensor", sharded_host), device=mesh)
    assert torch.equal(emu.to_torch(on_mesh, mesh_composer=emu.ConcatMeshToTensor(mesh, dim=0)), halves)


def _dumped(file, tensor):
    emu.dump_tensor(file, tensor)
    return file


def test_bad_files_and_bad_pieces_are_errors(tmp_path, mesh):
    (tmp_path / "junk").write_bytes(b"not a tensor\n")
    with pytest.raises(ValueError, match="not a tensor file"):
        emu.load_tensor(tmp_path / "junk")
    file = _dumped(tmp_path / "cut", emu.from_torch(torch.ones(32, 32), dtype=emu.bfloat16, layout=emu.TILE_LAYOUT))
    file.write_bytes(file.read_bytes()[:-10])
    with pytest.raises(ValueError, match="header describes"):
        emu.load_tensor(file)
    a = emu.from_torch(torch.ones(1, 32, 32), dtype=emu.bfloat16, layout=emu.TILE_LAYOUT)
    with pytest.raises(ValueError, match="leading dim"):
        emu.concat([a, a], dim=2)
    b = emu.from_torch(torch.ones(1, 32, 64), dtype=emu.bfloat16, layout=emu.TILE_LAYOUT)
    with pytest.raises(ValueError, match=r"tensors\[1\]"):
        emu.concat([a, b], dim=0)
    device_tensor = emu.allocate_tensor_on_device(emu.Shape([1, 32, 64]), emu.bfloat16, emu.TILE_LAYOUT, mesh)
    with pytest.raises(ValueError, match="does not match"):
        emu.copy_host_to_device_tensor(a, emu.get_device_tensors(device_tensor)[0])
    with pytest.raises(ValueError, match="1 shards, device_tensor lives on 2 devices"):
        emu.copy_host_to_device_tensor(b, device_tensor)


def test_these_calls_exist_in_the_real_ttnn():
    recorded = json.loads((Path(__file__).parent / "data" / "real_ttnn_0.81.1_api.json").read_text())
    names = {"concat", "get_device_tensors", "copy_host_to_device_tensor", "dump_tensor", "load_tensor"}
    assert names <= set(recorded["module"])
