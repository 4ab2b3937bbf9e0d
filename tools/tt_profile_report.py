"""Runs Tenstorrent's own profiler post-processing, unmodified, on a `ttnn_moe.profile` folder,
then `tt-perf-report` on what it produced.

    python -m tools.tt_profile_report DIR [--device-only]

`tracy.process_ops_logs -o DIR` reads DIR/.logs (the device log and the host op logs the
profile wrote) and writes DIR/reports/ops_perf_results.csv, its ops report; tt-perf-report
then prints its table of that report. That report describes an op that ran on several
devices for one of them (it keys ops by global call count); `--device-only` makes it read
the device log alone: a row per op and device, with device times and global call counts but
no op codes (so without the tt-perf-report table).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tools.tt_tracy import tracy_env

REPORT = Path("reports") / "ops_perf_results.csv"
# The device analyses asked for: their default set without "device_kernel_first_to_last_start".
# The model starts all of an op's kernels at one cycle, so that span is 0 cycles, and the report
# writer divides by every analysis's duration to recover the clock.
ANALYSES = (
    "device_fw_duration",
    "device_kernel_duration",
    "device_kernel_duration_dm_start",
    "device_kernel_duration_per_core",
    *(f"device_{risc}_kernel_duration" for risc in ("brisc", "ncrisc", "trisc0", "trisc1", "trisc2", "erisc")),
)


class PostProcessError(RuntimeError):
    """Tenstorrent's post-processor rejected a profile folder."""


def _tail(text: str, lines: int = 12) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def post_process(profile_dir: Path, device_only: bool = False) -> Path:
    """Runs `tracy.process_ops_logs` on `profile_dir`; returns the ops report it wrote."""
    profile_dir = Path(profile_dir).resolve()
    report = profile_dir / REPORT
    report.unlink(missing_ok=True)
    # Importing tracy creates build folders under TT_METAL_HOME (default: the working directory).
    with tempfile.TemporaryDirectory(prefix="tt-metal-home-") as metal_home:
        env = tracy_env({**os.environ, "TT_METAL_HOME": metal_home})
        command = [sys.executable, "-m", "tracy.process_ops_logs", "-o", str(profile_dir)]
        command += [arg for analysis in ANALYSES for arg in ("-a", analysis)]
        command += ["--device-only"] if device_only else []
        completed = subprocess.run(command, env=env, capture_output=True, text=True)
    if completed.returncode != 0 or not report.is_file():
        raise PostProcessError(
            f"Tenstorrent's post-processor (tracy.process_ops_logs) failed on {profile_dir} "
            f"(exit code {completed.returncode}):\n{_tail(completed.stderr or completed.stdout)}"
        )
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profile_dir", type=Path, help="a folder written by ttnn_moe.profile")
    parser.add_argument("--device-only", action="store_true", help="a row per op and device, from the device log")
    args = parser.parse_args(argv)
    try:
        report = post_process(args.profile_dir, args.device_only)
    except PostProcessError as error:
        print(error, file=sys.stderr)
        return 1
    print(f"Tenstorrent's ops report: {report}", flush=True)
    if args.device_only:
        return 0
    # tt-perf-report prints its table to our stdout.
    return subprocess.run([str(Path(sys.executable).parent / "tt-perf-report"), str(report)]).returncode


if __name__ == "__main__":
    sys.exit(main())
