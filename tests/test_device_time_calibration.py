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
    assert len(rows) >= 14
    for name, published, modeled, ratio, source in rows:
        assert abs(float(ratio) - float(modeled) / float(published)) < 0.02, name  # 2-decimal rounding
        assert 0.75 <= float(ratio) <= 1.33, f"{name}: ratio {ratio}"
        assert source.strip(), name
    assert re.search(r"(\d+) of \1 cases within 0.75..1.33", done.stdout)
