"""Emulated tt-fabric: unicast writes and semaphore increments between devices on 1D and 2D meshes,
in-order delivery under seeded delays, route errors, counters, and the host stand-in."""

import numpy as np
import pytest
from emu_programs import cb, core_set, kernel
from fabric_programs import (
    CORE,
    HEADER_BYTES,
    KERNELS,
    device_program,
    dram_buffer,
    mesh_program,
    node,
    read_u32,
    unicast_programs,
)
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu.fabric import FabricNodeId, setup_fabric_connection

MAX_PACKET = emu.fabric_max_payload_size


def _ring_pass(mesh, chips, topology, n_bytes, data):
    """Passes `data` along `chips` (a line of the mesh; a ring closes it). Returns each chip's output."""
    mesh.fabric_topology = topology
    ring = topology == emu.Topology.Ring
    programs, outputs = {}, {}
    for i, chip in enumerate(chips):
        device = mesh.devices()[chip]
        dram_in = dram_buffer(device, n_bytes, data)
        outputs[chip] = dram_buffer(device, n_bytes)
        nxt = chips[(i + 1) % len(chips)] if (ring or i + 1 < len(chips)) else None
        args = [int(ring or i > 0), int(nxt is not None), int(i == 0), n_bytes, MAX_PACKET, dram_in, outputs[chip]]
        cbs = [cb(0, 1, n_bytes, core_set(0, 0)), cb(1, 1, HEADER_BYTES, core_set(0, 0))]
        programs[chip] = device_program(mesh, chip, "ring_pass.cpp", cbs, args, connect_to=nxt)
    counters = emu.run_mesh_program(mesh, mesh_program(mesh, programs))
    return {chip: read_u32(mesh.devices()[chip], outputs[chip], n_bytes) for chip in chips}, counters


@pytest.mark.parametrize(
    "shape, chips, topology",
    [
        ((1, 8), list(range(8)), emu.Topology.Linear),
        ((1, 8), list(range(8)), emu.Topology.Ring),
        ((4, 2), [1, 3, 5, 7], emu.Topology.Linear),  # down a column: SOUTH hops
        ((1, 4), [3, 2, 1, 0], emu.Topology.Linear),  # WEST hops
    ],
)
def test_buffer_passed_along_line_and_ring_with_fused_write_and_increment(shape, chips, topology):
    mesh = emu.Mesh(*shape, grid=(1, 1))
    n_bytes = 6016  # two packets: the fused increment rides on the second
    data = np.random.default_rng(7).integers(0, 2**31, n_bytes // 4, dtype=np.uint32)
    outputs, counters = _ring_pass(mesh, chips, topology, n_bytes, data)
    ring = topology == emu.Topology.Ring
    for i, chip in enumerate(chips):
        # Each chip adds 1 to what it received; the start chip of a ring gets the buffer back after len(chips) chips.
        expected = data + np.uint32(len(chips) if (ring and i == 0) else i)
        np.testing.assert_array_equal(outputs[chip], expected, err_msg=f"chip {chip}")
    sends = len(chips) if ring else len(chips) - 1
    fabric = counters["fabric"]
    assert fabric["bytes"] == sends * n_bytes
    assert fabric["packets"] == sends * 2
    assert {t for f in fabric["flows"] for t in [f["type"]]} == {"write", "fused_write_atomic_inc"}


def test_ring_wraps_over_the_closing_link():
    mesh = emu.Mesh(1, 4, grid=(1, 1))
    _, counters = _ring_pass(mesh, [0, 1, 2, 3], emu.Topology.Ring, 64, np.arange(16, dtype=np.uint32))
    # chip 3 -> chip 0 is one EAST hop over the ring's closing link, not three WEST hops.
    assert counters["fabric"]["links"][(3, 0, 0)] == {"packets": 1, "bytes": 64}
    assert set(counters["fabric"]["links"]) == {(0, 1, 0), (1, 2, 0), (2, 3, 0), (3, 0, 0)}


def _mesh_2d(rows, cols, seed=None):
    mesh = emu.Mesh(rows, cols, grid=(1, 1), topology=emu.Topology.Mesh)
    assert mesh.fabric_topology == emu.Topology.Mesh
    if seed is not None:
        mesh.set_fabric_seed(seed)
    return mesh


def test_2d_mesh_unicast_to_arbitrary_devices():
    mesh = _mesh_2d(4, 8)
    n = 32
    perm = np.random.default_rng(3).permutation(n)
    while (perm == np.arange(n)).any():  # no device sends to itself
        perm = np.roll(perm, 1)
    sends = {int(s): (int(perm[s]), int(perm[s])) for s in range(n)}
    program, inputs, outputs = unicast_programs(mesh, sends, 4608)
    counters = emu.run_mesh_program(mesh, program)
    for src, (dst, _) in sends.items():
        np.testing.assert_array_equal(read_u32(mesh.devices()[dst], outputs[dst], 4608), inputs[src])
    # Every packet's hops: rows first (NORTH/SOUTH), then columns: Manhattan distance hops per packet.
    hops = sum(abs(s // 8 - d // 8) + abs(s % 8 - d % 8) for s, (d, _) in sends.items())
    link_packets = sum(t["packets"] for t in counters["fabric"]["links"].values())
    assert link_packets == hops * 3  # two write packets + one increment per send


def test_2d_route_goes_rows_first():
    mesh = _mesh_2d(3, 3)
    program, inputs, outputs = unicast_programs(mesh, {0: (8, 8)}, 64)  # (0, 0) -> (2, 2)
    counters = emu.run_mesh_program(mesh, program)
    np.testing.assert_array_equal(read_u32(mesh.devices()[8], outputs[8], 64), inputs[0])
    assert set(counters["fabric"]["links"]) == {(0, 3, 0), (3, 6, 0), (6, 7, 0), (7, 8, 0)}


@pytest.mark.parametrize("topology", [emu.Topology.Linear, emu.Topology.Mesh])
def test_results_bitwise_identical_under_many_delay_seeds(topology):
    n_bytes = 2 * MAX_PACKET + 512
    results = []
    for seed in range(6):
        mesh = emu.Mesh(2, 4, grid=(1, 1))
        mesh.fabric_topology = topology
        mesh.set_fabric_seed(seed)
        # Everyone sends to the next chip of its row (1D: 1 hop EAST; 2D: the chip id).
        sends = {c: (c + 1, 1 if topology == emu.Topology.Linear else c + 1) for c in (0, 1, 2, 4, 5, 6)}
        program, inputs, outputs = unicast_programs(mesh, sends, n_bytes, seed=11)
        emu.run_mesh_program(mesh, program)
        got = {d: read_u32(mesh.devices()[d], outputs[d], n_bytes) for d, _ in sends.values()}
        for src, (dst, _) in sends.items():
            np.testing.assert_array_equal(got[dst], inputs[src])
        results.append(got)
    assert all(all(np.array_equal(r[d], results[0][d]) for d in r) for r in results)


def _stream(seed, wait_for, count=6, max_delay=6):
    """Sender chip 0 streams `count` packets into 4 rotating slots of chip 1; returns chip 1's slots."""
    mesh = emu.Mesh(1, 2, grid=(1, 1))
    mesh.set_fabric_seed(seed)
    mesh.set_fabric_max_delay(max_delay)
    programs, out = {}, None
    for chip in (0, 1):
        device = mesh.devices()[chip]
        dram_out = dram_buffer(device, 256)
        if chip == 1:
            out = dram_out
        cbs = [
            cb(0, 1, count * 64, core_set(0, 0)),
            cb(1, 1, HEADER_BYTES, core_set(0, 0)),
            cb(2, 1, 256, core_set(0, 0)),
        ]
        programs[chip] = device_program(
            mesh, chip, "stream.cpp", cbs, [chip, count, wait_for, dram_out], connect_to=1 if chip == 0 else None
        )
    emu.run_mesh_program(mesh, mesh_program(mesh, programs))
    return read_u32(mesh.devices()[1], out, 256).reshape(4, 16)


def _stream_expected(count):
    # Slot s holds the last packet i with i % 4 == s: words i * 16 + j.
    last = [max(i for i in range(count) if i % 4 == s) for s in range(4)]
    return np.array([[i * 16 + j for j in range(16)] for i in last], dtype=np.uint32)


def test_in_order_delivery_per_connection_under_random_delays():
    expected = _stream_expected(6)
    for seed in range(12):
        np.testing.assert_array_equal(_stream(seed, wait_for=2), expected, err_msg=f"seed {seed}")


def test_forgetting_to_wait_reads_stale_data_under_some_seeds():
    expected = _stream_expected(6)
    stale = [seed for seed in range(16) if not np.array_equal(_stream(seed, wait_for=1), expected)]
    # The delays bite for some seeds but not all: the bug is timing-dependent, as on hardware.
    assert 0 < len(stale) < 16
    # Without delays the same bug happens to work every time.
    assert all(np.array_equal(_stream(seed, wait_for=1, max_delay=0), expected) for seed in range(4))


def test_counters_are_exact_per_flow_pair_and_link():
    mesh = emu.Mesh(1, 4, grid=(1, 1))
    n_bytes = MAX_PACKET + 1024  # 2 write packets + 1 increment per send
    program, _, _ = unicast_programs(mesh, {0: (3, 3), 1: (2, 1)}, n_bytes)
    counters = emu.run_mesh_program(mesh, program)
    fabric = counters["fabric"]
    assert fabric["packets"] == 6 and fabric["bytes"] == 2 * n_bytes
    assert fabric["pairs"] == {(0, 3): {"packets": 3, "bytes": n_bytes}, (1, 2): {"packets": 3, "bytes": n_bytes}}
    assert fabric["links"] == {
        (0, 1, 0): {"packets": 3, "bytes": n_bytes},
        (1, 2, 0): {"packets": 6, "bytes": 2 * n_bytes},
        (2, 3, 0): {"packets": 3, "bytes": n_bytes},
    }
    writes = [f for f in fabric["flows"] if f["type"] == "write"]
    assert sorted((f["src"], f["dst"], f["packets"], f["bytes"]) for f in writes) == [
        (0, 3, 2, n_bytes),
        (1, 2, 2, n_bytes),
    ]
    # Per device (the sender's) and cumulative on the device.
    assert counters["devices"][0]["fabric"]["bytes"] == n_bytes
    assert mesh.devices()[1].counters()["fabric"]["pairs"] == {(1, 2): {"packets": 3, "bytes": n_bytes}}


def test_route_leaving_a_line_is_an_error_naming_kernel_core_device_and_route():
    mesh = emu.Mesh(1, 4, grid=(1, 1))
    program, _, _ = unicast_programs(mesh, {2: (3, 2)}, 64)  # 2 hops EAST from chip 2 of 4
    with pytest.raises(emu.EmulatorError) as err:
        emu.run_mesh_program(mesh, program)
    msg = str(err.value)
    assert "unicast.cpp" in msg and "device 2" in msg and "core (0, 0)" in msg
    assert "2 hops EAST from chip 2 (0, 2) leave the 1x4 mesh after 1 hop" in msg


def test_2d_route_in_the_wrong_direction_is_an_error():
    mesh = _mesh_2d(2, 2)
    # The connection points EAST (towards chip 1) but the packet goes to chip 2, whose route starts SOUTH.
    programs = {}
    for chip in (0, 1, 2):
        cbs = [cb(0, 1, 64, core_set(0, 0)), cb(1, 1, HEADER_BYTES, core_set(0, 0)), cb(2, 1, 64, core_set(0, 0))]
        device = mesh.devices()[chip]
        args = [int(chip == 0), 0, 2, 64, MAX_PACKET, dram_buffer(device, 64), dram_buffer(device, 64), 0]
        programs[chip] = device_program(mesh, chip, "unicast.cpp", cbs, args, connect_to=1 if chip == 0 else None)
    with pytest.raises(emu.EmulatorError) as err:
        emu.run_mesh_program(mesh, mesh_program(mesh, programs))
    msg = str(err.value)
    assert "device 0" in msg and "core (0, 0)" in msg
    assert "wrong direction: the route from chip 0 (0, 0) to chip 2 (1, 0) starts SOUTH" in msg
    assert "connection goes EAST" in msg


def test_1d_connection_between_chips_off_a_line_is_an_error():
    mesh = emu.Mesh(2, 2, grid=(1, 1))  # Linear: rows and columns are lines, diagonals are not
    program, _, _ = unicast_programs(mesh, {0: (3, 1)}, 64)
    with pytest.raises(emu.EmulatorError, match=r"chip 0 \(0, 0\) and chip 3 \(1, 1\) share no row or column"):
        emu.run_mesh_program(mesh, program)


def test_deadlock_report_covers_waits_across_devices():
    mesh = emu.Mesh(1, 2, grid=(1, 1))
    # Chip 1 waits for 2 increments but chip 0 sends only one.
    program, _, _ = unicast_programs(mesh, {0: (1, 1)}, 64, expect={1: 2})
    with pytest.raises(emu.EmulatorError) as err:
        emu.run_mesh_program(mesh, program)
    msg = str(err.value)
    assert "deadlock" in msg and "on device 1 core (0, 0)" in msg
    assert "for value == 2, current value 1" in msg
    assert "fabric: no packets in flight" in msg


def test_setup_fabric_connection_adds_semaphores_and_returns_three_args():
    program = pd.ProgramDescriptor(
        semaphores=[pd.SemaphoreDescriptor(id=0, core_ranges=core_set(1, 1), initial_value=0)]
    )
    args = setup_fabric_connection(FabricNodeId(0, 3), FabricNodeId(0, 4), 1, program, pd.CoreCoord(1, 1))
    assert len(args) == 3 and args[1:] == [1, 2]  # the two lowest ids free on that core
    assert [(s.id, s.initial_value) for s in program.semaphores] == [(0, 0), (1, 0), (2, 0)]
    assert program.semaphores[1].core_ranges == core_set(1, 1)
    # Another core still has every id free.
    args2 = setup_fabric_connection(FabricNodeId(0, 3), FabricNodeId(0, 2), 0, program, pd.CoreCoord(0, 0))
    assert args2[1:] == [0, 1]


@pytest.mark.parametrize(
    "src, dst, link, error",
    [
        (FabricNodeId(0, 1), FabricNodeId(0, 1), 0, ValueError),
        (FabricNodeId(0, 1), FabricNodeId(1, 2), 0, ValueError),
        (FabricNodeId(0, 1), FabricNodeId(0, 2), 4, ValueError),
        (FabricNodeId(0, 1), FabricNodeId(0, 2), -1, ValueError),
        ((0, 1), FabricNodeId(0, 2), 0, TypeError),
    ],
)
def test_setup_fabric_connection_rejects_bad_input(src, dst, link, error):
    with pytest.raises(error):
        setup_fabric_connection(src, dst, link, pd.ProgramDescriptor(), pd.CoreCoord(0, 0))


def test_fabric_node_ids_are_row_major_chip_ids():
    mesh = emu.Mesh(2, 4, grid=(1, 1))
    assert mesh.get_fabric_node_id(pd.MeshCoordinate(1, 2)) == FabricNodeId(0, 6)
    assert node(mesh, 5) == FabricNodeId(0, 5)
    with pytest.raises(ValueError, match=r"\(2, 0\)"):
        mesh.get_fabric_node_id(pd.MeshCoordinate(2, 0))


def test_packet_larger_than_the_fabric_limit_is_an_error():
    mesh = emu.Mesh(1, 2, grid=(1, 1))
    program, _, _ = unicast_programs(mesh, {0: (1, 1)}, 2 * MAX_PACKET, max_packet=2 * MAX_PACKET)
    with pytest.raises(emu.EmulatorError, match=f"payload of {2 * MAX_PACKET} bytes exceeds the {MAX_PACKET}-byte"):
        emu.run_mesh_program(mesh, program)


@pytest.mark.parametrize(
    "mode, message",
    [
        (0, r"fabric send on link 0 EAST from chip 0 \(0, 0\) towards chip 1 \(0, 1\), which is not open"),
        (1, r"misuse\.cpp.*device 0 core \(0, 0\).*still open when the kernel ends \(missing close\(\)\)"),
    ],
)
def test_connection_misuse_is_an_error(mode, message):
    mesh = emu.Mesh(1, 2, grid=(1, 1))
    programs = {
        0: device_program(mesh, 0, "misuse.cpp", [cb(1, 1, HEADER_BYTES, core_set(0, 0))], [mode], connect_to=1),
        1: device_program(
            mesh,
            1,
            "unicast.cpp",
            [cb(c, 1, 64, core_set(0, 0)) for c in (0, 1, 2)],
            [0, 0, 0, 64, MAX_PACKET, 0, 0, 0],
        ),
    }
    with pytest.raises(emu.EmulatorError, match=message):
        emu.run_mesh_program(mesh, mesh_program(mesh, programs))


def test_mesh_device_forwards_fabric_settings():
    import ttnn_moe.emu as ttnn

    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4))
    node_ids = [mesh.get_fabric_node_id(pd.MeshCoordinate(r, c)).chip_id for r in range(2) for c in range(4)]
    assert node_ids == list(range(8))
    assert mesh.fabric_topology == ttnn.Topology.Linear
    mesh.fabric_topology = ttnn.Topology.Ring
    assert mesh.chip_mesh.fabric_topology == ttnn.Topology.Ring


def test_fabric_connection_manager_sends_over_forward_and_backward_connections():
    mesh = emu.Mesh(1, 3, grid=(1, 1))
    n_bytes = 6016  # two packets per connection
    data = np.random.default_rng(11).integers(0, 2**32, n_bytes // 4, dtype=np.uint32)
    programs, outputs = {}, {}
    for chip in range(3):
        device = mesh.devices()[chip]
        dram_in = dram_buffer(device, n_bytes, data if chip == 1 else None)
        outputs[chip] = dram_buffer(device, n_bytes)
        cores = core_set(0, 0)
        program = pd.ProgramDescriptor(
            kernels=[],
            cbs=[cb(0, 1, n_bytes, cores), cb(1, 1, HEADER_BYTES, cores), cb(2, 1, n_bytes, cores)],
            semaphores=[pd.SemaphoreDescriptor(id=0, core_ranges=cores, initial_value=0)],
        )
        args = [int(chip == 1), n_bytes, emu.fabric_max_payload_size, dram_in, outputs[chip]]
        if chip == 1:  # forward: east to chip 2, backward: west to chip 0
            args += [1] + setup_fabric_connection(node(mesh, 1), node(mesh, 2), 0, program, CORE)
            args += [1] + setup_fabric_connection(node(mesh, 1), node(mesh, 0), 0, program, CORE)
        else:
            args += [0, 0]
        program.kernels = [
            kernel(
                str(KERNELS / "connection_manager.cpp"), cores, pd.WriterConfigDescriptor(), runtime_args=[(CORE, args)]
            )
        ]
        programs[chip] = program
    counters = emu.run_mesh_program(mesh, mesh_program(mesh, programs))
    for chip in (0, 2):
        np.testing.assert_array_equal(
            read_u32(mesh.devices()[chip], outputs[chip], n_bytes), data, err_msg=f"chip {chip}"
        )
    pairs = counters["fabric"]["pairs"]
    assert {pair: v["bytes"] for pair, v in pairs.items()} == {(1, 2): n_bytes, (1, 0): n_bytes}


def test_routing_plane_route_sends_fused_scatter_writes_with_semaphore_increments_to_both_neighbours():
    mesh = emu.Mesh(1, 3, grid=(1, 1))
    page, n_pages = 1024, 8  # four packets of two pages per connection
    data = np.random.default_rng(13).integers(0, 2**32, n_pages * page // 4, dtype=np.uint32)
    programs, outputs = {}, {}
    west, east = 1, 0  # eth_chan_directions, the connections' tags
    for chip in range(3):
        device = mesh.devices()[chip]
        dram_in = dram_buffer(device, n_pages * page, data if chip == 1 else None)
        outputs[chip] = dram_buffer(device, n_pages * page)
        cores = core_set(0, 0)
        program = pd.ProgramDescriptor(
            kernels=[],
            cbs=[cb(0, 1, n_pages * page, cores), cb(2, 1, n_pages * page, cores)],
            semaphores=[pd.SemaphoreDescriptor(id=0, core_ranges=cores, initial_value=0)],
        )
        args = [int(chip == 1), n_pages, page, dram_in, outputs[chip], 2 if chip == 1 else 0]
        if chip == 1:
            args += [west, *setup_fabric_connection(node(mesh, 1), node(mesh, 0), 0, program, CORE)]
            args += [east, *setup_fabric_connection(node(mesh, 1), node(mesh, 2), 0, program, CORE)]
        program.kernels = [
            kernel(str(KERNELS / "routing_plane_scatter.cpp"), cores, pd.WriterConfigDescriptor(),
                   runtime_args=[(CORE, args)], defines=[("API_TYPE_Linear", "1")])
        ]  # fmt: skip
        programs[chip] = program
    counters = emu.run_mesh_program(mesh, mesh_program(mesh, programs))
    pages = data.reshape(n_pages, page // 4)
    swapped = pages.reshape(n_pages // 2, 2, -1)[:, ::-1].reshape(-1)  # each packet's two pages trade places
    for chip in (0, 2):
        got = read_u32(mesh.devices()[chip], outputs[chip], n_pages * page)
        np.testing.assert_array_equal(got, swapped, err_msg=f"chip {chip}")
    fabric = counters["fabric"]
    assert fabric["packets"] == 2 * n_pages // 2 and fabric["bytes"] == 2 * n_pages * page
    assert {pair: v["bytes"] for pair, v in fabric["pairs"].items()} == {(1, 0): n_pages * page, (1, 2): n_pages * page}
