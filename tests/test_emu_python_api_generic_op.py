"""generic_op on emulator tensors: a small dataflow kernel of our own (tests/kernels/pyemu)
run through ttnn_moe.emu.generic_op on a device and on a mesh, TensorArgs as the program
factory sees them, the run's counters, and bad calls."""

from pathlib import Path

import pytest
import torch
import ttnn_moe.emu as ttnn
from emu_fixtures import emu_device_fixture, emu_mesh_fixture
from ttnn_moe._C import emu as _emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu.tensor import device_shards

KERNEL = Path(__file__).resolve().parent / "kernels" / "pyemu" / "add_to_pages.cpp"
CORES = [(0, 0), (1, 0), (0, 1)]


device = emu_device_fixture(grid=(2, 2))
mesh = emu_mesh_fixture(2, 4, grid=(2, 2))


def add_program(src: ttnn.Tensor, dst: ttnn.Tensor, addend: int) -> pd.ProgramDescriptor:
    """dst = src + addend (uint32), pages split over CORES; built from the tensors' TensorArgs."""
    a, b = src.to_arg(), dst.to_arg()
    compile_time_args = list(_emu.tensor_accessor_args(a.page_size)) + list(_emu.tensor_accessor_args(b.page_size))
    cores = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(x, y), pd.CoreCoord(x, y)) for x, y in CORES])
    per_core = -(-a.num_pages // len(CORES))
    runtime_args = []
    for i, (x, y) in enumerate(CORES):
        start = min(i * per_core, a.num_pages)
        count = min(per_core, a.num_pages - start)
        runtime_args.append((pd.CoreCoord(x, y), [a.address, b.address, start, count, addend, a.page_size]))
    kernel = pd.KernelDescriptor(
        kernel_source=str(KERNEL),
        core_ranges=cores,
        compile_time_args=compile_time_args,
        named_compile_time_args=[("cb_scratch", 0)],
        runtime_args=runtime_args,
        config=pd.ReaderConfigDescriptor(),
    )
    scratch = pd.CBDescriptor(
        total_size=a.page_size,
        core_ranges=cores,
        format_descriptors=[
            pd.CBFormatDescriptor(buffer_index=0, data_format=pd.DataFormat.UInt32, page_size=a.page_size)
        ],
    )
    return pd.ProgramDescriptor(kernels=[kernel], cbs=[scratch])


def _values(shape, seed):
    return torch.randint(0, 2**31, shape, generator=torch.Generator().manual_seed(seed), dtype=torch.int64)


@pytest.mark.parametrize(
    "layout, shape", [(ttnn.TILE_LAYOUT, (3, 40, 70)), (ttnn.ROW_MAJOR_LAYOUT, (5, 8))], ids=["tile", "row_major"]
)
def test_generic_op_on_a_device(device, layout, shape):
    x = _values(shape, seed=1)
    src = ttnn.from_torch(x, dtype=ttnn.uint32, layout=layout, device=device)
    dst = ttnn.allocate_tensor_on_device(shape, ttnn.uint32, layout, device)
    out = ttnn.generic_op([src, dst], add_program(src, dst, addend=5))
    assert out is dst
    assert torch.equal(ttnn.to_torch(out).to(torch.int64), x + 5)
    counters = ttnn.last_run_counters()
    nbytes = src.num_pages * src.page_size
    assert counters["noc_bytes_read_dram"] == nbytes
    assert counters["noc_bytes_written_dram"] == nbytes
    assert counters["dram_buffers"][src.buffer_address()]["unique_pages_read"] == src.num_pages


def test_program_descriptor_runs_on_every_device_of_a_mesh(mesh):
    x = _values((2, 32, 64), seed=2)
    src = ttnn.from_torch(x, dtype=ttnn.uint32, layout=ttnn.TILE_LAYOUT, device=mesh)
    dst = ttnn.allocate_tensor_on_device(src.shape, ttnn.uint32, ttnn.TILE_LAYOUT, mesh)
    ttnn.generic_op([src, dst], add_program(src, dst, addend=7))
    assert all(torch.equal(s.to(torch.int64), x + 7) for s in device_shards(dst))
    assert ttnn.last_run_counters()["noc_bytes_read_dram"] == 8 * src.num_pages * src.page_size


def test_mesh_program_descriptor_runs_per_device_programs(mesh):
    rows, cols = mesh.shape
    x = _values((32, 32), seed=3)
    src = ttnn.from_torch(x, dtype=ttnn.uint32, layout=ttnn.TILE_LAYOUT, device=mesh)
    dst = ttnn.allocate_tensor_on_device(src.shape, ttnn.uint32, ttnn.TILE_LAYOUT, mesh)
    programs = []
    for r in range(rows):
        for c in range(cols):
            at = pd.MeshCoordinate(r, c)
            programs.append((pd.MeshCoordinateRange(at, at), add_program(src, dst, addend=100 * r + c)))
    ttnn.generic_op([src, dst], pd.MeshProgramDescriptor(programs))
    for k, shard in enumerate(device_shards(dst)):
        assert torch.equal(shard.to(torch.int64), x + 100 * (k // cols) + k % cols), k


def test_generic_op_bad_calls(device, mesh):
    on_device = ttnn.from_torch(torch.zeros(32, 32, dtype=torch.int64), device=device)
    on_mesh = ttnn.from_torch(torch.zeros(32, 32, dtype=torch.int64), device=mesh)
    with pytest.raises(ValueError, match="different devices"):
        ttnn.generic_op([on_device, on_mesh], pd.ProgramDescriptor())
    # A single device is a 1x1 mesh: a MeshProgramDescriptor there holds exactly the program of (0, 0).
    with pytest.raises(ValueError, match=r"must hold one program for the 1x1 mesh \(0, 0\), got 0 entries"):
        ttnn.generic_op([on_device], pd.MeshProgramDescriptor())
    elsewhere = pd.MeshCoordinateRange(pd.MeshCoordinate(0, 1), pd.MeshCoordinate(0, 1))
    with pytest.raises(ValueError, match=r"must hold one program for the 1x1 mesh \(0, 0\), got 1 entries"):
        ttnn.generic_op([on_device], pd.MeshProgramDescriptor([(elsewhere, pd.ProgramDescriptor())]))
    with pytest.raises(TypeError, match="str"):
        ttnn.generic_op([on_device], "program")
    with pytest.raises(ValueError, match="host tensor"):
        ttnn.generic_op([ttnn.from_torch(torch.zeros(4))], pd.ProgramDescriptor())
    with pytest.raises(ValueError, match="at least one io tensor"):
        ttnn.generic_op([], pd.ProgramDescriptor())
