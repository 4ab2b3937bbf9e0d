"""Tenstorrent's own tools read a ttnn_moe.profile folder unmodified: the ttnn 0.81.1 wheel's
profiler post-processor (tracy.process_ops_logs) turns the raw device log and host op logs the
profile wrote under .logs/ into its ops report, and tt-perf-report prints that report.
Expected values come from the profile's records (per-RISC spans in cycles, the arch clock)."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from emu_fixtures import emu_device_fixture
from fabric_programs import unicast_programs
from profiled_ops import N, T, run_moe_bmm
from ttnn_moe._C import emu
from ttnn_moe.profiler import Profile

import ttnn_moe
from tools.tt_profile_report import PostProcessError, post_process

REPO = Path(__file__).resolve().parents[1]

device = emu_device_fixture(device_id=0, grid=(2, 2))


def _profile(device, path: Path, arch: str, counts: list[list[int]]):
    ttnn_moe._C.ops.moe_bmm.program_cache_clear()
    with ttnn_moe.profile(path, arch=arch) as session:
        for c in counts:
            run_moe_bmm(device, c)
    return session


@pytest.fixture(scope="module")
def profiled(device, tmp_path_factory):
    path = tmp_path_factory.mktemp("profile")
    session = _profile(device, path, "wormhole_b0", [[40, 64], [40, 64], [0, 33]])
    return path, session, post_process(path)


def _report_rows(report: Path) -> list[dict[str, str]]:
    with report.open() as f:
        return list(csv.DictReader(f))


def _span_ns(spans: list[dict], clock_ghz: float) -> float:
    """First start to last end of `spans`, in ns of the clock."""
    return (max(s["end"] for s in spans) - min(s["start"] for s in spans)) / clock_ghz


def _check_rows_against_records(rows: list[dict[str, str]], session) -> None:
    assert len(rows) == len(session.ops)
    for row, op in zip(rows, session.ops):
        (device,) = op.devices
        spans, ghz = device.timing["riscs"], device.clock_ghz
        assert (row["OP CODE"], row["DEVICE ID"], row["GLOBAL CALL COUNT"]) == ("moe_bmm", "0", str(op.call_count))
        assert row["CORE COUNT"] == str(len({tuple(s["core"]) for s in spans}))
        # Their rounding of cycles * 1000 / MHz: within one cycle of ours.
        assert abs(float(row["DEVICE KERNEL DURATION [ns]"]) - _span_ns(spans, ghz)) <= 1 / ghz
        # Firmware zones enclose the kernels by 2 cycles each side (the model has no firmware time).
        assert abs(float(row["DEVICE FW DURATION [ns]"]) - (_span_ns(spans, ghz) + 4 / ghz)) <= 1 / ghz
        for risc in ("BRISC", "NCRISC", "TRISC0", "TRISC1", "TRISC2"):
            risc_spans = [s for s in spans if s["risc"] == risc]
            assert abs(float(row[f"DEVICE {risc} KERNEL DURATION [ns]"]) - _span_ns(risc_spans, ghz)) <= 1 / ghz
        per_core = [
            _span_ns([s for s in spans if tuple(s["core"]) == core], ghz) for core in {tuple(s["core"]) for s in spans}
        ]
        assert abs(float(row["DEVICE KERNEL DURATION PER CORE MAX [ns]"]) - max(per_core)) <= 1 / ghz
        assert abs(float(row["DEVICE KERNEL DURATION PER CORE MIN [ns]"]) - min(per_core)) <= 1 / ghz


def test_their_report_has_each_op_with_our_modeled_kernel_times(profiled):
    path, session, report = profiled
    assert report == path / "reports" / "ops_perf_results.csv"
    rows = _report_rows(report)
    _check_rows_against_records(rows, session)
    for row, op in zip(rows, session.ops):
        assert row["MATH FIDELITY"] == "HiFi4" and row["DEVICE ARCH"] == "wormhole_b0"
        assert row["PROGRAM CACHE HIT"] == str(op.program_cache_hit)
        assert (row["INPUT_0_Y_PAD[LOGICAL]"], row["INPUT_1_X_PAD[LOGICAL]"]) == (f"{T}[{T}]", f"{N}[{N}]")
        assert row["OUTPUT_0_MEMORY"] == "DEV_0_DRAM_INTERLEAVED"
        assert int(row["HOST DURATION [ns]"]) == round(op.dispatch_ns)
    # Their op-to-op latency (device cycles between ops) is the model's dispatch gap.
    for row, op in zip(rows[1:], session.ops[1:]):
        assert abs(int(row["OP TO OP LATENCY [ns]"]) - op.dispatch_ns) <= 1
    # The third op has half the row tiles of work: shorter in their report too.
    assert float(rows[2]["DEVICE KERNEL DURATION [ns]"]) < float(rows[0]["DEVICE KERNEL DURATION [ns]"])


def test_blackhole_log_is_read_at_its_clock(device, tmp_path):
    session = _profile(device, tmp_path, "blackhole", [[40, 64]])
    first_line = (tmp_path / ".logs" / "profile_log_device.csv").read_text().splitlines()[0]
    clock_mhz = round(emu.timing_params("blackhole")["clock_ghz"] * 1000)
    assert first_line.startswith(f"ARCH: blackhole, CHIP_FREQ[MHz]: {clock_mhz},")
    rows = _report_rows(post_process(tmp_path))
    _check_rows_against_records(rows, session)
    assert rows[0]["DEVICE ARCH"] == "blackhole"


def test_the_one_command_prints_tt_perf_report_table(profiled):
    path, session, _ = profiled
    result = subprocess.run(
        [sys.executable, "-m", "tools.tt_profile_report", str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert f"Tenstorrent's ops report: {path / 'reports' / 'ops_perf_results.csv'}" in result.stdout
    assert "Using architecture from CSV: wormhole" in result.stdout
    assert result.stdout.count("moe_bmm") >= len(session.ops)


def _corrupt_copy(profiled, tmp_path: Path, edit) -> Path:
    path, _, _ = profiled
    copy = tmp_path / "corrupt"
    shutil.copytree(path / ".logs", copy / ".logs")
    log = copy / ".logs" / "profile_log_device.csv"
    log.write_text(edit(log.read_text().splitlines(keepends=True)))
    return copy


def _swap_first_fw_zone(lines: list[str]) -> str:
    """The first BRISC-FW zone ends before it starts (its start and end cycles swapped)."""
    start = next(i for i, line in enumerate(lines) if "BRISC-FW,ZONE_START" in line)
    end = next(i for i, line in enumerate(lines) if "BRISC-FW,ZONE_END" in line)
    start_fields, end_fields = lines[start].split(","), lines[end].split(",")
    start_fields[5], end_fields[5] = end_fields[5], start_fields[5]
    lines[start], lines[end] = ",".join(start_fields), ",".join(end_fields)
    return "".join(lines)


@pytest.mark.parametrize(
    "edit, their_complaint",
    [
        # Without the ARCH line their reader cannot tell the clock.
        pytest.param(lambda lines: "".join(lines[1:]), "in extract_device_info", id="no-arch-line"),
        # The first op's core then never closes its firmware zone: two ops merge into one.
        pytest.param(_swap_first_fw_zone, "Device data mismatch: Expected 3 but received 2 ops", id="end-before-start"),
    ],
)
def test_corrupt_device_log_is_reported_as_their_failure(profiled, tmp_path, edit, their_complaint):
    copy = _corrupt_copy(profiled, tmp_path, edit)
    with pytest.raises(
        PostProcessError, match=r"tracy\.process_ops_logs\) failed on .*corrupt \(exit code 1\)"
    ) as error:
        post_process(copy)
    assert their_complaint in str(error.value)
    result = subprocess.run(
        [sys.executable, "-m", "tools.tt_profile_report", str(copy)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1
    assert "Tenstorrent's post-processor (tracy.process_ops_logs) failed" in result.stderr


def test_device_only_report_has_a_row_per_op_and_device_of_a_mesh_op(tmp_path):
    mesh = emu.Mesh(1, 3, grid=(1, 1))
    program, _, _ = unicast_programs(mesh, {0: (2, 2)}, 2048)  # chip 0 sends two hops to chip 2
    session = Profile(tmp_path, "wormhole_b0", traced=False)
    for cache_hit in (False, True):
        session.record("unicast", [], [], program, cache_hit, emu.run_mesh_program(mesh, program))
    session.write()
    rows = _report_rows(post_process(tmp_path, device_only=True))
    # Device after device, each op once; chip 1 only forwards (no kernel, so no rows).
    running = sorted({d.device_id for op in session.ops for d in op.devices if d.timing["riscs"]})
    assert running == [0, 2]
    expected = [(op, d) for device_id in running for op in session.ops for d in op.devices if d.device_id == device_id]
    assert [int(r["GLOBAL CALL COUNT"]) for r in rows] == [op.call_count for op, _ in expected]
    for row, (_, device) in zip(rows, expected):
        spans = device.timing["riscs"]
        assert abs(float(row["DEVICE KERNEL DURATION [ns]"]) - _span_ns(spans, device.clock_ghz)) <= 1
    # The full report keeps one device of each op: the first.
    full = _report_rows(post_process(tmp_path))
    assert [(r["OP CODE"], r["DEVICE ID"]) for r in full] == [("unicast", "0")] * 2
