"""The benchmark scripts still run (at toy sizes): a broken benchmark is found by CI, not by the next reader."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> str:
    done = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{args} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_emulator_benchmark_runs():
    out = _run("benchmarks/emulator.py", "--size", "64")
    assert "tile matmuls/s" in out and "empty 64-core program" in out


def test_tile_math_benchmark_runs():
    out = _run("benchmarks/tile_math.py", "--iterations", "200", "--repeats", "1")
    assert "per second" in out or "/s" in out


def test_soak_benchmark_reports_memory_cache_and_a_bitwise_rerun():
    out = _run("benchmarks/soak.py", "--mesh", "t3k", "--steps", "4", "--report-every", "2", "--tokens", "8")
    reports = [line for line in out.splitlines() if line.startswith("step ")]
    assert len(reports) == 2 and all("RSS" in r and "program cache" in r and "emulator DRAM" in r for r in reports)
    buffers = {r.split("emulator DRAM ")[1].split(" buffers")[0] for r in reports}
    assert len(buffers) == 1, f"the live DRAM buffers changed between reports: {reports}"
    assert "fresh process, steps [0, 3]: 2 of 2 bitwise equal" in out


def test_full_scale_benchmark_prints_its_table():
    out = _run("benchmarks/full_scale.py", "--config", "mini", "--mesh", "t3k", "--tokens", "32")
    row = next(line.split() for line in out.splitlines() if line.startswith("t3k "))
    tokens, wall, rss, expert_mib, executed, needed, ratio, pcc = row[1:]
    assert tokens == "32" and float(wall) > 0 and 0 < float(rss) < 8 and float(expert_mib) > 0
    assert executed == needed and ratio == "1.00" and float(pcc) >= 0.999
