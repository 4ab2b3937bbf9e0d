"""The hardware adapter's conversion to ttnn descriptors, against a test double of ttnn.

No hardware here: these tests check that every field of our descriptions reaches the
ttnn constructor it belongs to, with the 0.81.1 field names, and that attach() wires
the ops to the ttnn module. They cannot show that real ttnn accepts the result.
"""

import json
from pathlib import Path

import pytest
from fake_ttnn import FakeMemoryConfig, FakeMeshDevice, FakeTensor, Recorded, make_fake_ttnn
from ttnn_moe._C import program as pd

import ttnn_moe
from ttnn_moe import hardware


def _cores(x0, y0, x1, y1):
    return pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(x0, y0), pd.CoreCoord(x1, y1))])


def _sample_program():
    two_ranges = pd.CoreRangeSet(
        [pd.CoreRange(pd.CoreCoord(0, 0), pd.CoreCoord(1, 2)), pd.CoreRange(pd.CoreCoord(4, 5), pd.CoreCoord(4, 6))]
    )
    reader = pd.KernelDescriptor(
        kernel_source="/k/reader.cpp",
        core_ranges=two_ranges,
        compile_time_args=[130, 7],
        named_compile_time_args=[("cb_in", 3), ("cb_out", 16)],
        defines=[("FUSE", "1"), ("MODE", "fast")],
        runtime_args=[(pd.CoreCoord(0, 0), [1, 2, 3]), (pd.CoreCoord(4, 6), [9])],
        common_runtime_args=[42, 43],
        config=pd.ReaderConfigDescriptor(),
    )
    writer = pd.KernelDescriptor(
        kernel_source="/k/writer.cpp",
        source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
        core_ranges=_cores(0, 0, 0, 0),
        config=pd.DataMovementConfigDescriptor(processor=pd.DataMovementProcessor.RISCV_1, noc=pd.NOC.RISCV_1_default),
    )
    plain_writer = pd.KernelDescriptor(
        kernel_source="/k/w2.cpp", core_ranges=_cores(1, 1, 1, 1), config=pd.WriterConfigDescriptor()
    )
    compute = pd.KernelDescriptor(
        kernel_source="/k/compute.cpp",
        core_ranges=_cores(2, 0, 3, 1),
        config=pd.ComputeConfigDescriptor(
            math_fidelity=pd.MathFidelity.HiFi2,
            fp32_dest_acc_en=True,
            dst_full_sync_en=True,
            unpack_to_dest_mode=[pd.UnpackToDestMode.UnpackToDestFp32, pd.UnpackToDestMode.Default],
            bfp8_pack_precise=True,
            math_approx_mode=True,
        ),
    )
    cbs = [
        pd.CBDescriptor(
            total_size=4096,
            core_ranges=two_ranges,
            format_descriptors=[
                pd.CBFormatDescriptor(buffer_index=0, data_format=pd.DataFormat.Float16_b, page_size=2048),
                pd.CBFormatDescriptor(
                    buffer_index=5,
                    data_format=pd.DataFormat.Bfp8_b,
                    page_size=1088,
                    tile=pd.TileDescriptor(16, 32, True),
                ),
            ],
        ),
        pd.CBDescriptor(
            total_size=64,
            core_ranges=_cores(0, 0, 0, 0),
            format_descriptors=[pd.CBFormatDescriptor(buffer_index=2, data_format=pd.DataFormat.UInt32, page_size=32)],
        ),
    ]
    sems = [pd.SemaphoreDescriptor(id=3, core_type=pd.CoreType.ETH, core_ranges=_cores(1, 0, 1, 0), initial_value=5)]
    return pd.ProgramDescriptor(
        kernels=[reader, writer, plain_writer, compute], semaphores=sems, cbs=cbs, custom_program_hash=1234
    )


def _ranges(ttnn_crs):
    """A fake CoreRangeSet back to ((x0, y0), (x1, y1)) tuples."""
    return [((r.args[0].args[0], r.args[0].args[1]), (r.args[1].args[0], r.args[1].args[1])) for r in ttnn_crs.args[0]]


def _our_ranges(crs):
    return [((r.start.x, r.start.y), (r.end.x, r.end.y)) for r in crs.ranges]


def _data_fields(cls):
    """Public data attributes of one of our bound descriptor classes."""
    probe = {
        pd.ProgramDescriptor: lambda: pd.ProgramDescriptor(),
        pd.KernelDescriptor: lambda: pd.KernelDescriptor(kernel_source="", core_ranges=pd.CoreRangeSet()),
        pd.CBDescriptor: lambda: pd.CBDescriptor(total_size=0, core_ranges=pd.CoreRangeSet(), format_descriptors=[]),
        pd.CBFormatDescriptor: lambda: pd.CBFormatDescriptor(0, pd.DataFormat.Float32, 0),
        pd.SemaphoreDescriptor: lambda: pd.SemaphoreDescriptor(id=0, core_ranges=pd.CoreRangeSet()),
        pd.ComputeConfigDescriptor: lambda: pd.ComputeConfigDescriptor(),
        pd.DataMovementConfigDescriptor: lambda: pd.DataMovementConfigDescriptor(),
    }[cls]()
    return {n for n in dir(probe) if not n.startswith("_") and not callable(getattr(probe, n))}


def test_program_fields_all_carried_over():
    ttnn = make_fake_ttnn()
    ours = _sample_program()
    theirs = hardware.program_descriptor(ttnn, ours)

    assert isinstance(theirs, ttnn.ProgramDescriptor)
    assert set(theirs.fields) == _data_fields(pd.ProgramDescriptor)
    assert theirs.custom_program_hash == 1234
    assert len(theirs.kernels) == 4 and len(theirs.cbs) == 2 and len(theirs.semaphores) == 1

    for k_ours, k_theirs in zip(ours.kernels, theirs.kernels):
        # Metal 2.0 bindings have no ttnn.KernelDescriptor field: the adapter refuses them (test below).
        assert set(k_theirs.fields) == _data_fields(pd.KernelDescriptor) - {"bindings"}
        assert k_theirs.kernel_source == k_ours.kernel_source
        assert k_theirs.source_type == f"SourceType.{k_ours.source_type.name}"
        assert _ranges(k_theirs.core_ranges) == _our_ranges(k_ours.core_ranges)
        assert k_theirs.compile_time_args == list(k_ours.compile_time_args)
        assert k_theirs.named_compile_time_args == list(k_ours.named_compile_time_args)
        assert k_theirs.defines == list(k_ours.defines)
        assert [((c.args[0], c.args[1]), a) for c, a in k_theirs.runtime_args] == [
            ((c.x, c.y), list(a)) for c, a in k_ours.runtime_args
        ]
        assert k_theirs.common_runtime_args == list(k_ours.common_runtime_args)

    reader, writer, plain_writer, compute = theirs.kernels
    assert type(reader.config).__name__ == "ReaderConfigDescriptor"
    assert type(plain_writer.config).__name__ == "WriterConfigDescriptor"
    assert writer.source_type == "SourceType.SOURCE_CODE"
    assert set(writer.config.fields) == _data_fields(pd.DataMovementConfigDescriptor)
    assert writer.config.processor == "DataMovementProcessor.RISCV_1"
    assert writer.config.noc == "NOC.RISCV_1_default"
    assert set(compute.config.fields) == _data_fields(pd.ComputeConfigDescriptor)
    assert compute.config.math_fidelity == "MathFidelity.HiFi2"
    assert compute.config.fp32_dest_acc_en is True
    assert compute.config.dst_full_sync_en is True
    assert compute.config.bfp8_pack_precise is True
    assert compute.config.math_approx_mode is True
    assert compute.config.unpack_to_dest_mode == ["UnpackToDestMode.UnpackToDestFp32", "UnpackToDestMode.Default"]

    big, small = theirs.cbs
    # L1 shard contents are the emulator's stand-in for a sharded tensor: the adapter refuses them (test below).
    assert set(big.fields) == _data_fields(pd.CBDescriptor) - {"shard_cores"}
    assert big.total_size == 4096 and small.total_size == 64
    assert _ranges(big.core_ranges) == [((0, 0), (1, 2)), ((4, 5), (4, 6))]
    f0, f1 = big.format_descriptors
    assert set(f0.fields) == _data_fields(pd.CBFormatDescriptor)
    assert (f0.buffer_index, f0.data_format, f0.page_size, f0.tile) == (0, "DataType.BFLOAT16", 2048, None)
    assert (f1.buffer_index, f1.data_format, f1.page_size) == (5, "DataType.BFLOAT8_B", 1088)
    assert f1.tile.args == (16, 32, True)
    assert small.format_descriptors[0].data_format == "DataType.UINT32"

    (sem,) = theirs.semaphores
    assert set(sem.fields) == _data_fields(pd.SemaphoreDescriptor)
    assert (sem.id, sem.core_type, sem.initial_value) == (3, "CoreType.ETH", 5)
    assert _ranges(sem.core_ranges) == [((1, 0), (1, 0))]


def test_a_kernel_with_metal2_bindings_is_refused_naming_the_kernel():
    program = _sample_program()
    program.kernels[0].bindings = pd.KernelBindingsDescriptor(runtime_args=["first_page"])
    with pytest.raises(ValueError, match=rf"{program.kernels[0].kernel_source}.*Metal 2.0 bindings"):
        hardware.program_descriptor(make_fake_ttnn(), program)


def test_a_cb_with_l1_shard_contents_is_refused_naming_the_cb():
    program = _sample_program()
    cbs = list(program.cbs)
    cbs[0].add_shard(pd.CoreCoord(0, 0), bytes(64))
    program.cbs = cbs
    index = cbs[0].format_descriptors[0].buffer_index
    with pytest.raises(ValueError, match=rf"circular buffer {index} holds L1 shard contents for 1 core"):
        hardware.program_descriptor(make_fake_ttnn(), program)


def test_no_custom_hash_leaves_field_unset():
    ttnn = make_fake_ttnn()
    theirs = hardware.program_descriptor(ttnn, pd.ProgramDescriptor())
    assert "custom_program_hash" not in theirs.fields


def test_mesh_program_maps_each_device_range():
    ttnn = make_fake_ttnn()
    prog_a, prog_b = _sample_program(), pd.ProgramDescriptor()
    mesh = pd.MeshProgramDescriptor(
        mesh_programs=[
            (pd.MeshCoordinateRange(pd.MeshCoordinate(0, 0), pd.MeshCoordinate(0, 3)), prog_a),
            (pd.MeshCoordinateRange(pd.MeshCoordinate(1, 2), pd.MeshCoordinate(1, 2)), prog_b),
        ]
    )
    theirs = hardware.mesh_program_descriptor(ttnn, mesh)
    keys = [(k.args[0].args, k.args[1].args) for k, _ in theirs.items]
    assert keys == [((0, 0), (0, 3)), ((1, 2), (1, 2))]
    assert len(theirs.items[0][1].kernels) == 4 and theirs.items[1][1].kernels == []


def test_run_program_calls_generic_op_with_converted_descriptor():
    ttnn = make_fake_ttnn()
    io = ["in", "out"]
    hardware.run_program(ttnn, io, _sample_program())
    ((called_io, called_prog),) = ttnn.generic_op_calls
    assert called_io == io and isinstance(called_prog, ttnn.ProgramDescriptor)


def test_unsupported_data_format_names_it():
    ttnn = make_fake_ttnn()
    cb = pd.CBDescriptor(
        total_size=32,
        core_ranges=_cores(0, 0, 0, 0),
        format_descriptors=[pd.CBFormatDescriptor(0, pd.DataFormat.Tf32, 32)],
    )
    with pytest.raises(ValueError, match="Tf32"):
        hardware.program_descriptor(ttnn, pd.ProgramDescriptor(cbs=[cb]))


def test_tensor_arg_of_ttnn_tensor():
    ttnn = make_fake_ttnn()
    backend = hardware.HardwareTarget(ttnn)
    rm = FakeTensor([3, 100], ttnn.uint32, ttnn.ROW_MAJOR_LAYOUT, "dev", 0x4000, 4)
    arg = backend.to_arg(rm)
    assert (list(arg.shape), arg.dtype, arg.layout) == ([3, 100], pd.DataFormat.UInt32, pd.Layout.ROW_MAJOR)
    assert (arg.address, arg.page_size, arg.num_pages, arg.is_dram) == (0x4000, 400, 3, True)
    tiled = FakeTensor([2, 40, 64], ttnn.bfloat8_b, ttnn.TILE_LAYOUT, "dev", 0x8000, 1, padded_shape=[2, 64, 64])
    arg = backend.to_arg(tiled)
    assert (arg.page_size, arg.num_pages, arg.layout) == (1088, 2 * 2 * 2, pd.Layout.TILE)
    assert arg.alignment == 32  # DRAM, as the device reports it
    in_l1 = FakeTensor(
        [3, 100], ttnn.uint32, ttnn.ROW_MAJOR_LAYOUT, "dev", 0x4000, 4, memory_config=ttnn.L1_MEMORY_CONFIG
    )
    assert (backend.to_arg(in_l1).is_dram, backend.to_arg(in_l1).alignment) == (False, 16)
    sharded = FakeMemoryConfig(memory_layout="TensorMemoryLayout.HEIGHT_SHARDED")
    with pytest.raises(ValueError, match="interleaved tensors, got one with TensorMemoryLayout.HEIGHT_SHARDED"):
        backend.to_arg(FakeTensor([1, 32], ttnn.uint32, ttnn.ROW_MAJOR_LAYOUT, "dev", 0, 4, memory_config=sharded))
    with pytest.raises(ValueError, match="INT8"):
        backend.to_arg(FakeTensor([1, 32], "DataType.INT8", ttnn.ROW_MAJOR_LAYOUT, "dev", 0, 1))


def test_bfloat4_b_maps_both_ways():
    ttnn = make_fake_ttnn()
    assert hardware.ttnn_dtype(ttnn, pd.DataFormat.Bfp4_b) == ttnn.bfloat4_b
    weights = FakeTensor([2, 64, 96], ttnn.bfloat4_b, ttnn.TILE_LAYOUT, "dev", 0x8000, 1)
    arg = hardware.HardwareTarget(ttnn).to_arg(weights)
    assert (arg.dtype, arg.page_size, arg.num_pages) == (pd.DataFormat.Bfp4_b, 576, 2 * 2 * 3)


def test_device_limits_come_from_the_device():
    ttnn = make_fake_ttnn()
    backend = hardware.HardwareTarget(ttnn)
    wormhole = backend.device_limits(FakeMeshDevice(grid=(8, 8)))
    assert (wormhole.grid.x, wormhole.grid.y, wormhole.l1_bytes_per_core) == (8, 8, 1463968)
    assert (wormhole.max_cbs_per_core, wormhole.max_semaphores_per_core) == (32, 16)
    # the device's worker_core_from_logical_core for every core, row-major
    noc_cores = [(c.x, c.y) for c in wormhole.worker_noc_cores]
    assert noc_cores == [(x, y) for y in [1, 2, 3, 4, 5, 7, 8, 9] for x in [1, 2, 3, 4, 6, 7, 8, 9]]
    blackhole = backend.device_limits(FakeMeshDevice(grid=(13, 10), arch="Arch.BLACKHOLE"))
    assert (blackhole.grid.x, blackhole.grid.y, blackhole.max_cbs_per_core) == (13, 10, 64)
    with pytest.raises(ValueError, match="got QUASAR"):
        backend.device_limits(FakeMeshDevice(arch="Arch.QUASAR"))


def test_attach_registers_the_target_and_sets_every_op():
    ttnn = make_fake_ttnn()
    assert ttnn_moe.attach(ttnn) is ttnn
    for name, op in ttnn_moe.ops.OPS.items():
        assert getattr(ttnn, name) is op
    from ttnn_moe.ops import _launch

    tensor = FakeTensor([1, 32], ttnn.bfloat16, ttnn.ROW_MAJOR_LAYOUT, "dev", 0, 2)
    assert _launch.target_of("op", "x", tensor).name == "ttnn"


def test_attached_op_runs_through_ttnn_generic_op():
    """ttnn.scatter_moe_input on (fake) ttnn tensors: outputs allocated via ttnn, program converted,
    io = inputs then outputs, buffer addresses of the ttnn tensors in the runtime args."""
    ttnn = make_fake_ttnn()
    ttnn_moe.attach(ttnn)
    device = FakeMeshDevice(grid=(2, 1))
    x = FakeTensor([4, 32], ttnn.bfloat16, ttnn.ROW_MAJOR_LAYOUT, device, 0x1000, 2)
    counts = FakeTensor([2, 1], ttnn.uint32, ttnn.ROW_MAJOR_LAYOUT, device, 0x2000, 4)
    tokens = FakeTensor([2, 4], ttnn.uint32, ttnn.ROW_MAJOR_LAYOUT, device, 0x3000, 4)
    out, status = ttnn.scatter_moe_input(x, counts, tokens, strict=False)
    (shape, dtype, layout, dev, memcfg), (status_shape, *_) = ttnn.allocations
    assert (shape.args[0], dtype, layout, dev) == ([2, 4, 32], "DataType.BFLOAT16", "Layout.ROW_MAJOR", device)
    assert status_shape.args[0] == [1, ttnn_moe._C.ops.scatter_moe_input.STATUS_WORDS]
    ((io, program),) = ttnn.generic_op_calls
    assert io == [x, counts, tokens, out, status]
    reader, writer = program.kernels
    assert reader.kernel_source.endswith("scatter_moe_input/dataflow/reader_gather_rows.cpp")
    assert [args[:3] for _, args in reader.runtime_args] == [[0x1000, 0x2000, 0x3000]] * 2
    assert [args[0] for _, args in writer.runtime_args] == [out.buffer_address()] * 2


@pytest.mark.parametrize(
    "config, routes",
    [
        ("FABRIC_1D", ttnn_moe._C.ops.FabricTopology.Linear),
        ("FABRIC_1D_RING", ttnn_moe._C.ops.FabricTopology.Ring),
        ("FABRIC_2D", None),
    ],
)
def test_a_1d_fabric_config_gives_the_routes_of_its_topology(config, routes):
    """FABRIC_1D_RING (a torus-wired QUAD) makes the fabric ops route the shorter way round with no
    `topology` argument; under a 2D config the argument still decides."""
    ttnn = make_fake_ttnn()
    ttnn.set_fabric_config(getattr(ttnn.FabricConfig, config))
    assert hardware.HardwareTarget(ttnn).fabric_topology(FakeMeshDevice()) == routes


def test_import_attaches_to_an_importable_ttnn(tmp_path):
    # A stand-in `ttnn` package on the path: importing ttnn_moe must attach the ops to it,
    # and TTNN_MOE_NO_ATTACH=1 must leave it alone.
    import os
    import subprocess
    import sys

    (tmp_path / "ttnn").mkdir()
    (tmp_path / "ttnn" / "__init__.py").write_text("")
    probe = "import ttnn_moe, ttnn; print(hasattr(ttnn, 'moe_bmm'), hasattr(ttnn, 'all_to_all_dispatch_dense'))"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    attached = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    assert attached.returncode == 0, attached.stderr
    assert attached.stdout.split() == ["True", "True"]
    env["TTNN_MOE_NO_ATTACH"] = "1"
    left_alone = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    assert left_alone.returncode == 0, left_alone.stderr
    assert left_alone.stdout.split() == ["False", "False"]


REAL_API = json.loads((Path(__file__).parent / "data" / "real_ttnn_0.81.1_api.json").read_text())


def _public(obj) -> set[str]:
    return {name for name in dir(obj) if not name.startswith("_")}


def test_the_test_double_offers_nothing_the_real_ttnn_lacks():
    """Everything tests/fake_ttnn.py offers exists in the recorded real 0.81.1 surface
    (tools/real_ttnn/record_api.py), so the adapter cannot pass here by using what ttnn lacks."""
    ttnn = make_fake_ttnn()
    recording_only = {"generic_op_calls", "allocations"}
    offered = set(vars(ttnn)) - recording_only
    assert offered - set(REAL_API["module"]) == set()
    classes = REAL_API["classes"]
    for fake, real in ((FakeTensor, "Tensor"), (FakeMeshDevice, "MeshDevice"), (FakeMemoryConfig, "MemoryConfig")):
        assert _public(fake) - set(classes[real]) == set(), real
    for enum in ("MathFidelity", "UnpackToDestMode", "CoreType", "DataMovementProcessor", "NOC", "BufferType"):
        assert _public(getattr(ttnn, enum)) - set(classes[enum]) == set(), enum
    assert _public(ttnn.KernelDescriptor.SourceType) <= set(REAL_API["nested"]["KernelDescriptor.SourceType"])


def test_the_adapter_sets_only_fields_the_real_descriptors_have():
    """Every keyword the adapter passes to a ttnn descriptor class, and every attribute it sets
    later, is an attribute of that class in the real 0.81.1."""
    ttnn = make_fake_ttnn()
    converted = hardware.program_descriptor(ttnn, _sample_program())
    seen = []

    def walk(value):
        if isinstance(value, Recorded):
            seen.append(value)
            for field_value in value.fields.values():
                walk(field_value)
            for arg in value.args:
                walk(arg)
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item)

    walk(converted)
    assert {type(r).__name__ for r in seen} >= {"ProgramDescriptor", "KernelDescriptor", "CBDescriptor"}
    for recorded in seen:
        real = set(REAL_API["classes"][type(recorded).__name__])
        assert set(recorded.fields) - real == set(), type(recorded).__name__
