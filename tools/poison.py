"""The ops under the emulator's poison mode: reads of memory nothing wrote are reported.

    .venv/bin/python -m tools.poison [pytest arguments]     (default: POISONED_TESTS)

Runs pytest in a subprocess with TTNN_MOE_POISON=1 (ttnn_moe/cpp/emu/README.md, "Uninitialised
reads"): fresh L1 and DRAM hold a NaN fill pattern, and a kernel's NOC transfer, fabric send or
tile unpack of bytes that no host upload, NOC or fabric write, pack or kernel store reached raises
EmulatorError naming the kernel, core, address and buffer, which fails the test that ran it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
# Every op at least once, on a single device and on a mesh.
POISONED_TESTS = [
    "tests/test_op_moe_gate.py",
    "tests/test_op_prepare_moe_routing_tensors.py::test_tables_exact",
    "tests/test_op_scatter_moe_input.py::test_rows_exact",
    "tests/test_op_moe_bmm.py::test_padded_routings_on_grids",
    "tests/test_op_moe_bmm.py::test_grouped_packed_input",
    "tests/test_op_moe_bmm_swiglu.py",
    # the row-major addend's strips (zeroed past M) and the unread pages that align its tiles
    "tests/test_op_moe_bmm_row_major_addend.py::test_grouped_row_major_addend_equals_the_tile_addend",
    "tests/test_op_moe_bmm_weight_sharing.py",  # weight blocks multicast between row blocks
    "tests/test_op_local_reduce_moe_output.py::test_matches_golden",
    "tests/test_deepseek_tt_moe.py::test_two_runs_are_bitwise_equal",  # the layer on a mesh: fabric ops
]
REPORT_MARK = "uninitialised read"


def run(pytest_args: list[str]) -> subprocess.CompletedProcess:
    """pytest with poison mode on, in a subprocess; returns its result (output captured)."""
    env = dict(os.environ, TTNN_MOE_POISON="1")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args]
    return subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True)


def main(argv: list[str]) -> int:
    done = run(argv or POISONED_TESTS)
    print(done.stdout[-6000:], done.stderr[-6000:], sep="\n")
    reported = REPORT_MARK in done.stdout + done.stderr
    print(f"poison: exit {done.returncode}, uninitialised reads: {'reported' if reported else 'none'}")
    return 0 if done.returncode == 0 and not reported else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
