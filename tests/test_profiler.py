"""ttnn_moe.profile: every op run inside it is recorded with its modeled device time, written as
ops_perf_results.csv (read by the unmodified tt-perf-report) and a Chrome / Perfetto trace
(read back with chrome_trace_reader, since Perfetto's trace processor downloads its binary)."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest
import ttnn_moe.emu as ttnn
from chrome_trace_reader import nested, read_trace
from fabric_programs import unicast_programs
from profiled_ops import N, T, run_moe_bmm
from ttnn_moe._C import emu
from ttnn_moe.profiler import Profile
from ttnn_moe.profiler.bounds import op_bounds
from ttnn_moe.profiler.chrome_trace import write_trace

import ttnn_moe


@pytest.fixture(scope="module")
def device():
    d = ttnn.open_device(device_id=0, grid=(2, 2))
    yield d
    ttnn.close_device(d)


@pytest.fixture(scope="module")
def profiled(device, tmp_path_factory):
    path = tmp_path_factory.mktemp("profile")
    ttnn_moe._C.ops.moe_bmm.program_cache_clear()
    with ttnn_moe.profile(path) as session:
        run_moe_bmm(device, [40, 64])  # program-cache miss
        run_moe_bmm(device, [40, 64])  # hit
        run_moe_bmm(device, [0, 33])  # hit: other counts live in device memory
    return path, session


def test_every_op_is_recorded_with_dispatch_by_program_cache(profiled):
    _, session = profiled
    params = emu.timing_params("wormhole_b0")
    assert [op.name for op in session.ops] == ["moe_bmm"] * 3
    assert [op.program_cache_hit for op in session.ops] == [False, True, True]
    assert [op.dispatch_ns for op in session.ops] == [
        params["dispatch_ns_cache_miss"],
        params["dispatch_ns_cache_hit"],
        params["dispatch_ns_cache_hit"],
    ]
    # Untraced ops do not overlap: each starts one dispatch after the previous one ended.
    for before, op in zip(session.ops, session.ops[1:]):
        assert op.start_ns == pytest.approx(before.end_ns() + op.dispatch_ns)
    assert session.total_ns() == pytest.approx(session.ops[-1].end_ns())
    first, second, third = session.ops
    assert first.device_ns() == second.device_ns()  # same work, same model: same time
    assert third.device_ns() < first.device_ns()  # 2 row tiles of work instead of 4
    assert first.math_fidelity == "HiFi4"


def test_device_time_respects_its_roofline_lower_bounds(profiled):
    _, session = profiled
    params = emu.timing_params("wormhole_b0")
    op = session.ops[0]
    (device,) = op.devices
    # 4 row tiles (ceil(40/32) + ceil(64/32)) x 3 inner x 4 outer tile matmuls, HiFi4, over the 4 cores.
    matmuls = 4 * 3 * 4
    assert device.counters["tile_matmuls"] == matmuls
    compute_ns = matmuls * params["matmul_tile_cycles"]["HiFi4"] / 4 / params["clock_ghz"]
    bounds = {b.resource: b for b in op_bounds(op, params)}
    assert bounds["compute"].lower_ns == pytest.approx(compute_ns)
    assert all(0 < b.fraction <= 1 for b in bounds.values() if b.lower_ns > 0)
    assert op.device_ns() >= compute_ns


def test_csv_has_one_row_per_op_and_device_in_tt_metal_columns(profiled):
    path, session = profiled
    rows = list(csv.DictReader((path / "ops_perf_results.csv").open()))
    assert len(rows) == 3
    for row, op in zip(rows, session.ops):
        assert row["OP CODE"] == "moe_bmm" and row["DEVICE ID"] == "0" and row["DEVICE ARCH"] == "wormhole_b0"
        assert int(row["DEVICE KERNEL DURATION [ns]"]) == round(op.device_ns())
        assert int(row["OP TO OP LATENCY [ns]"]) == round(op.dispatch_ns)
        assert row["CORE COUNT"] == "4" and row["MATH FIDELITY"] == "HiFi4"
        assert (row["INPUT_0_Y_PAD[LOGICAL]"], row["INPUT_1_X_PAD[LOGICAL]"]) == (f"{T}[{T}]", f"{N}[{N}]")
        assert row["INPUT_1_DATATYPE"] == "BFLOAT16" and row["OUTPUT_0_MEMORY"] == "DEV_0_DRAM_INTERLEAVED"
        # The kernel duration is the slowest RISC's.
        risc_max = max(
            int(row[f"DEVICE {r} KERNEL DURATION [ns]"]) for r in ("BRISC", "NCRISC", "TRISC0", "TRISC1", "TRISC2")
        )
        assert abs(risc_max - int(row["DEVICE KERNEL DURATION [ns]"])) <= 1


def test_tt_perf_report_reads_our_csv(profiled, tmp_path):
    path, session = profiled
    out = tmp_path / "report.csv"
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "tt-perf-report"),
            str(path / "ops_perf_results.csv"),
            "--no-color",
            "--csv",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "Using architecture from CSV: wormhole" in result.stdout
    assert "moe_bmm" in result.stdout
    rows = list(csv.DictReader(out.open()))
    assert [r["OP Code"] for r in rows] == ["moe_bmm"] * 3
    # Its "Device Time" (us) and "Op-to-Op Gap" are ours.
    for row, op in zip(rows, session.ops):
        assert float(row["Device Time"]) == pytest.approx(round(op.device_ns()) / 1e3, abs=1e-3)
        assert float(row["Cores"]) == 4
    assert float(rows[1]["Op-to-Op Gap"]) == pytest.approx(session.ops[1].dispatch_ns / 1e3)


def test_trace_has_op_kernel_and_wait_slices_per_device_core_and_risc(profiled):
    path, session = profiled
    processes = read_trace(path / "trace.json")
    assert processes[0].name == "host" and processes[1].name == "device 0"
    device = processes[1]
    ops = next(t for t in device.tracks.values() if t.name == "ops").slices
    assert [s.name for s in ops] == ["moe_bmm #1", "moe_bmm #2", "moe_bmm #3"]
    for s, op in zip(ops, session.ops):
        assert s.start_us == pytest.approx(op.start_ns / 1e3) and s.dur_us == pytest.approx(op.device_ns() / 1e3)
    risc_tracks = {t.name: t for t in device.tracks.values() if t.name.startswith("core")}
    assert set(risc_tracks) == {
        f"core ({x}, {y}) {r}"
        for x in range(2)
        for y in range(2)
        for r in ("BRISC", "NCRISC", "TRISC0", "TRISC1", "TRISC2")
    }
    waits = 0
    for track in risc_tracks.values():
        kernels = [s for s in track.slices if s.cat == "kernel"]
        assert len(kernels) == 3  # one per op
        for w in (s for s in track.slices if s.cat == "wait"):
            waits += 1
            owner = [k for k in kernels if nested(w, k)]
            assert len(owner) == 1, f"wait {w.name} at {w.start_us} is inside no kernel slice"
        for kernel, op_slice in zip(kernels, ops):
            assert nested(kernel, op_slice)
    assert waits > 0


def test_fabric_links_get_their_own_tracks(tmp_path):
    mesh = emu.Mesh(1, 3, grid=(1, 1))
    program, _, _ = unicast_programs(mesh, {0: (2, 2)}, 2048)
    counters = emu.run_mesh_program(mesh, program)
    session = Profile(tmp_path, "wormhole_b0", traced=False)
    session.record("unicast", [], [], program, True, counters)
    write_trace(session, tmp_path / "trace.json")
    processes = read_trace(tmp_path / "trace.json")
    names = {pid: {t.name for t in p.tracks.values()} for pid, p in processes.items()}
    assert "link 0 chip 0 -> 1" in names[1]  # device 0 sends on its link towards chip 1
    # Chip 1 runs no program: its forwarding link is reported by the sender, device 0.
    assert "link 0 chip 1 -> 2" in names[1]
    link = next(t for t in processes[1].tracks.values() if t.name == "link 0 chip 0 -> 1")
    (traffic,) = link.slices
    assert traffic.args["packets"] == 2  # the data packet and the increment


def test_profiles_do_not_nest_and_bad_arch_is_named(tmp_path):
    with pytest.raises(ValueError, match="'p300'"):
        with ttnn_moe.profile(tmp_path, arch="p300"):
            pass
    with ttnn_moe.profile(tmp_path / "outer"):
        with pytest.raises(RuntimeError, match="already active"):
            with ttnn_moe.profile(tmp_path / "inner"):
                pass


def test_blackhole_profile_is_modeled_at_its_clock_and_named_in_the_csv(device, tmp_path):
    with ttnn_moe.profile(tmp_path / "wh") as wormhole:
        run_moe_bmm(device, [40, 64])
    with ttnn_moe.profile(tmp_path / "bh", arch="blackhole") as blackhole:
        run_moe_bmm(device, [40, 64])
    (wh_device,) = wormhole.ops[0].devices
    (bh_device,) = blackhole.ops[0].devices
    assert (wh_device.clock_ghz, bh_device.clock_ghz) == (1.0, 1.35)
    # Same Tensix cycles for the compute; the faster clock makes the op shorter in ns.
    assert bh_device.duration_ns() < wh_device.duration_ns()
    (row,) = list(csv.DictReader((tmp_path / "bh" / "ops_perf_results.csv").open()))
    assert row["DEVICE ARCH"] == "blackhole" and row["AVAILABLE WORKER CORE COUNT"] == "130"
    assert emu.timing_arch() == "wormhole_b0"  # the profile restored the process's architecture
