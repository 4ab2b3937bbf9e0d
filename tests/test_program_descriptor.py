"""Program-description types: construction, field round trip, equality and structural hash."""

import pytest
from ttnn_moe._C import program as pd


def _sample_program(runtime_value=7):
    cores = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(0, 0), pd.CoreCoord(1, 2))])
    reader = pd.KernelDescriptor(
        kernel_source="kernels/reader.cpp",
        core_ranges=cores,
        compile_time_args=[1, 2, 3],
        named_compile_time_args=[("cb_in0", 0), ("cb_out", 16)],
        defines=[("FUSE_SILU", "1")],
        runtime_args=[(pd.CoreCoord(0, 0), [runtime_value, 11]), (pd.CoreCoord(1, 2), [5])],
        common_runtime_args=[99],
        config=pd.ReaderConfigDescriptor(),
    )
    compute = pd.KernelDescriptor(
        kernel_source="kernels/compute.cpp",
        core_ranges=cores,
        config=pd.ComputeConfigDescriptor(math_fidelity=pd.MathFidelity.HiFi2, fp32_dest_acc_en=True),
    )
    cb = pd.CBDescriptor(
        total_size=2 * 2048,
        core_ranges=cores,
        format_descriptors=[pd.CBFormatDescriptor(buffer_index=0, data_format=pd.DataFormat.Float16_b, page_size=2048)],
    )
    sem = pd.SemaphoreDescriptor(id=0, core_ranges=cores, initial_value=3)
    return pd.ProgramDescriptor(kernels=[reader, compute], semaphores=[sem], cbs=[cb])


def test_fields_round_trip():
    program = _sample_program()
    reader, compute = program.kernels
    assert reader.kernel_source == "kernels/reader.cpp"
    assert reader.source_type == pd.KernelDescriptor.SourceType.FILE_PATH
    assert list(reader.compile_time_args) == [1, 2, 3]
    assert list(reader.named_compile_time_args) == [("cb_in0", 0), ("cb_out", 16)]
    assert list(reader.defines) == [("FUSE_SILU", "1")]
    (core0, args0), (core1, args1) = reader.runtime_args
    assert (core0.x, core0.y, list(args0)) == (0, 0, [7, 11])
    assert (core1.x, core1.y, list(args1)) == (1, 2, [5])
    assert list(reader.common_runtime_args) == [99]
    assert not reader.is_compute() and compute.is_compute()
    assert compute.config.math_fidelity == pd.MathFidelity.HiFi2
    assert compute.config.fp32_dest_acc_en is True
    cb = program.cbs[0]
    assert cb.total_size == 4096
    fmt = cb.format_descriptors[0]
    assert (fmt.buffer_index, fmt.data_format, fmt.page_size) == (0, pd.DataFormat.Float16_b, 2048)
    assert program.semaphores[0].initial_value == 3


def test_core_range_set_enumerates_row_major():
    cores = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(0, 0), pd.CoreCoord(1, 2))])
    assert cores.num_cores() == 6
    assert [(c.x, c.y) for c in cores.cores()] == [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2)]
    assert cores.contains(pd.CoreCoord(1, 2)) and not cores.contains(pd.CoreCoord(2, 0))


def test_equality_and_structural_hash():
    a, b = _sample_program(7), _sample_program(7)
    assert a == b
    changed_rt = _sample_program(8)
    assert a != changed_rt
    # Runtime-arg values do not change the structure, so a program cache can reuse the build.
    assert a.structural_hash() == changed_rt.structural_hash()
    changed_ct = _sample_program(7)
    reader = changed_ct.kernels[0]
    reader.compile_time_args = [1, 2, 4]
    changed_ct.kernels = [reader, changed_ct.kernels[1]]
    assert a.structural_hash() != changed_ct.structural_hash()


def test_mesh_program_descriptor():
    rng = pd.MeshCoordinateRange(pd.MeshCoordinate(0, 0), pd.MeshCoordinate(3, 7))
    mesh_program = pd.MeshProgramDescriptor([(rng, _sample_program())])
    ((got_range, got_program),) = mesh_program.mesh_programs
    assert got_range.contains(pd.MeshCoordinate(3, 7)) and not got_range.contains(pd.MeshCoordinate(4, 0))
    assert got_program == _sample_program()


@pytest.mark.parametrize(
    "fmt, size",
    [
        (pd.DataFormat.Float16_b, 2048),
        (pd.DataFormat.Float32, 4096),
        (pd.DataFormat.Bfp8_b, 1088),
        (pd.DataFormat.UInt32, 4096),
        (pd.DataFormat.UInt16, 2048),
    ],
)
def test_tile_sizes(fmt, size):
    assert pd.tile_size_bytes(fmt) == size


def test_tile_size_rejects_unknown_format():
    with pytest.raises(ValueError, match="unsupported data format 255"):
        pd.tile_size_bytes(pd.DataFormat.Invalid)


def test_programs_past_a_device_limit_are_rejected_naming_the_value_and_the_limit():
    from emu_fixtures import emulator_device_limits

    from tools.real_ttnn.misfit_programs import misfit_programs

    limits = emulator_device_limits(8, 8)
    cases = misfit_programs(limits)
    assert sorted(cases) == ["cb_index_past_limit", "cb_past_l1", "core_outside_grid", "semaphore_past_limit"]
    for name, (program, words) in cases.items():
        with pytest.raises(ValueError, match="^probe: ") as rejected:
            pd.check_program_fits("probe", program, limits)
        assert words in str(rejected.value), name
    # At each limit itself, the same programs fit.
    edge = pd.CoreCoord(limits.grid.x - 1, limits.grid.y - 1)
    cores = pd.CoreRangeSet([pd.CoreRange(edge, edge)])
    cb_format = pd.CBFormatDescriptor(
        buffer_index=limits.max_cbs_per_core - 1, data_format=pd.DataFormat.UInt32, page_size=16
    )
    fits = pd.ProgramDescriptor(
        kernels=[pd.KernelDescriptor(kernel_source="k.cpp", core_ranges=cores, config=pd.ReaderConfigDescriptor())],
        semaphores=[pd.SemaphoreDescriptor(id=limits.max_semaphores_per_core - 1, core_ranges=cores)],
        cbs=[pd.CBDescriptor(total_size=limits.l1_bytes_per_core, core_ranges=cores, format_descriptors=[cb_format])],
    )
    pd.check_program_fits("probe", fits, limits)


def test_the_circular_buffers_of_a_core_add_up():
    """Circular buffers of two CBs on one core add up: each fits alone, together they do not."""
    from emu_fixtures import emulator_device_limits

    limits = emulator_device_limits(2, 2)
    core = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(1, 1), pd.CoreCoord(1, 1))])
    half = limits.l1_bytes_per_core // 2 + 16

    def cb(index):
        fmt = pd.CBFormatDescriptor(buffer_index=index, data_format=pd.DataFormat.UInt32, page_size=16)
        return pd.CBDescriptor(total_size=half, core_ranges=core, format_descriptors=[fmt])

    with pytest.raises(ValueError, match=f"circular buffers of {2 * half} B on core \\(1, 1\\) exceed"):
        pd.check_program_fits("probe", pd.ProgramDescriptor(cbs=[cb(0), cb(1)]), limits)
    pd.check_program_fits("probe", pd.ProgramDescriptor(cbs=[cb(0)]), limits)
