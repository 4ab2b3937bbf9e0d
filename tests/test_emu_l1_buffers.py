"""L1 buffers (L1-resident tensors): interleaved over the worker cores or every page on one core, kept by the
device between programs, copied into the L1 of a run's cores and back; kernels reach the interleaved ones
through their L1 banks (TensorAccessor) and any of them over the NOC."""

import numpy as np
import pytest
import torch
import ttnn_moe.emu as ttnn
from emu_programs import cb, core_set, kernel
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd

L1_SIZE = 1464 * 1024


def test_interleaved_pages_sit_on_the_banks_a_tensor_accessor_reads():
    dev = emu.open_device()  # 8x8: 64 banks, so pages 64 .. 99 take each bank's second slot
    page, pages = 48, 100
    data = np.random.default_rng(0).integers(0, 256, page * pages, dtype=np.uint8)
    src = dev.allocate_l1(pages, page)
    dev.write_l1(src, data)
    dst = dev.allocate(page * pages, page)
    cores = core_set(0, 0)
    core = pd.CoreCoord(0, 0)
    program = pd.ProgramDescriptor(
        kernels=[
            kernel("reader_pages.cpp", cores, pd.ReaderConfigDescriptor(), emu.tensor_accessor_args(page, False),
                   [("cb_out", 0)], [(core, [src, 0, pages, 1])]),
            kernel("writer_pages.cpp", cores, pd.WriterConfigDescriptor(), emu.tensor_accessor_args(page, True),
                   [("cb_in", 0)], [(core, [dst, 0, pages])]),
        ],
        cbs=[cb(0, 2, page, cores)],
    )  # fmt: skip
    emu.run_program(dev, program)
    np.testing.assert_array_equal(dev.read(dst, page, page * pages), data)
    np.testing.assert_array_equal(dev.read_l1(src, page * pages), data)
    # The layout itself: page 70 lives on bank 6, logical core (6, 0), one 48-byte page above the buffer's address.
    x, y = dev.worker_core_from_logical_core(6, 0)
    bump = pd.ProgramDescriptor(
        kernels=[kernel("increment_remote_l1.cpp", cores, pd.WriterConfigDescriptor(),
                        runtime_args=[(core, [x, y, src + page, page // 4])])],
        cbs=[cb(0, 1, page, cores)],
    )  # fmt: skip
    emu.run_program(dev, bump)
    want = data.reshape(pages, page).copy()
    want[70] = (want[70].view(np.uint32) + 1).view(np.uint8)
    np.testing.assert_array_equal(dev.read_l1(src, page * pages).reshape(pages, page), want)


def test_a_one_core_buffer_keeps_what_kernels_write_between_programs():
    dev = emu.open_device()
    words = np.arange(24, dtype=np.uint32) * 1000
    address = dev.allocate_l1(3, 32, core=(2, 3))  # three 32-byte pages on core (2, 3), back to back
    dev.write_l1(address, words.view(np.uint8))
    x, y = dev.worker_core_from_logical_core(2, 3)
    cores = core_set(0, 0)
    program = pd.ProgramDescriptor(
        kernels=[kernel("increment_remote_l1.cpp", cores, pd.WriterConfigDescriptor(),
                        runtime_args=[(pd.CoreCoord(0, 0), [x, y, address, 24])])],
        cbs=[cb(0, 1, 96, cores)],
    )  # fmt: skip
    emu.run_program(dev, program)
    emu.run_program(dev, program)  # reads what the first run left in core (2, 3)'s L1
    np.testing.assert_array_equal(dev.read_l1(address, 96).view(np.uint32), words + 2)


def test_buffers_are_placed_downwards_from_the_end_of_l1_and_reuse_freed_ranges():
    dev = emu.open_device()
    first = dev.allocate_l1(1, 1000, core=(0, 0))
    second = dev.allocate_l1(64, 16)  # one 16-byte page per bank
    assert first == (L1_SIZE - 1008) // 16 * 16 and second == first - 16
    dev.deallocate_l1(first)
    assert dev.allocate_l1(2, 400, core=(1, 1)) == L1_SIZE - 800
    with pytest.raises(ValueError, match="does not fit in the free L1"):
        dev.allocate_l1(1, L1_SIZE, core=(0, 0))
    with pytest.raises(ValueError, match=r"core \(8, 0\) is outside the 8x8 grid"):
        dev.allocate_l1(1, 16, core=(8, 0))
    with pytest.raises(ValueError, match="holds 2 pages of 400"):
        dev.write_l1(L1_SIZE - 800, np.zeros(16, dtype=np.uint8))


def test_circular_buffers_reaching_a_buffer_are_an_l1_overflow():
    dev = emu.open_device()
    address = dev.allocate_l1(1, 1300 * 1024, core=(0, 0))
    cores = core_set(0, 0)
    program = pd.ProgramDescriptor(
        kernels=[kernel("write_raw.cpp", cores, pd.WriterConfigDescriptor(),
                        runtime_args=[(pd.CoreCoord(0, 0), [0, 0, 0])])],
        cbs=[cb(0, 1, 128 * 1024, cores)],
    )  # fmt: skip
    with pytest.raises(
        emu.EmulatorError, match=rf"core \(0, 0\): circular buffers end at .* above the L1 buffer at {hex(address)}"
    ):
        emu.run_program(dev, program)


def one_core_config(x, y, shape):
    core = pd.CoreCoord(x, y)
    spec = ttnn.ShardSpec(pd.CoreRangeSet([pd.CoreRange(core, core)]), shape)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, spec)


@pytest.mark.parametrize("where", ["interleaved", "one_core"])
def test_l1_tensors_round_trip_and_describe_themselves_as_l1(where):
    device = ttnn.open_device()
    values = torch.arange(5 * 3 * 8).reshape(5, 3, 8)
    config = ttnn.L1_MEMORY_CONFIG if where == "interleaved" else one_core_config(4, 1, (15, 8))
    t = ttnn.from_torch(values, dtype=ttnn.uint16, device=device, memory_config=config)
    assert torch.equal(ttnn.to_torch(t).to(torch.int64), values)
    arg = t.to_arg()
    assert (arg.is_dram, arg.alignment) == (False, 16)
    assert t.memory_config() == config


def test_l1_memory_configs_the_emulator_does_not_hold_are_named():
    device = ttnn.open_device()
    two_cores = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(0, 0), pd.CoreCoord(1, 0))])
    spec = ttnn.ShardSpec(two_cores, (4, 8))
    config = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, spec)
    with pytest.raises(NotImplementedError, match="shards on 2 cores are not emulated"):
        ttnn.from_torch(torch.zeros(8, 8), dtype=ttnn.bfloat16, device=device, memory_config=config)
    with pytest.raises(ValueError, match=r"shard shape \[4, 8\] must be the whole tensor, \[8, 8\]"):
        ttnn.from_torch(
            torch.zeros(8, 8), dtype=ttnn.bfloat16, device=device, memory_config=one_core_config(0, 0, (4, 8))
        )
