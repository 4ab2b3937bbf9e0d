"""NOC multicast on the emulator: noc_async_write_multicast (plain and loopback) and
noc_semaphore_set_multicast deliver to every worker core of the NOC rectangle and to nothing else,
count their destinations as the hardware needs them counted, keep their source in flight until
flushed, and are costed once at the sender's port (timing/README.md)."""

import math

import numpy as np
import pytest
from emu_programs import cb, kernel
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd

PAGE = 2048
SENDER, RECEIVER, NEITHER = 0, 1, 2
MULTICAST, POP_BEFORE_FLUSH, LOOPBACK, UNICAST = 0, 1, 2, 3
PATTERN = (3 * np.arange(PAGE // 4) + 1).astype(np.uint32)


@pytest.fixture(autouse=True)
def wormhole():
    emu.set_timing_arch("wormhole_b0")
    yield
    emu.set_timing_arch("wormhole_b0")


def cores_of(cores):
    return pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(*c), pd.CoreCoord(*c)) for c in cores])


def multicast_run(dev, sender, roles, rectangle, num_dests, mode=MULTICAST):
    """Runs multicast_page.cpp on `sender` and every core of `roles` ({logical core: role}); the
    rectangle is given in logical cores and addressed by its NOC corners. Returns (each core's page
    as written to DRAM, the run's result)."""
    everyone = [sender, *roles]
    (x0, y0), (x1, y1) = (dev.worker_core_from_logical_core(*corner) for corner in rectangle)
    out = dev.allocate(len(everyone) * PAGE, PAGE)
    args = [
        (pd.CoreCoord(*core), [role, x0, y0, x1, y1, num_dests, PAGE, out, page, mode])
        for page, (core, role) in enumerate([(sender, SENDER), *roles.items()])
    ]
    cores = cores_of(everyone)
    program = pd.ProgramDescriptor(
        kernels=[kernel("multicast_page.cpp", cores, pd.WriterConfigDescriptor(), runtime_args=args)],
        cbs=[cb(0, 1, PAGE, cores)],
        semaphores=[pd.SemaphoreDescriptor(id=0, core_ranges=cores, initial_value=0)],
    )
    result = emu.run_program(dev, program)
    pages = dev.read(out, PAGE, len(everyone) * PAGE).view(np.uint32).reshape(len(everyone), -1)
    return dict(zip(everyone, pages)), result


def test_a_multicast_reaches_every_core_of_the_rectangle_and_no_other():
    """Logical columns 3 and 4 lie on either side of the DRAM column (NOC x 4 and 6): the rectangle
    spans it, and only its 2 x 2 worker cores count and receive."""
    dev = emu.open_device()
    rectangle = [(3, 1), (4, 2)]
    receivers = {(3, 1): RECEIVER, (4, 1): RECEIVER, (3, 2): RECEIVER, (4, 2): RECEIVER}
    bystanders = {(2, 1): NEITHER, (5, 2): NEITHER, (3, 3): NEITHER}
    pages, result = multicast_run(dev, (0, 0), {**receivers, **bystanders}, rectangle, num_dests=4)
    for core in [(0, 0), *receivers]:
        np.testing.assert_array_equal(pages[core], PATTERN, err_msg=f"core {core}")
    for core in bystanders:
        assert not pages[core].any(), f"core {core} outside the rectangle was written"
    assert result["noc_bytes_written_l1"] == 4 * PAGE + 4 * 4  # the page and the flag, once per receiver


def test_a_loopback_multicast_writes_the_sender_too():
    dev = emu.open_device()
    pages, _ = multicast_run(dev, (1, 1), {(2, 1): RECEIVER, (3, 1): RECEIVER}, [(1, 1), (3, 1)], 3, LOOPBACK)
    for core in [(1, 1), (2, 1), (3, 1)]:
        np.testing.assert_array_equal(pages[core], PATTERN, err_msg=f"core {core}")


def test_a_multicast_whose_num_dests_is_not_the_rectangles_core_count_is_an_error():
    dev = emu.open_device()
    with pytest.raises(
        emu.EmulatorError, match=r"multicast_page\.cpp.*num_dests is 3 but the multicast rectangle has 2"
    ):
        multicast_run(dev, (0, 0), {(1, 1): RECEIVER, (2, 1): RECEIVER}, [(1, 1), (2, 1)], num_dests=3)


def test_a_multicast_over_a_core_that_runs_nothing_is_an_error():
    dev = emu.open_device()
    with pytest.raises(emu.EmulatorError, match=r"multicast_page\.cpp.*includes a core that runs nothing"):
        multicast_run(dev, (0, 0), {(1, 1): RECEIVER, (3, 1): RECEIVER}, [(1, 1), (3, 1)], num_dests=3)


def test_popping_the_page_a_multicast_still_reads_is_an_error():
    dev = emu.open_device()
    with pytest.raises(
        emu.EmulatorError,
        match=r"multicast_page\.cpp.*cb_pop_front\(cb 0, 1\) while 1 NOC write\(s\) from those pages",
    ):
        multicast_run(dev, (0, 0), {(1, 1): RECEIVER}, [(1, 1), (1, 1)], 1, POP_BEFORE_FLUSH)


def sender_end(result, core):
    (span,) = [s for s in result["timing"]["riscs"] if s["risc"] == "BRISC" and s["core"] == core]
    return span["end"]


def test_a_multicast_occupies_the_senders_port_once_and_lands_after_the_farthest_latency():
    """The page leaves the sender's port once for one or six receivers (six unicast writes take six
    transfer times); the sender's write barrier then waits for the farthest receiver's write latency.
    A receiver's flag wait ends when the flag lands, behind the page: at least the page's transfer
    plus the farthest receiver's write latency."""
    p = emu.timing_params()
    transfer = math.ceil(PAGE / p["noc_port_bytes_per_cycle"])
    dev = emu.open_device()
    sender = (0, 0)
    one = {(1, 1): RECEIVER}
    six = {(x, y): RECEIVER for x in (1, 2, 3) for y in (1, 2)}  # NOC x 2..4, y 2..3: no gap to skip
    _, single = multicast_run(dev, sender, one, [(1, 1), (1, 1)], 1)
    _, multi = multicast_run(dev, sender, six, [(1, 1), (3, 2)], 6)
    _, unicast = multicast_run(dev, sender, dict.fromkeys(six, NEITHER), [(1, 1), (3, 2)], 6, UNICAST)
    sx, sy = dev.worker_core_from_logical_core(*sender)

    def farthest(cores):
        return max(abs(x - sx) + abs(y - sy) for x, y in (dev.worker_core_from_logical_core(*c) for c in cores))

    # The sender's write barrier waits for the farthest arrival: six receivers cost only the extra hops.
    hop = p["noc_write_latency_per_hop_cycles"]
    assert sender_end(multi, sender) - sender_end(single, sender) == hop * (farthest(six) - farthest(one))
    # Six unicast writes hold the port for six transfers (less the multicast's flag and issue costs).
    assert sender_end(unicast, sender) - sender_end(multi, sender) > 4.9 * transfer

    latency = p["noc_write_latency_base_cycles"] + hop * farthest(six)
    for core in six:
        (span,) = [s for s in multi["timing"]["riscs"] if s["risc"] == "BRISC" and s["core"] == core]
        assert span["wait_cycles"].get("semaphore_wait", 0) > 0
        waits = [end for _, end, kind in span["waits"] if kind == "semaphore_wait"]
        assert waits[-1] >= transfer + latency
