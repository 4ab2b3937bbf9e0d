"""Emulated dataflow: multi-core copies over CB rings, semaphores, and the diagnostics."""

import gc
import time

import numpy as np
import pytest
from emu_programs import KERNELS, cb, copy_program, core_set, kernel
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd


def _filled(dev, pages, page_size, seed=0):
    data = np.random.default_rng(seed).integers(0, 256, pages * page_size, dtype=np.uint8)
    src = dev.allocate(pages * page_size, page_size)
    dev.write(src, page_size, data)
    dst = dev.allocate(pages * page_size, page_size)
    return data, src, dst


def test_multi_core_split_copy_and_counters():
    dev = emu.open_device()
    page, pages = 2048, 50
    data, src, dst = _filled(dev, pages, page)
    cores = [(0, 0), (3, 1), (7, 7), (2, 5)]
    counters = emu.run_program(dev, copy_program(src, dst, page, pages, cores))
    np.testing.assert_array_equal(dev.read(dst, page, pages * page), data)
    assert counters["noc_bytes_read_dram"] == pages * page
    assert counters["noc_bytes_written_dram"] == pages * page
    assert counters["noc_bytes_read_l1"] == 0
    traffic = counters["dram_buffers"][src]
    assert traffic["unique_pages_read"] == pages and traffic["page_reads"] == pages
    assert counters["dram_buffers"][dst]["bytes_written"] == pages * page
    assert set(counters["core_busy"]) == set(cores)
    assert all(n > 0 for n in counters["core_busy"].values())
    # The device accumulates what its runs counted.
    assert dev.counters()["noc_bytes_read_dram"] == pages * page


def test_cb_ring_smaller_than_the_stream_wraps():
    dev = emu.open_device()
    page, pages = 64, 37  # row pages; 37 pages through a 3-page ring
    data, src, dst = _filled(dev, pages, page, seed=1)
    emu.run_program(dev, copy_program(src, dst, page, pages, [(1, 1)], cb_pages=3))
    np.testing.assert_array_equal(dev.read(dst, page, pages * page), data)


def test_reader_blocks_of_pages_through_a_ring():
    dev = emu.open_device()
    page, pages = 2048, 24
    data, src, dst = _filled(dev, pages, page, seed=2)
    emu.run_program(dev, copy_program(src, dst, page, pages, [(0, 0)], cb_pages=4, block=2))
    np.testing.assert_array_equal(dev.read(dst, page, pages * page), data)


def test_a_push_that_would_wrap_is_an_error():
    dev = emu.open_device()
    page, pages = 2048, 6
    _, src, dst = _filled(dev, pages, page)
    # Blocks of 2 pages in a 3-page ring: the second block straddles the ring end.
    pattern = r"reader_pages\.cpp.*core \(0, 0\).*push pages past the end of the ring"
    with pytest.raises(emu.EmulatorError, match=pattern):
        emu.run_program(dev, copy_program(src, dst, page, pages, [(0, 0)], cb_pages=3, block=2))


def _semaphore_program(dev, result, rounds):
    a, b = (0, 0), (5, 3)
    ax, ay = dev.worker_core_from_logical_core(*a)
    bx, by = dev.worker_core_from_logical_core(*b)
    both = pd.CoreRangeSet(
        [pd.CoreRange(pd.CoreCoord(*a), pd.CoreCoord(*a)), pd.CoreRange(pd.CoreCoord(*b), pd.CoreCoord(*b))]
    )
    rt = [(pd.CoreCoord(*a), [0, bx, by, rounds, result]), (pd.CoreCoord(*b), [1, ax, ay, rounds, result])]
    return pd.ProgramDescriptor(
        kernels=[kernel("semaphore_ping.cpp", both, pd.WriterConfigDescriptor(), runtime_args=rt)],
        semaphores=[pd.SemaphoreDescriptor(id=i, core_ranges=both, initial_value=0) for i in range(3)],
    )


def test_semaphores_local_set_remote_inc_and_wait():
    dev = emu.open_device()
    result = dev.allocate(32, 32)
    emu.run_program(dev, _semaphore_program(dev, result, rounds=9))
    words = dev.read(result, 32, 32).view(np.uint32)
    assert list(words[:2]) == [9, 9]


def test_deadlock_names_core_kernel_and_cb_quickly():
    dev = emu.open_device()
    cores = core_set(2, 3)
    program = pd.ProgramDescriptor(
        kernels=[kernel("wait_forever.cpp", cores, pd.ReaderConfigDescriptor(), named=[("cb_in", 5)])],
        cbs=[cb(5, 2, 2048, cores)],
    )
    emu.run_program(dev, pd.ProgramDescriptor(kernels=[], cbs=[]))  # warm, empty
    start = time.monotonic()
    with pytest.raises(emu.EmulatorError) as err:
        emu.run_program(dev, program)
    elapsed = time.monotonic() - start
    msg = str(err.value)
    assert "deadlock" in msg
    assert "wait_forever.cpp" in msg and "core (2, 3)" in msg
    assert "cb_wait_front(cb 5, 1 pages) but 0 of 2 pages are filled" in msg
    assert elapsed < 5  # the build may be cached or not; the detection itself is immediate


def test_l1_overflow_names_the_cbs():
    dev = emu.open_device()
    cores = core_set(0, 0)
    program = pd.ProgramDescriptor(
        kernels=[kernel("wait_forever.cpp", cores, pd.ReaderConfigDescriptor(), named=[("cb_in", 0)])],
        cbs=[cb(0, 300, 2048, cores), cb(1, 500, 2048, cores)],  # 600 KiB + 1000 KiB > 1464 KiB
    )
    with pytest.raises(emu.EmulatorError) as err:
        emu.run_program(dev, program)
    msg = str(err.value)
    assert "L1 overflow" in msg and "core (0, 0)" in msg
    assert "CB 0: 614400 bytes" in msg and "CB 1: 1024000 bytes" in msg


def _raw_read_program(bank_addr, size, l1_offset):
    cores = core_set(4, 2)
    return pd.ProgramDescriptor(
        kernels=[
            kernel(
                "read_raw.cpp",
                cores,
                pd.ReaderConfigDescriptor(),
                runtime_args=[(pd.CoreCoord(4, 2), [bank_addr, size, l1_offset])],
            )
        ],
        cbs=[cb(0, 1, 4096, cores)],
    )


def test_out_of_bounds_dram_read_names_kernel_and_core():
    dev = emu.open_device()
    buf = dev.allocate(12 * 2048, 2048)  # one page per bank: 2048 bytes of bank span
    emu.run_program(dev, _raw_read_program(buf, 2048, 0))  # the whole span is fine
    with pytest.raises(emu.EmulatorError) as err:
        emu.run_program(dev, _raw_read_program(buf + 1024, 2048, 0))
    msg = str(err.value)
    assert "read_raw.cpp" in msg and "core (4, 2)" in msg and "out of bounds" in msg


def test_misaligned_dram_read_is_an_error():
    dev = emu.open_device()
    buf = dev.allocate(12 * 2048, 2048)
    emu.run_program(dev, _raw_read_program(buf + 64, 64, 0))  # same alignment: fine
    with pytest.raises(emu.EmulatorError, match=r"read_raw\.cpp.*misaligned NOC transfer.*32 bytes"):
        emu.run_program(dev, _raw_read_program(buf + 8, 64, 0))


def test_runtime_arg_out_of_range_is_an_error():
    dev = emu.open_device()
    cores = core_set(1, 0)
    program = pd.ProgramDescriptor(
        kernels=[kernel("read_raw.cpp", cores, pd.ReaderConfigDescriptor(), runtime_args=[(pd.CoreCoord(1, 0), [0])])],
        cbs=[cb(0, 1, 4096, cores)],
    )
    with pytest.raises(emu.EmulatorError, match=r"get_arg_val\(1\) but only 1 runtime args"):
        emu.run_program(dev, program)


def test_missing_kernel_source_is_a_value_error():
    dev = emu.open_device()
    program = pd.ProgramDescriptor(
        kernels=[kernel(str(KERNELS / "no_such_kernel.cpp"), core_set(0, 0), pd.ReaderConfigDescriptor())]
    )
    with pytest.raises(ValueError, match="no_such_kernel.cpp"):
        emu.run_program(dev, program)


def test_core_outside_grid_is_a_value_error():
    dev = emu.open_device(grid=(2, 2))
    program = pd.ProgramDescriptor(kernels=[kernel("wait_forever.cpp", core_set(2, 0), pd.ReaderConfigDescriptor())])
    with pytest.raises(ValueError, match=r"\(2, 0\).*2x2 grid"):
        emu.run_program(dev, program)


def test_tensor_accessor_args_encoding():
    # [ArgsConfig (IsDram = 2), page size aligned to 32 B (DRAM) or 16 B (L1)]
    assert emu.tensor_accessor_args(2048, True) == [2, 2048]
    assert emu.tensor_accessor_args(6, True) == [2, 32]
    assert emu.tensor_accessor_args(6, False) == [0, 16]


def test_mesh_program_runs_each_device():
    mesh = emu.Mesh(1, 2, grid=(2, 2))
    d0, d1 = mesh.devices()
    page, pages = 2048, 5
    data0, src0, dst0 = _filled(d0, pages, page, seed=3)
    data1, src1, dst1 = _filled(d1, pages, page, seed=4)
    assert (src0, dst0) == (src1, dst1)  # same allocation sequence: one program serves both
    prog = copy_program(src0, dst0, page, pages, [(0, 0), (1, 1)])
    rng = pd.MeshCoordinateRange(pd.MeshCoordinate(0, 0), pd.MeshCoordinate(0, 1))
    counters = emu.run_mesh_program(mesh, pd.MeshProgramDescriptor([(rng, prog)]))
    np.testing.assert_array_equal(d0.read(dst0, page, pages * page), data0)
    np.testing.assert_array_equal(d1.read(dst1, page, pages * page), data1)
    assert counters["noc_bytes_read_dram"] == 2 * pages * page
    assert set(counters["devices"]) == {0, 1}


def test_row_pages_smaller_than_dram_alignment_stride_like_hardware():
    # 48-byte rows sit in each DRAM bank at a 64-byte stride; a kernel that passes
    # the raw 48-byte page size to its TensorAccessor must still find every page.
    dev = emu.open_device()
    page, pages = 48, 30
    data, src, dst = _filled(dev, pages, page, seed=3)
    # A one-page ring keeps every L1 side of the transfers at the same 32-byte phase as DRAM.
    emu.run_program(dev, copy_program(src, dst, page, pages, [(0, 0), (1, 0)], cb_pages=1))
    np.testing.assert_array_equal(dev.read(dst, page, pages * page), data)


_ADDR_GEN_KERNEL = """
#include "api/dataflow/dataflow_api.h"
// Counts pages whose NOC address differs from bank (id % banks), offset base + (id / banks) * STRIDE + offset.
template <typename Gen>
uint32_t mismatches(const Gen& gen, uint32_t base, uint32_t stride) {
    uint32_t bad = 0;
    for (uint32_t id = 0; id < 3 * NUM_DRAM_BANKS + 1; ++id) {
        for (uint32_t offset : {0u, 8u}) {
            const uint64_t want = get_noc_addr_from_bank_id<true>(
                id % NUM_DRAM_BANKS, base + (id / NUM_DRAM_BANKS) * stride + offset);
            bad += gen.get_noc_addr(id, offset) != want;
            bad += get_noc_addr(id, gen, offset) != want;
        }
    }
    return bad;
}
void kernel_main() {
    constexpr uint32_t base = 4096;
    const uint32_t scratch = get_semaphore(0);
    auto* out = reinterpret_cast<volatile uint32_t*>(scratch);
    out[0] = mismatches(InterleavedAddrGen<true>{.bank_base_address = base, .page_size = PAGE}, base, PAGE_STRIDE);
    out[1] = mismatches(InterleavedAddrGenFast<true>{.bank_base_address = base, .page_size = PAGE,
                                                     .data_format = DataFormat::Float16_b}, base, PAGE_STRIDE);
    out[2] = mismatches(InterleavedPow2AddrGen<true>{.bank_base_address = base, .log_base_2_of_page_size = LOG2},
                        base, LOG2_STRIDE);
    out[3] = mismatches(InterleavedPow2AddrGenFast<true>{.bank_base_address = base, .log_base_2_of_page_size = LOG2},
                        base, LOG2_STRIDE);
    noc_async_write(scratch, get_noc_addr_from_bank_id<true>(0, get_arg_val<uint32_t>(0)), 16);
    noc_async_write_barrier();
}
"""


@pytest.mark.parametrize(
    "page, page_stride, log2, log2_stride",
    [(100, 128, 4, 32), (32, 32, 6, 64), (2048, 2048, 5, 32)],
    ids=["page100_log4", "page32_log6", "page2048_log5"],
)
def test_interleaved_address_generators_stride_pages_by_the_dram_alignment(page, page_stride, log2, log2_stride):
    # DRAM pages of the legacy generators start at 32-byte aligned bank offsets: a 100-byte page
    # takes 128 bytes, a 16-byte (log2 4) page 32.
    dev = emu.open_device()
    out = dev.allocate(32, 32)
    k = pd.KernelDescriptor(
        kernel_source=_ADDR_GEN_KERNEL,
        source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
        core_ranges=core_set(0, 0),
        defines=[
            ("PAGE", str(page)),
            ("PAGE_STRIDE", str(page_stride)),
            ("LOG2", str(log2)),
            ("LOG2_STRIDE", str(log2_stride)),
        ],
        runtime_args=[(pd.CoreCoord(0, 0), [out])],
        config=pd.WriterConfigDescriptor(),
    )
    emu.run_program(dev, pd.ProgramDescriptor(kernels=[k]))
    assert dev.read(out, 32, 32).view(np.uint32)[:4].tolist() == [0, 0, 0, 0]


def _read_then_use(dev, src, dst, mode):
    cores = core_set(3, 3)
    program = pd.ProgramDescriptor(
        kernels=[
            kernel(
                "read_then_use.cpp",
                cores,
                pd.ReaderConfigDescriptor(),
                runtime_args=[(pd.CoreCoord(3, 3), [src, 64, mode, dst])],
            )
        ],
        cbs=[cb(0, 1, 64, cores)],
    )
    return emu.run_program(dev, program)


@pytest.mark.parametrize(
    "mode, misuse",
    [
        (1, r"cb_push_back\(cb 0\) while 1 NOC read\(s\) into that memory are still outstanding"),
        (2, r"kernel_main returned while 1 NOC read\(s\)"),
        (3, r"noc write from L1 0x[0-9a-f]+ while 1 NOC read\(s\) into that memory are still outstanding"),
    ],
)
def test_a_forgotten_read_barrier_is_an_error_naming_kernel_and_core(mode, misuse):
    # Reads land in L1 only at the read barrier, so using the data without one cannot pass silently.
    dev = emu.open_device()
    data = np.arange(12 * 64, dtype=np.uint8).astype(np.uint8)
    src, dst = dev.allocate(12 * 64, 64), dev.allocate(12 * 64, 64)
    dev.write(src, 64, data)
    _read_then_use(dev, src, dst, 0)  # with the barrier: the page goes through
    np.testing.assert_array_equal(dev.read(dst, 64, 64), data[:64])
    with pytest.raises(emu.EmulatorError, match=r"read_then_use\.cpp.*core \(3, 3\).*" + misuse):
        _read_then_use(dev, src, dst, mode)


def _read_while_dram_changes(dev, page, out, other_kernel):
    a, b = (1, 2), (4, 5)
    ax, ay = dev.worker_core_from_logical_core(*a)
    bx, by = dev.worker_core_from_logical_core(*b)
    cores = pd.CoreRangeSet(
        [pd.CoreRange(pd.CoreCoord(*c), pd.CoreCoord(*c)) for c in ((a, b) if other_kernel else (a,))]
    )
    runtime_args = [(pd.CoreCoord(*a), [1 if other_kernel else 0, page, out, bx, by])]
    if other_kernel:
        runtime_args.append((pd.CoreCoord(*b), [2, page, out, ax, ay]))
    program = pd.ProgramDescriptor(
        kernels=[kernel("read_while_dram_changes.cpp", cores, pd.ReaderConfigDescriptor(), runtime_args=runtime_args)],
        cbs=[cb(0, 1, 64, cores), cb(1, 1, 64, cores)],
        semaphores=[pd.SemaphoreDescriptor(id=0, core_ranges=cores, initial_value=0)],
    )
    emu.run_program(dev, program)


@pytest.mark.parametrize("other_kernel", [False, True], ids=["own_write", "other_core_writes_while_parked"])
def test_a_read_delivers_the_dram_bytes_as_they_were_when_issued(other_kernel):
    # The page changes between the read and its barrier: by the reading kernel's own NOC write, or
    # by another core while the reader waits on a semaphore. The read still delivers the old bytes.
    dev = emu.open_device()
    data = np.random.default_rng(5).integers(0, 256, 12 * 64, dtype=np.uint8)
    page, out = dev.allocate(12 * 64, 64), dev.allocate(12 * 64, 64)
    dev.write(page, 64, data)
    _read_while_dram_changes(dev, page, out, other_kernel)
    np.testing.assert_array_equal(dev.read(out, 64, 64), data[:64])
    np.testing.assert_array_equal(dev.read(page, 64, 64), np.full(64, 0x5A, dtype=np.uint8))


SEMAPHORE_0_L1_OFFSET = 0x18000  # the emulator's semaphore 0 (README: semaphore i at 0x18000 + 16 i)


@pytest.mark.parametrize("zero_bytes", [16, 40, 60])
def test_circular_buffer_object_write_zeros_and_semaphore_by_l1_offset(zero_bytes):
    dev = emu.open_device()
    result = dev.allocate(64, 64)
    cores = core_set(0, 0)
    program = pd.ProgramDescriptor(
        kernels=[
            kernel(
                "circular_buffer_object.cpp",
                cores,
                pd.WriterConfigDescriptor(),
                runtime_args=[(pd.CoreCoord(0, 0), [result, zero_bytes, SEMAPHORE_0_L1_OFFSET])],
            )
        ],
        cbs=[cb(0, 1, 64, cores)],
        semaphores=[pd.SemaphoreDescriptor(id=0, core_ranges=cores, initial_value=0)],
    )
    emu.run_program(dev, program)
    page = dev.read(result, 64, 64)
    assert (page[:zero_bytes] == 0).all()
    assert (page[zero_bytes:60] == 0xAB).all()
    assert page[60:].view(np.uint32)[0] == 7  # set through the bare offset, read back through get_semaphore(0)


def _write_then_pop(dev, dst, mode):
    cores = core_set(2, 6)
    program = pd.ProgramDescriptor(
        kernels=[
            kernel(
                "write_then_pop.cpp",
                cores,
                pd.WriterConfigDescriptor(),
                runtime_args=[(pd.CoreCoord(2, 6), [dst, 64, mode])],
            )
        ],
        cbs=[cb(0, 1, 64, cores)],
    )
    return emu.run_program(dev, program)


def test_popping_pages_a_write_still_reads_is_an_error():
    dev = emu.open_device()
    dst = dev.allocate(12 * 64, 64)
    _write_then_pop(dev, dst, 0)  # flushed before the pop: fine
    expected = (np.arange(64) * 7 + 1).astype(np.uint8)
    np.testing.assert_array_equal(dev.read(dst, 64, 64), expected)
    with pytest.raises(
        emu.EmulatorError,
        match=r"write_then_pop\.cpp.*core \(2, 6\).*cb_pop_front\(cb 0, 1\) "
        r"while 1 NOC write\(s\) from those pages are still in flight",
    ):
        _write_then_pop(dev, dst, 1)


def test_the_next_run_on_every_core_starts_with_zeroed_l1():
    # A run's L1 slots go back to the pool, which drops their pages (in runs of neighbouring slots);
    # the next run on them reads zeros, not what the last one left.
    dev = emu.open_device()
    page = 64
    coords = [pd.CoreCoord(x, y) for y in range(8) for x in range(8)]
    cores = core_set(0, 0, 7, 7)
    pattern = np.arange(1, page + 1, dtype=np.uint8)
    src = dev.allocate(12 * page, page)  # bank 0's first page at `src`
    dev.write(src, page, np.tile(pattern, 12))
    out = dev.allocate(12 * len(coords) * page, page)  # bank 0 holds pages 0, 12, 24, ... at out + j * page

    def program(fill: bool, dump: bool):
        kernels = []
        if fill:  # CB 0's page <- the pattern
            runtime = [(c, [src, page, 0]) for c in coords]
            kernels.append(kernel("read_raw.cpp", cores, pd.ReaderConfigDescriptor(), runtime_args=runtime))
        if dump:  # DRAM <- CB 0's page, core j at page 12 j
            runtime = [(c, [out + j * page, page, 0]) for j, c in enumerate(coords)]
            kernels.append(kernel("write_raw.cpp", cores, pd.WriterConfigDescriptor(), runtime_args=runtime))
        return pd.ProgramDescriptor(kernels=kernels, cbs=[cb(0, 1, page, cores)])

    def dumped() -> np.ndarray:
        pages = dev.read(out, page, 12 * len(coords) * page).reshape(-1, page)
        return pages[::12]

    emu.run_program(dev, program(fill=True, dump=True))  # the reader runs first: the dump sees the fill
    assert (dumped() == pattern).all()
    emu.run_program(dev, program(fill=True, dump=False))
    emu.run_program(dev, program(fill=False, dump=True))
    assert not dumped().any()


def _containers(value) -> int:
    """The dicts, lists and tuples in a counters value (what Python's cyclic collector tracks)."""
    if isinstance(value, dict):
        return 1 + sum(_containers(k) + _containers(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return 1 + sum(_containers(v) for v in value)
    return 0


@pytest.mark.parametrize("collector_on", [True, False])
def test_a_runs_counters_start_no_garbage_collection_and_leave_the_collector_as_it_was(collector_on):
    # Every 700 new containers start a collection (gc.get_threshold()); the counters of a 64-core run
    # are well past that, made with the collector paused.
    dev = emu.open_device()
    page, pages = 2048, 64 * 16
    _, src, dst = _filled(dev, pages, page)
    cores = [(x, y) for y in range(8) for x in range(8)]
    program = copy_program(src, dst, page, pages, cores)
    collections = []

    def note(phase, info):
        if phase == "start":
            collections.append(info["generation"])

    was_on = gc.isenabled()
    gc.enable() if collector_on else gc.disable()
    gc.callbacks.append(note)
    try:
        counters = emu.run_program(dev, program)
        during = len(collections)  # nothing here makes a container
        on_after = gc.isenabled()
    finally:
        gc.callbacks.remove(note)
        gc.enable() if was_on else gc.disable()
    assert on_after == collector_on
    assert during == 0
    assert _containers(counters) > 2 * gc.get_threshold()[0]
