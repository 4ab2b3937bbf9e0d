"""The device-time model on small programs: each expected cycle count is worked out here by hand
from the parameter file's figures (emu.timing_params) and the model's documented rules
(ttnn_moe/cpp/emu/timing/README.md), never read back from the model itself."""

import math

import numpy as np
import pytest
import torch
from emu_programs import TILE_BYTES, cb, core_set, kernel, matmul_program, tilize
from fabric_programs import unicast_programs
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd

BFP8_TILE_BYTES = 1088  # 1024 mantissa bytes + 64 shared exponents
BFP4_TILE_BYTES = 576  # 512 bytes of two 4-bit codes + 64 shared exponents


@pytest.fixture(autouse=True)
def wormhole():
    emu.set_timing_arch("wormhole_b0")
    yield
    emu.set_timing_arch("wormhole_b0")


def source_kernel(code, cores, config, runtime_args=()):
    return pd.KernelDescriptor(
        kernel_source=code,
        source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
        core_ranges=cores,
        runtime_args=list(runtime_args),
        config=config,
    )


def risc(timing, risc_name, core=(0, 0)):
    (span,) = [s for s in timing["riscs"] if s["risc"] == risc_name and s["core"] == core]
    return span


# ---------------------------------------------------------------- compute: a matmul tile loop

MATMUL_LOOP = """
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/matmul.h"
#include "api/compute/pack.h"
void kernel_main() {
    const uint32_t n = get_arg_val<uint32_t>(0);
    compute_kernel_hw_startup(0, 1, 16);
    matmul_init(0, 1);
    cb_reserve_back(0, 1); cb_push_back(0, 1);
    cb_reserve_back(1, 1); cb_push_back(1, 1);
    cb_wait_front(0, 1); cb_wait_front(1, 1);
    tile_regs_acquire();
    for (uint32_t i = 0; i < n; ++i) matmul_tiles(0, 1, 0, 0, 0);
    tile_regs_commit();
    cb_reserve_back(16, 1);
    tile_regs_wait();
    pack_tile(0, 16);
    tile_regs_release();
    cb_push_back(16, 1);
}
"""


@pytest.mark.parametrize(
    "fidelity, in_format, in_bytes",
    [
        (pd.MathFidelity.LoFi, pd.DataFormat.Float16_b, TILE_BYTES),
        (pd.MathFidelity.HiFi4, pd.DataFormat.Float16_b, TILE_BYTES),
        (pd.MathFidelity.HiFi2, pd.DataFormat.Bfp8_b, BFP8_TILE_BYTES),
        (pd.MathFidelity.HiFi4, pd.DataFormat.Bfp8_b, BFP8_TILE_BYTES),
        (pd.MathFidelity.LoFi, pd.DataFormat.Bfp4_b, BFP4_TILE_BYTES),
        (pd.MathFidelity.HiFi2, pd.DataFormat.Bfp4_b, BFP4_TILE_BYTES),
    ],
)
def test_matmul_tile_loop_is_bound_by_unpack_or_math_by_hand(fidelity, in_format, in_bytes):
    p = emu.timing_params()
    n = 12
    cores = core_set(0, 0)
    program = pd.ProgramDescriptor(
        kernels=[
            source_kernel(
                MATMUL_LOOP, cores, pd.ComputeConfigDescriptor(math_fidelity=fidelity), [(pd.CoreCoord(0, 0), [n])]
            )
        ],
        cbs=[cb(0, 1, in_bytes, cores, in_format), cb(1, 1, in_bytes, cores, in_format), cb(16, 1, TILE_BYTES, cores)],
    )
    timing = emu.run_program(emu.open_device(), program)["timing"]

    call = p["compute_call_cycles"]
    unpack = call + math.ceil(2 * in_bytes / p["unpack_bytes_per_cycle"])  # both operands of one tile matmul
    mm = p["matmul_tile_cycles"][fidelity.name]
    # Unpack and math overlap: math of tile i starts when its operands are unpacked and the previous
    # matmul is done. Unpack-bound: the last matmul starts right after the n-th unpack; math-bound:
    # the first waits for one unpack, then n matmuls (and their n - 1 issue costs) back to back.
    math_end = n * unpack + mm if unpack >= call + mm else unpack + n * mm + (n - 1) * call
    pack_end = math_end + call + math.ceil(TILE_BYTES / p["pack_bytes_per_cycle"])
    assert risc(timing, "TRISC0")["end"] == n * unpack
    assert risc(timing, "TRISC1")["end"] == math_end
    assert risc(timing, "TRISC2")["end"] == pack_end
    assert risc(timing, "TRISC2")["wait_cycles"] == {"dst_wait": math_end}
    assert timing["duration_cycles"] == pack_end
    assert timing["arch"] == "wormhole_b0" and timing["clock_ghz"] == 1.0


# ---------------------------------------------------------------- compute: one matmul_block step

MATMUL_BLOCK_STEP = """
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/matmul.h"
void kernel_main() {
    const uint32_t rt = get_arg_val<uint32_t>(0);
    const uint32_t ct = get_arg_val<uint32_t>(1);
    compute_kernel_hw_startup(0, 1, 16);
    matmul_block_init(0, 1, 0, ct, rt, 1);
    cb_reserve_back(0, rt); cb_push_back(0, rt);
    cb_reserve_back(1, ct); cb_push_back(1, ct);
    cb_wait_front(0, rt); cb_wait_front(1, ct);
    tile_regs_acquire();
    matmul_block(0, 1, 0, 0, 0, 0, ct, rt, 1);
    tile_regs_commit();
    tile_regs_wait();
    tile_regs_release();
}
"""


# (rt, ct) -> (A tiles, B tiles) unpacked, counted by hand from the loop of _llk_unpack_AB_matmul_: with
# ct >= rt the rt A tiles are held, two per pass (both srcB banks), and each pass streams the ct B tiles;
# with rt > ct the ct B tiles are held two per pass and each pass streams the rt A tiles.
@pytest.mark.parametrize(
    "rt, ct, a_tiles, b_tiles",
    [
        (1, 5, 1, 5),  # one pass
        (5, 1, 5, 1),
        (4, 2, 4, 2),  # two B tiles held, one pass of four A tiles
        (2, 4, 2, 4),
        (3, 3, 3, 6),  # three A tiles held: passes {0, 1} and {2}, each streaming three B tiles
        (4, 4, 4, 8),
        (5, 3, 10, 3),  # three B tiles held over two passes of five A tiles
    ],
)
def test_matmul_block_unpacks_what_the_llk_unpacks_by_hand(rt, ct, a_tiles, b_tiles):
    p = emu.timing_params()
    cores = core_set(0, 0)
    config = pd.ComputeConfigDescriptor(math_fidelity=pd.MathFidelity.LoFi, dst_full_sync_en=True)  # 16 tiles
    program = pd.ProgramDescriptor(
        kernels=[source_kernel(MATMUL_BLOCK_STEP, cores, config, [(pd.CoreCoord(0, 0), [rt, ct])])],
        # A in bfloat16, B in bfloat8_b: the unpacked bytes tell which operand was held.
        cbs=[cb(0, rt, TILE_BYTES, cores), cb(1, ct, BFP8_TILE_BYTES, cores, pd.DataFormat.Bfp8_b)],
    )
    timing = emu.run_program(emu.open_device(), program)["timing"]
    unpacked = p["compute_call_cycles"] + math.ceil(
        (a_tiles * TILE_BYTES + b_tiles * BFP8_TILE_BYTES) / p["unpack_bytes_per_cycle"]
    )
    assert risc(timing, "TRISC0")["end"] == unpacked
    assert risc(timing, "TRISC1")["end"] == unpacked + rt * ct * p["matmul_tile_cycles"]["LoFi"]


# ---------------------------------------------------------------- NOC reads from a DRAM bank

READ_LOOP = """
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const uint32_t addr = get_arg_val<uint32_t>(0);
    const uint32_t n = get_arg_val<uint32_t>(1);
    const uint32_t bytes = get_arg_val<uint32_t>(2);
    const uint32_t barrier_each = get_arg_val<uint32_t>(3);
    const uint32_t dst = get_write_ptr(0);
    for (uint32_t i = 0; i < n; ++i) {
        noc_async_read(get_noc_addr_from_bank_id<true>(0, addr), dst, bytes);
        if (barrier_each) noc_async_read_barrier();
    }
    if (!barrier_each) noc_async_read_barrier();
}
"""


def read_latency(device, core, bank):
    """The npe read latency class of core -> DRAM bank (same core, column, row, otherwise)."""
    p = emu.timing_params()
    x, y = device.worker_core_from_logical_core(*core)
    bx, by = (0 if bank < 6 else 5), 1 + 2 * (bank % 6)  # the emulator's DRAM bank coordinates
    same = (x, y) == (bx, by)
    return p["noc_read_latency_cycles"][0 if same else 1 if x == bx else 2 if y == by else 3]


def read_program(device, cores, n, nbytes, barrier_each):
    addr = device.allocate(nbytes * 12, nbytes)
    ranges = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(*c), pd.CoreCoord(*c)) for c in cores])
    args = [(pd.CoreCoord(*c), [addr, n, nbytes, int(barrier_each)]) for c in cores]
    return pd.ProgramDescriptor(
        kernels=[source_kernel(READ_LOOP, ranges, pd.ReaderConfigDescriptor(), args)],
        cbs=[cb(0, 1, nbytes, ranges)],
    )


def test_read_with_a_barrier_each_costs_call_transfer_and_latency():
    p = emu.timing_params()
    device = emu.open_device()
    n, nbytes = 5, 2048
    timing = emu.run_program(device, read_program(device, [(0, 0)], n, nbytes, True))["timing"]
    call, issue = p["dataflow_call_cycles"], p["noc_issue_cycles"]
    bank_rate = min(p["noc_port_bytes_per_cycle"], p["dram_bytes_per_cycle"] / p["num_dram_banks"])
    transfer = math.ceil(nbytes / bank_rate)
    latency = read_latency(device, (0, 0), 0)
    per_read = issue + transfer + latency  # the barrier's own call hides under the transfer
    span = risc(timing, "NCRISC")
    assert span["end"] == n * per_read
    assert span["wait_cycles"] == {"noc_read_barrier": n * (transfer + latency - call)}


def test_back_to_back_reads_are_bound_by_the_bank_bandwidth():
    p = emu.timing_params()
    device = emu.open_device()
    n, nbytes = 8, 2048
    timing = emu.run_program(device, read_program(device, [(0, 0)], n, nbytes, False))["timing"]
    issue = p["noc_issue_cycles"]
    transfer = math.ceil(nbytes / (p["dram_bytes_per_cycle"] / p["num_dram_banks"]))
    assert transfer > issue  # the bank, not the issuing RISC, is the bottleneck
    # The first read starts after its issue call; the bank then streams n transfers back to back.
    assert risc(timing, "NCRISC")["end"] == issue + n * transfer + read_latency(device, (0, 0), 0)


def test_two_cores_reading_one_bank_share_its_bandwidth():
    p = emu.timing_params()
    device = emu.open_device()
    n, nbytes = 6, 2048
    cores = [(0, 0), (1, 0)]
    timing = emu.run_program(device, read_program(device, cores, n, nbytes, False))["timing"]
    issue = p["noc_issue_cycles"]
    transfer = math.ceil(nbytes / (p["dram_bytes_per_cycle"] / p["num_dram_banks"]))
    ends = sorted(
        (risc(timing, "NCRISC", c)["end"] - read_latency(device, c, 0), c) for c in cores
    )  # minus each core's own latency: when its last transfer left the bank
    # The bank serves 2n transfers back to back: one core finishes after n, the other after 2n.
    assert [e for e, _ in ends] == [issue + n * transfer, issue + 2 * n * transfer]


def test_one_tile_matmul_pipeline_by_hand():
    """Reader, compute and writer of tests/kernels/emu for one output tile with Kt = 1 on one core: every
    RISC's end and wait, DRAM bank and NOC port sharing included, worked out call by call."""
    p = emu.timing_params()
    device = emu.open_device()
    a, b, c = (device.allocate(TILE_BYTES, TILE_BYTES) for _ in range(3))
    timing = emu.run_program(device, matmul_program(a, b, c, 1, 1, 1, [(0, 0)]))["timing"]
    call, issue, unpack_call = p["dataflow_call_cycles"], p["noc_issue_cycles"], p["compute_call_cycles"]
    transfer = math.ceil(TILE_BYTES / min(p["noc_port_bytes_per_cycle"], p["dram_bytes_per_cycle"] / 12))
    latency = read_latency(device, (0, 0), 0)  # A, B and C all have their page 0 in bank 0
    x, y = device.worker_core_from_logical_core(0, 0)
    write_latency = p["noc_write_latency_base_cycles"] + p["noc_write_latency_per_hop_cycles"] * (x + abs(y - 1))

    # NCRISC: reserve A, read A (starts at once), reserve B, read B (the bank and the core's inbound port
    # are busy with A until it is through), barrier, push A, push B.
    read_a = call + issue
    read_b_issued = read_a + call + issue
    read_b = max(read_b_issued, read_a + transfer)
    barrier_done = read_b + transfer + latency
    pushed_b = barrier_done + 2 * call  # A is pushed one call before B
    reader = risc(timing, "NCRISC")
    assert reader["end"] == pushed_b
    assert reader["wait_cycles"] == {"noc_read_barrier": barrier_done - (read_b_issued + call)}

    # Compute: unpack waits for B's push, unpacks both tiles; math follows; pack waits for the commit.
    unpacked = pushed_b + unpack_call + math.ceil(2 * TILE_BYTES / p["unpack_bytes_per_cycle"])
    math_end = unpacked + p["matmul_tile_cycles"]["HiFi4"]
    packed = math_end + unpack_call + math.ceil(TILE_BYTES / p["pack_bytes_per_cycle"])
    assert risc(timing, "TRISC0")["end"] == unpacked
    assert risc(timing, "TRISC0")["wait_cycles"] == {"cb_wait_front": pushed_b}
    assert risc(timing, "TRISC1")["end"] == math_end
    assert risc(timing, "TRISC2")["end"] == packed
    assert risc(timing, "TRISC2")["wait_cycles"] == {"dst_wait": math_end}

    # BRISC: wait for the packed tile, write it to bank 0 (free again by then), barrier, pop.
    write_start = packed + issue
    arrived = write_start + transfer + write_latency
    writer = risc(timing, "BRISC")
    assert writer["end"] == arrived + call
    assert writer["wait_cycles"] == {
        "cb_wait_front": packed - call,
        "noc_write_barrier": arrived - (write_start + call),
    }
    assert timing["duration_cycles"] == arrived + call


# ---------------------------------------------------------------- a producer / consumer CB pair

PRODUCER = """
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const uint32_t n = get_arg_val<uint32_t>(0);
    for (uint32_t i = 0; i < n; ++i) { cb_reserve_back(0, 1); cb_push_back(0, 1); }
}
"""
CONSUMER = """
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const uint32_t n = get_arg_val<uint32_t>(0);
    const uint32_t work = get_arg_val<uint32_t>(1);
    for (uint32_t i = 0; i < n; ++i) {
        cb_wait_front(0, 1);
        for (uint32_t k = 0; k < work; ++k) noc_async_read_barrier();  // nothing outstanding: one call each
        cb_pop_front(0, 1);
    }
}
"""


def test_cb_pair_backpressure_follows_push_and_pop_stamps():
    c = emu.timing_params()["dataflow_call_cycles"]
    n, work, pages = 7, 5, 2
    cores = core_set(0, 0)
    args = [(pd.CoreCoord(0, 0), [n, work])]
    program = pd.ProgramDescriptor(
        kernels=[
            source_kernel(PRODUCER, cores, pd.ReaderConfigDescriptor(), args),
            source_kernel(CONSUMER, cores, pd.WriterConfigDescriptor(), args),
        ],
        cbs=[cb(0, pages, 32, cores)],
    )
    timing = emu.run_program(emu.open_device(), program)["timing"]
    # Producer: reserve + push = 2 calls a page. Consumer: wait + work + pop = (work + 2) calls a page.
    # Page 0 is pushed at 2c; the consumer waits for it after its first call, so page i is popped at
    # 2c + (work + 1) c + i (work + 2) c. The producer's reserve of page i >= pages waits for the pop of
    # page i - pages; its last push comes one call after the pop of page n - 1 - pages.
    period = (work + 2) * c
    pop = [2 * c + (work + 1) * c + i * period for i in range(n)]
    consumer, producer = risc(timing, "BRISC"), risc(timing, "NCRISC")
    assert consumer["end"] == pop[-1]
    assert producer["end"] == pop[n - 1 - pages] + c
    assert consumer["wait_cycles"] == {"cb_wait_front": c}  # only page 0 was not there yet
    assert producer["wait_cycles"]["cb_reserve_back"] == sum(
        pop[i - pages] - (pop[i - pages - 1] + c if i > pages else 2 * pages * c) - c for i in range(pages, n)
    )


# ---------------------------------------------------------------- a semaphore handshake


def test_semaphore_ping_pong_round_trips_by_hand():

    p = emu.timing_params()
    c, issue = p["dataflow_call_cycles"], p["noc_issue_cycles"]  # a call; a NOC command (inc, set, write)
    device = emu.open_device()
    rounds = 4
    result = device.allocate(32, 32)
    sender, receiver = (0, 0), (3, 2)
    sx, sy = device.worker_core_from_logical_core(*sender)
    rx, ry = device.worker_core_from_logical_core(*receiver)
    both = pd.CoreRangeSet(
        [
            pd.CoreRange(pd.CoreCoord(*sender), pd.CoreCoord(*sender)),
            pd.CoreRange(pd.CoreCoord(*receiver), pd.CoreCoord(*receiver)),
        ]
    )
    program = pd.ProgramDescriptor(
        kernels=[
            kernel(
                "semaphore_ping.cpp",
                both,
                pd.WriterConfigDescriptor(),
                runtime_args=[
                    (pd.CoreCoord(*sender), [0, rx, ry, rounds, result]),
                    (pd.CoreCoord(*receiver), [1, sx, sy, rounds, result]),
                ],
            )
        ],
        semaphores=[pd.SemaphoreDescriptor(id=i, core_ranges=both, initial_value=0) for i in range(5)],
    )
    timing = emu.run_program(device, program)["timing"]
    hops = abs(sx - rx) + abs(sy - ry)
    lat = p["noc_write_latency_base_cycles"] + p["noc_write_latency_per_hop_cycles"] * hops
    one_word = math.ceil(4 / p["noc_port_bytes_per_cycle"])
    # Round r: the sender's increment lands at a[r]; the receiver, one wait call before it, answers with
    # a remote set (a NOC command, a one-word write, the latency); the sender issues the next increment
    # one NOC command after that lands.
    a = [c + issue + lat]
    for _ in range(rounds - 1):
        a.append(a[-1] + issue + one_word + lat + issue + lat)
    assert risc(timing, "BRISC", sender)["end"] == a[-1] - lat
    # Receiver after the last round: the remote set, then a 32-byte DRAM write and its barrier.
    bx, by = 0, 1  # DRAM bank 0
    dram_lat = p["noc_write_latency_base_cycles"] + p["noc_write_latency_per_hop_cycles"] * (
        abs(rx - bx) + abs(ry - by)
    )
    dram_write = math.ceil(32 / (p["dram_bytes_per_cycle"] / p["num_dram_banks"]))
    q = a[-1] + issue  # after the last remote-set call
    ack_arrival = q + one_word + lat
    end = max(q + issue + c, ack_arrival, q + issue + dram_write + dram_lat)
    assert risc(timing, "BRISC", receiver)["end"] == end
    assert risc(timing, "BRISC", receiver)["wait_cycles"]["semaphore_wait"] > 0


# ---------------------------------------------------------------- a semaphore set on the same core

# Either kernel optionally reads `bytes` from DRAM bank 0 (and waits for it) before its semaphore step.
SAME_CORE_SETTER = """
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const uint32_t read_first = get_arg_val<uint32_t>(0);
    const uint32_t addr = get_arg_val<uint32_t>(1);
    const uint32_t bytes = get_arg_val<uint32_t>(2);
    if (read_first) {
        noc_async_read(get_noc_addr_from_bank_id<true>(0, addr), get_write_ptr(0), bytes);
        noc_async_read_barrier();
    }
    noc_semaphore_set(reinterpret_cast<volatile uint32_t*>(get_semaphore(0)), 1);
}
"""
SAME_CORE_WAITER = """
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const uint32_t read_first = get_arg_val<uint32_t>(0);
    const uint32_t addr = get_arg_val<uint32_t>(1);
    const uint32_t bytes = get_arg_val<uint32_t>(2);
    const uint32_t out = get_arg_val<uint32_t>(3);
    if (read_first) {
        noc_async_read(get_noc_addr_from_bank_id<true>(0, addr), get_write_ptr(1), bytes);
        noc_async_read_barrier();
    }
    noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(get_semaphore(0)), 1);
    noc_async_write(get_write_ptr(1), get_noc_addr_from_bank_id<true>(0, out), 32);
    noc_async_write_barrier();
}
"""


def same_core_semaphore_timing(setter_reads, waiter_reads, nbytes):
    device = emu.open_device()
    src, out = device.allocate(nbytes * 12, nbytes), device.allocate(32 * 12, 32)
    cores = core_set(0, 0)
    at = pd.CoreCoord(0, 0)
    program = pd.ProgramDescriptor(
        kernels=[
            source_kernel(SAME_CORE_SETTER, cores, pd.WriterConfigDescriptor(), [(at, [setter_reads, src, nbytes])]),
            source_kernel(
                SAME_CORE_WAITER, cores, pd.ReaderConfigDescriptor(), [(at, [waiter_reads, src, nbytes, out])]
            ),
        ],
        cbs=[cb(0, 1, nbytes, cores), cb(1, 1, nbytes, cores)],
        semaphores=[pd.SemaphoreDescriptor(id=0, core_ranges=cores, initial_value=0)],
    )
    return device, emu.run_program(device, program)["timing"]


def dram_read_and_barrier(p, device, nbytes):
    """A read from bank 0 issued at cycle 0, then its barrier: done when the data has landed."""
    transfer = math.ceil(nbytes / min(p["noc_port_bytes_per_cycle"], p["dram_bytes_per_cycle"] / 12))
    return p["noc_issue_cycles"] + transfer + read_latency(device, (0, 0), 0)


def dram_write_and_barrier(p, device, nbytes):
    """A write to bank 0 and its barrier: issue, transfer and the write latency to the bank."""
    x, y = device.worker_core_from_logical_core(0, 0)
    latency = p["noc_write_latency_base_cycles"] + p["noc_write_latency_per_hop_cycles"] * (x + abs(y - 1))
    return (
        p["noc_issue_cycles"]
        + math.ceil(nbytes / min(p["noc_port_bytes_per_cycle"], p["dram_bytes_per_cycle"] / 12))
        + latency
    )


def test_semaphore_set_on_the_same_core_orders_the_wait_after_it():
    """BRISC sets the word after a DRAM read; NCRISC, waiting from its first call, passes the wait only then."""
    p = emu.timing_params()
    c, nbytes = p["dataflow_call_cycles"], 2048
    device, timing = same_core_semaphore_timing(1, 0, nbytes)
    set_at = dram_read_and_barrier(p, device, nbytes)  # the set is a plain store: no cost of its own
    setter, waiter = risc(timing, "BRISC"), risc(timing, "NCRISC")
    assert setter["end"] == set_at
    write = dram_write_and_barrier(p, device, 32)
    # The wait's call comes first (cycle c), then the wait until the set; the write's barrier waits for all
    # of the write but the issue and the barrier's own call.
    assert waiter["wait_cycles"] == {
        "semaphore_wait": set_at - c,
        "noc_write_barrier": write - p["noc_issue_cycles"] - c,
    }
    assert waiter["end"] == set_at + write


def test_semaphore_set_before_the_wait_costs_the_waiter_nothing():
    """BRISC sets the word at cycle 0; NCRISC reaches its wait after a DRAM read and passes it at once."""
    p = emu.timing_params()
    c, nbytes = p["dataflow_call_cycles"], 2048
    device, timing = same_core_semaphore_timing(0, 1, nbytes)
    waited_at = dram_read_and_barrier(p, device, nbytes) + c  # the wait's own call
    setter, waiter = risc(timing, "BRISC"), risc(timing, "NCRISC")
    assert setter["end"] == 0
    assert "semaphore_wait" not in waiter["wait_cycles"]
    assert waiter["end"] == waited_at + dram_write_and_barrier(p, device, 32)


MAILBOX_SENDER = """
#include "api/dataflow/dataflow_api.h"
#include "ckernel.h"
void kernel_main() {
    const uint32_t addr = get_arg_val<uint32_t>(0);
    const uint32_t bytes = get_arg_val<uint32_t>(1);
    ckernel::mailbox_write(ckernel::ThreadId::UnpackThreadId, 1);
    noc_async_read(get_noc_addr_from_bank_id<true>(0, addr), get_write_ptr(0), bytes);
    noc_async_read_barrier();
    ckernel::mailbox_write(ckernel::ThreadId::MathThreadId, 2);
    ckernel::mailbox_write(ckernel::ThreadId::PackThreadId, 3);
}
"""
MAILBOX_READER = """
#include "api/compute/compute_kernel_hw_startup.h"
#include "ckernel.h"
void kernel_main() {
    uint32_t got = 0;
    UNPACK(got += ckernel::mailbox_read(ckernel::ThreadId::BriscThreadId);)
    MATH(got += ckernel::mailbox_read(ckernel::ThreadId::BriscThreadId);)
    PACK(got += ckernel::mailbox_read(ckernel::ThreadId::BriscThreadId);)
    if (got != 6) ttnn_moe_emu::fail("mailbox words lost");
}
"""


def test_mailbox_read_waits_on_the_reading_trisc_for_the_write():
    """The data-movement kernel writes UNPACK's mailbox at cycle 0, MATH's and PACK's after a DRAM read: only
    the math and pack clocks wait, each until that read has landed."""
    p = emu.timing_params()
    device = emu.open_device()
    nbytes = 2048
    src = device.allocate(nbytes * 12, nbytes)
    cores = core_set(0, 0)
    program = pd.ProgramDescriptor(
        kernels=[
            source_kernel(MAILBOX_SENDER, cores, pd.ReaderConfigDescriptor(), [(pd.CoreCoord(0, 0), [src, nbytes])]),
            source_kernel(MAILBOX_READER, cores, pd.ComputeConfigDescriptor()),
        ],
        cbs=[cb(0, 1, nbytes, cores)],
    )
    timing = emu.run_program(device, program)["timing"]
    written = dram_read_and_barrier(p, device, nbytes)  # the mailbox stores cost nothing of their own
    assert risc(timing, "NCRISC")["end"] == written
    assert risc(timing, "TRISC0")["end"] == 0
    for trisc in ("TRISC1", "TRISC2"):
        assert risc(timing, trisc)["end"] == written
        assert risc(timing, trisc)["wait_cycles"] == {"semaphore_wait": written}


# ---------------------------------------------------------------- a fabric send


def eth_cycles(p, payload):
    packet = payload + p["fabric_header_bytes_1d"]
    wire = packet + math.ceil(packet / p["eth_frame_bytes"]) * p["eth_packet_overhead_bytes"]
    return math.ceil(wire / p["eth_bytes_per_cycle"])


@pytest.mark.parametrize("n_bytes", [1024, 4096])
def test_fabric_send_costs_link_time_per_packet_and_hop_latency_per_hop(n_bytes):
    p = emu.timing_params()
    ends, links = {}, {}
    for hops in (1, 3):
        mesh = emu.Mesh(1, 4, grid=(1, 1))
        program, _, _ = unicast_programs(mesh, {0: (hops, hops)}, n_bytes)
        counters = emu.run_mesh_program(mesh, program)
        ends[hops] = risc(counters["devices"][hops]["timing"], "BRISC")["end"]
        links[hops] = counters["devices"][0]["timing"]["links"]
    # A data packet and an increment cross each link; nothing else shares them.
    (first,) = links[1]
    assert (first["from_chip"], first["to_chip"], first["packets"]) == (0, 1, 2)
    assert first["busy_cycles"] == eth_cycles(p, n_bytes) + eth_cycles(p, 0)
    # Two more hops delay everything the receiver does by two hop latencies, nothing more.
    assert ends[3] - ends[1] == 2 * p["fabric_hop_latency_1d_cycles"]


# ---------------------------------------------------------------- determinism, results, architectures


def test_timing_is_deterministic_and_never_changes_results():
    from emu_programs import matmul_program  # noqa: PLC0415

    gen = torch.Generator().manual_seed(3)
    A, B = torch.randn(64, 96, generator=gen), torch.randn(96, 64, generator=gen)
    runs = []
    for arch in ("wormhole_b0", "blackhole", "wormhole_b0"):
        emu.set_timing_arch(arch)
        dev = emu.open_device()
        a, b, c = (dev.allocate(n * TILE_BYTES, TILE_BYTES) for n in (6, 6, 4))
        dev.write(a, TILE_BYTES, tilize(A))
        dev.write(b, TILE_BYTES, tilize(B))
        counters = emu.run_program(dev, matmul_program(a, b, c, 2, 3, 2, [(0, 0), (1, 0), (0, 1)]))
        runs.append((dev.read(c, TILE_BYTES, 4 * TILE_BYTES), counters["timing"]))
    assert all(np.array_equal(runs[0][0], r[0]) for r in runs)
    assert runs[0][1] == runs[2][1]
    assert runs[1][1]["arch"] == "blackhole" and runs[1][1]["clock_ghz"] == 1.35


def test_unknown_architecture_is_an_error_naming_it():
    with pytest.raises(ValueError, match="'grayskull'"):
        emu.set_timing_arch("grayskull")
