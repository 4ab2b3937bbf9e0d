"""The roofline's fabric lower bound against cycles worked out by hand.

A link's busy_cycles is its transmit time only (wire bytes at the line rate, per packet rounded
up), never time a packet spends waiting for the link or for a buffer slot. The bound is the
busiest link of the whole op (every device's links, not only the slowest device's) at bytes /
bandwidth, plus one hop latency for its last packet to land."""

import pytest
from fabric_programs import unicast_programs
from ttnn_moe._C import emu
from ttnn_moe.profiler import Profile
from ttnn_moe.profiler.bounds import op_bounds

# Wormhole B0 (CCL_bandwidth.md): 48-B 1D header, 50 B of framing per 1500-B Ethernet frame,
# 12.5 B per cycle per link direction, 711 cycles per hop.
DATA_WIRE = 4096 + 48 + 3 * 50  # a 4096-B payload: 4144 B in 3 frames
INC_WIRE = 48 + 50  # an increment carries no payload
DATA_CYCLES = 344  # ceil(4294 / 12.5)
INC_CYCLES = 8  # ceil(98 / 12.5)
HOP = 711


@pytest.fixture(scope="module")
def line_run(tmp_path_factory):
    """1x3 line: chips 0 and 1 each send 64 KB (16 packets of 4096 B, then an increment) to chip 2,
    chip 0's over two hops, so link 1 -> 2 carries both streams."""
    emu.set_timing_arch("wormhole_b0")
    mesh = emu.Mesh(1, 3, grid=(1, 1))
    program, _, _ = unicast_programs(mesh, {0: (2, 2), 1: (2, 1)}, 16 * 4096, max_packet=4096)
    counters = emu.run_mesh_program(mesh, program)
    session = Profile(tmp_path_factory.mktemp("profile"), "wormhole_b0", traced=False)
    session.record("unicast", [], [], program, True, counters)
    return counters, session


def _links(counters):
    return {(lk["from_chip"], lk["to_chip"]): lk for d in counters["devices"].values() for lk in d["timing"]["links"]}


def test_busy_cycles_are_transmit_time_only_even_when_packets_wait(line_run):
    counters, _ = line_run
    links = _links(counters)
    one_stream = 16 * DATA_CYCLES + INC_CYCLES
    assert links[(0, 1)]["wire_bytes"] == 16 * DATA_WIRE + INC_WIRE
    assert links[(0, 1)]["busy_cycles"] == one_stream == 5512
    assert links[(1, 2)]["wire_bytes"] == 2 * (16 * DATA_WIRE + INC_WIRE)
    assert links[(1, 2)]["busy_cycles"] == 2 * one_stream
    # The senders did wait: a packet is pushed into the router in 4144 / 28.1 = 148 cycles but
    # takes 344 on the wire, so their 8 buffer slots fill up and link 1 -> 2 is shared; none of
    # that waiting is link busy time.
    senders = [counters["devices"][chip]["timing"]["riscs"] for chip in (0, 1)]
    assert max(s["wait_cycles"].get("fabric_slot", 0) for riscs in senders for s in riscs) > 0
    # The link is held exactly while it transmits: its traffic span is at least its busy time.
    assert links[(1, 2)]["last_end"] - links[(1, 2)]["first_start"] >= 2 * one_stream
    assert links[(1, 2)]["last_arrival"] == links[(1, 2)]["last_end"] + HOP


def test_fabric_bound_is_the_busiest_link_of_any_device_in_bytes_over_bandwidth(line_run):
    counters, session = line_run
    (op,) = session.ops
    slowest = max(op.devices, key=lambda d: d.duration_ns())
    # The receiver is the slowest device and sends nothing: a bound read from its links alone was 0.
    assert slowest.device_id == 2 and slowest.timing["links"] == []
    bounds = {b.resource: b for b in op_bounds(op, session.params)}
    expected_ns = 2 * (16 * DATA_WIRE + INC_WIRE) / 12.5 + HOP  # 137604 B / 12.5 + 711
    assert bounds["fabric"].lower_ns == pytest.approx(11719.32)
    assert bounds["fabric"].lower_ns == pytest.approx(expected_ns)
    assert 0 < bounds["fabric"].fraction <= 1
    assert op.device_ns() >= bounds["fabric"].lower_ns


def test_unwaited_packets_still_count_in_the_device_time(tmp_path):
    """Chip 0 sends to chip 1, whose receiver expects no increment: nothing waits for the packets,
    yet the op is not done before they land (the last one a hop latency after leaving the link)."""
    mesh = emu.Mesh(1, 2, grid=(1, 1))
    program, _, _ = unicast_programs(mesh, {0: (1, 1)}, 4096, max_packet=4096, expect={1: 0})
    counters = emu.run_mesh_program(mesh, program)
    (link,) = counters["devices"][0]["timing"]["links"]
    assert link["busy_cycles"] == DATA_CYCLES + INC_CYCLES
    assert counters["devices"][0]["timing"]["duration_cycles"] >= link["last_end"] + HOP
