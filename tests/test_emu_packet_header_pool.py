"""PacketHeaderPool in the emulator: packet headers come from the L1 region the device memory map reserves for
them (ttnn_moe_emu/abi.h), the first half for the BRISC (DM0) kernel and the second for NCRISC (DM1), each
header PACKET_HEADER_MAX_SIZE (144) bytes after the one before; routes are numbered from 0 per RISC; running out
is an error naming the counts (the device hangs there on purpose)."""

from __future__ import annotations

import numpy as np
import pytest
from emu_programs import cb, core_set, kernel
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd

# The emulator's L1 layout (abi.h): the pool after the mailboxes, 16 headers of 144 bytes, below the CBs.
POOL_BASE, HEADER, HEADERS_PER_RISC = 0x18300, 144, 8
CB_BASE = 0x19000


def run_routes(brisc_routes, ncrisc_routes=()):
    dev = emu.open_device()
    out = dev.allocate(2 * 64, 64)  # page 0 in DRAM bank 0 (BRISC's report), page 1 in bank 1 (NCRISC's)
    cores = core_set(1, 1)

    def args(bank, routes):
        return [(pd.CoreCoord(1, 1), [bank, out, CB_BASE, len(routes), *routes])]

    program = pd.ProgramDescriptor(
        kernels=[
            kernel("packet_header_routes.cpp", cores, pd.WriterConfigDescriptor(), runtime_args=args(0, brisc_routes)),
            kernel("packet_header_routes.cpp", cores, pd.ReaderConfigDescriptor(), runtime_args=args(1, ncrisc_routes)),
        ],
        cbs=[cb(0, 1, 64, cores)],
    )
    emu.run_program(dev, program)
    words = dev.read(out, 64, 2 * 64).view(np.uint32).reshape(2, 16)
    return [[tuple(int(v) for v in w[3 * r : 3 * r + 3]) for r in range(n)]
            for w, n in zip(words, (len(brisc_routes), len(ncrisc_routes)))]  # fmt: skip


def test_routes_take_consecutive_headers_from_each_risc_half_of_the_reserved_pool():
    brisc, ncrisc = run_routes([1, 2, 1], [3])
    assert brisc == [(0, POOL_BASE, 1), (1, POOL_BASE + HEADER, 2), (2, POOL_BASE + 3 * HEADER, 1)]
    assert ncrisc == [(0, POOL_BASE + HEADERS_PER_RISC * HEADER, 3)]
    assert POOL_BASE + 2 * HEADERS_PER_RISC * HEADER <= CB_BASE  # nothing a program places overlaps the pool


def test_a_program_starts_with_an_empty_pool():
    run_routes([4, 4])
    assert run_routes([2])[0] == [(0, POOL_BASE, 2)]


def test_running_out_of_headers_is_an_error_naming_the_counts():
    with pytest.raises(emu.EmulatorError, match="2 more packet headers do not fit: 7 of this RISC's 8 are allocated"):
        run_routes([4, 3, 2])
