"""benchmarks/device_time.py --calibrate: every published figure is reproduced within 0.75..1.33
by the one Wormhole parameter set (the cases run small programs on the emulator: seconds)."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_calibration_cases_are_all_within_target():
    done = subprocess.run(
        [sys.executable, "benchmarks/device_time.py", "--calibrate"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = re.findall(r"^(.+?)\s{2,}\S+\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)  (\S.*)$", done.stdout, re.MULTILINE)
    assert len(rows) >= 20
    names = [name.strip() for name, *_ in rows]
    assert "DRAM-sharded decode matmul 32x2048x3072 bfp8 HiFi2" in names
    assert [n for n in names if n.startswith("multi-core matmul")] == [
        "multi-core matmul, 8x8 grid, 3328x2560x2560, bfloat16, HiFi4",
        "multi-core matmul, 8x8 grid, 3328x2560x2560, bfloat8_b, HiFi2",
        "multi-core matmul, 8x8 grid, 3328x2560x2560, bfloat4_b, LoFi",
    ]
    assert [n for n in names if n.startswith("all_gather 1x8 line")] == [
        "all_gather 1x8 line, 1024 KiB gathered, bf16 DRAM",
        "all_gather 1x8 line, 4096 KiB gathered, bf16 DRAM",
    ]
    for name, published, modeled, ratio, source in rows:
        assert abs(float(ratio) - float(modeled) / float(published)) < 0.02, name  # 2-decimal rounding
        assert 0.75 <= float(ratio) <= 1.33, f"{name}: ratio {ratio}"
        assert source.strip(), name
    assert re.search(r"(\d+) of \1 cases within 0.75..1.33", done.stdout)


def test_roofline_runs_at_toy_dims_and_names_a_bound_per_op():
    done = subprocess.run(
        [
            sys.executable,
            "benchmarks/device_time.py",
            "--roofline",
            "decode",
            "--hidden",
            "256",
            "--intermediate",
            "128",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    ops = re.findall(
        r"^(all_to_all\w+|moe_bmm w\w+(?: swiglu)?|local_reduce\w+)\s+([\d.]+)\s+(\w+)\s+([\d.]+)\s+(\d+)%",
        done.stdout,
        re.M,
    )
    assert [op for op, *_ in ops] == [
        "all_to_all_dispatch_dense",
        "moe_bmm w1w3 swiglu",
        "moe_bmm w2",
        "local_reduce_moe_output",
        "all_to_all_combine_dense",
    ]
    for op, modeled, bound, lower, fraction in ops:
        assert bound in ("compute", "dram", "noc", "fabric"), op
        assert float(lower) <= float(modeled) and 0 <= int(fraction) <= 100, op
    total = float(re.search(r"^layer \(device ops\)\s+([\d.]+)", done.stdout, re.M).group(1))
    assert abs(total - sum(float(m) for _, m, *_ in ops)) < 0.05
