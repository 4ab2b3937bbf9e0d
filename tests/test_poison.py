"""The emulator's poison mode (ttnn_moe/cpp/emu/README.md, "Uninitialised reads"): a kernel's read of
L1 or DRAM that nothing wrote is an error naming the kernel, core, address and buffer; memory the
host, the NOC or the kernel itself wrote is not reported; and a subset that runs every op at least
once, on one device and on a mesh, is clean in this mode (tools/poison.py)."""

import numpy as np
import pytest
from emu_programs import cb, core_set, kernel
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd

from tools import poison

CORE = (4, 2)
PAGE = 2048


@pytest.fixture
def poisoned():
    was = emu.poison()
    emu.set_poison(True)
    yield emu.open_device()
    emu.set_poison(was)


@pytest.fixture(params=["memory", "file"])
def poisoned_dram(request, tmp_path):
    """A poisoned device whose DRAM buffers are anonymous memory or, all of them, mapped files."""
    was = emu.dram_files()
    emu.set_dram_files(enabled=request.param == "file", threshold_bytes=1, directory=str(tmp_path))
    was_poison = emu.poison()
    emu.set_poison(True)
    yield emu.open_device()
    emu.set_poison(was_poison)
    emu.set_dram_files(enabled=was["enabled"], threshold_bytes=was["threshold_bytes"], directory=was["directory"])


def _page_program(bank_addr, size, stored, mode, pages=1, compute=False):
    """poison_page.cpp on one core (see the kernel), with compute_silu_mul.cpp taking its pages."""
    cores = core_set(*CORE)
    at = pd.CoreCoord(*CORE)
    kernels = [
        kernel(
            "poison_page.cpp",
            cores,
            pd.ReaderConfigDescriptor(),
            runtime_args=[(at, [bank_addr, size, stored, mode, pages])],
        )
    ]
    cbs = [cb(0, 2, PAGE, cores)]
    if compute:
        kernels.append(
            kernel(
                "compute_silu_mul.cpp",
                cores,
                pd.ComputeConfigDescriptor(),
                named=[("cb_in", 0), ("cb_out", 16)],
                runtime_args=[(at, [1])],
            )
        )
        cbs.append(cb(16, 1, PAGE, cores))
    return pd.ProgramDescriptor(kernels=kernels, cbs=cbs)


def _raw_read(bank_addr, size):
    at = pd.CoreCoord(*CORE)
    cores = core_set(*CORE)
    return pd.ProgramDescriptor(
        kernels=[kernel("read_raw.cpp", cores, pd.ReaderConfigDescriptor(), runtime_args=[(at, [bank_addr, size, 0])])],
        cbs=[cb(0, 1, 4096, cores)],
    )


def test_reading_dram_nothing_wrote_names_kernel_core_address_and_buffer(poisoned_dram):
    dev = poisoned_dram
    buf = dev.allocate(12 * PAGE, PAGE)  # page 0 in bank 0 at bank address buf
    with pytest.raises(emu.EmulatorError) as err:
        emu.run_program(dev, _raw_read(buf, 64))
    msg = str(err.value)
    assert "read_raw.cpp [NCRISC] on device 0 core (4, 2)" in msg, msg
    assert "uninitialised read: noc read" in msg and "reads 64 bytes, byte 0 of which" in msg, msg
    assert f"DRAM bank 0 address {hex(buf)}: page 0, byte 0 of the buffer at {hex(buf)} (12 pages of 2048 bytes)" in msg


def test_dram_the_host_wrote_reads_clean_and_its_unwritten_tail_does_not(poisoned_dram):
    dev = poisoned_dram
    buf = dev.allocate(12 * PAGE, PAGE)
    data = np.arange(PAGE, dtype=np.uint8)  # page 0 only (bank 0), the other 11 pages stay unwritten
    dev.write(buf, PAGE, data)
    emu.run_program(dev, _raw_read(buf, PAGE))  # page 0 was uploaded: clean
    # 24 bytes of page 0 written by a page size of 24: its bank row continues with the alignment
    # padding (bytes 24..31), which the host never wrote.
    small = dev.allocate(12 * 32, 24)
    dev.write(small, 24, np.ones(24, dtype=np.uint8))
    with pytest.raises(emu.EmulatorError, match=r"reads 32 bytes, byte 24 of which .*page 0, byte 24"):
        emu.run_program(dev, _raw_read(small, 32))


def test_writing_out_a_cb_page_nothing_filled_names_the_cb(poisoned):
    dev = poisoned
    out = dev.allocate(12 * PAGE, PAGE)
    with pytest.raises(emu.EmulatorError) as err:
        emu.run_program(dev, _page_program(out, 256, stored=0, mode=0))
    msg = str(err.value)
    assert "poison_page.cpp [NCRISC] on device 0 core (4, 2)" in msg, msg
    assert "uninitialised read: noc write from L1" in msg and "in CB 0 (ring 0x19000 - 0x1a000, page 0 of 2)" in msg


def test_a_page_the_kernel_filled_through_a_pointer_is_not_reported(poisoned):
    dev = poisoned
    out = dev.allocate(12 * PAGE, PAGE)
    emu.run_program(dev, _page_program(out, 256, stored=256, mode=0))
    got = dev.read(out, PAGE, PAGE)[:256]
    np.testing.assert_array_equal(got, np.arange(256, dtype=np.uint8))
    # A word short: the page's last word still holds the pattern.
    with pytest.raises(emu.EmulatorError, match="reads 256 bytes, byte 252 of which"):
        emu.run_program(dev, _page_program(out, 256, stored=252, mode=0))


def test_unpacking_a_pushed_page_nothing_wrote_names_the_compute_kernel(poisoned):
    dev = poisoned
    with pytest.raises(emu.EmulatorError) as err:
        emu.run_program(dev, _page_program(0, 0, stored=0, mode=1, pages=2, compute=True))
    msg = str(err.value)
    assert "compute_silu_mul.cpp [TRISC] on device 0 core (4, 2)" in msg, msg
    assert "uninitialised read: unpacking tile 0 of CB 0 reads 2048 bytes, byte 0 of which" in msg, msg


def test_poison_mode_off_reads_zeros_as_before():
    assert not emu.poison(), "the test command runs with poison mode off"
    dev = emu.open_device()
    buf = dev.allocate(12 * PAGE, PAGE)
    out = dev.allocate(12 * PAGE, PAGE)
    emu.run_program(dev, _raw_read(buf, 64))
    emu.run_program(dev, _page_program(out, 256, stored=0, mode=0))
    np.testing.assert_array_equal(dev.read(out, PAGE, PAGE)[:256], np.zeros(256, dtype=np.uint8))


def test_the_poisoned_subset_is_clean():
    done = poison.run(poison.POISONED_TESTS)
    output = done.stdout + done.stderr
    assert poison.REPORT_MARK not in output, output[-6000:]
    assert done.returncode == 0 and " passed" in done.stdout, output[-6000:]
