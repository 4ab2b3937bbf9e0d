"""tt-metal's stateful NOC calls (a command buffer programmed once by ..._set_state, transfers reusing it by
..._with_state), transaction-id reads and their per-id barrier, and DPRINT's format form: what moe_compute's
dm0 / dm1 and moe_gate_mm's data-movement kernels stream their weights and ring signals with."""

import numpy as np
import pytest
from emu_programs import cb, core_set, kernel
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd


def _page_copy(dev, src, dst, page_size, pages, mode):
    cores = core_set(2, 1)
    rt = [(pd.CoreCoord(2, 1), [src, dst, page_size, pages, mode])]
    program = pd.ProgramDescriptor(
        kernels=[kernel("stateful_page_copy.cpp", cores, pd.ReaderConfigDescriptor(), runtime_args=rt)],
        cbs=[cb(0, 3, page_size, cores)],
    )
    return emu.run_program(dev, program)


@pytest.mark.parametrize("page_size, pages", [(2048, 30), (8192, 13), (64, 25)])
def test_set_state_reads_with_transaction_ids_and_with_state_writes_copy_every_page(page_size, pages):
    dev = emu.open_device()
    data = np.random.default_rng(page_size).integers(0, 256, pages * page_size, dtype=np.uint8)
    src, dst = dev.allocate(pages * page_size, page_size), dev.allocate(pages * page_size, page_size)
    dev.write(src, page_size, data)
    counters = _page_copy(dev, src, dst, page_size, pages, 0)
    np.testing.assert_array_equal(dev.read(dst, page_size, pages * page_size), data)
    assert counters["noc_bytes_read_dram"] == pages * page_size
    assert counters["noc_bytes_written_dram"] == pages * page_size


def test_a_transaction_id_barrier_lands_only_the_reads_of_that_id():
    dev = emu.open_device()
    data = np.arange(2 * 2048, dtype=np.uint32).view(np.uint8)[: 2 * 2048]
    src, dst = dev.allocate(2 * 2048, 2048), dev.allocate(2 * 2048, 2048)
    dev.write(src, 2048, data)
    # The id-1 slot is written out after its barrier; the id-2 slot, still outstanding, cannot be.
    pattern = r"stateful_page_copy\.cpp.*core \(2, 1\).*noc write from L1 0x[0-9a-f]+ while 1 NOC read\(s\)"
    with pytest.raises(emu.EmulatorError, match=pattern):
        _page_copy(dev, src, dst, 2048, 1, 1)


def test_a_with_state_read_before_any_set_state_is_an_error():
    dev = emu.open_device()
    src, dst = dev.allocate(2048, 2048), dev.allocate(2048, 2048)
    with pytest.raises(emu.EmulatorError, match=r"noc_async_read_one_packet_with_state before .*set_state"):
        _page_copy(dev, src, dst, 2048, 1, 2)


def test_a_one_packet_state_larger_than_a_packet_is_an_error():
    dev = emu.open_device()
    src, dst = dev.allocate(16384, 16384), dev.allocate(16384, 16384)
    with pytest.raises(emu.EmulatorError, match=r"noc_async_read_one_packet_set_state: size exceeds one packet"):
        _page_copy(dev, src, dst, 16384, 1, 0)


@pytest.mark.parametrize("rounds", [1, 5])
def test_inline_writes_through_a_programmed_command_buffer_reach_the_programmed_word(rounds):
    dev = emu.open_device()
    result = dev.allocate(32, 32)
    a, b = (1, 2), (6, 4)
    ax, ay = dev.worker_core_from_logical_core(*a)
    bx, by = dev.worker_core_from_logical_core(*b)
    both = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(*c), pd.CoreCoord(*c)) for c in (a, b)])
    rt = [(pd.CoreCoord(*a), [0, bx, by, rounds, result]), (pd.CoreCoord(*b), [1, ax, ay, rounds, result])]
    program = pd.ProgramDescriptor(
        kernels=[kernel("stateful_signals.cpp", both, pd.WriterConfigDescriptor(), runtime_args=rt)],
        semaphores=[pd.SemaphoreDescriptor(id=i, core_ranges=both, initial_value=0) for i in range(3)],
        cbs=[cb(0, 1, 32, both)],
    )
    emu.run_program(dev, program)
    # Semaphore 0 holds the last round written; semaphore 2 the value programmed once with set_val.
    assert dev.read(result, 32, 32).view(np.uint32)[:2].tolist() == [rounds, 7]
