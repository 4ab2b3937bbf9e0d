"""Modeled device time of the ops a program runs (emulator target).

    with ttnn_moe.profile("prof") as run:
        ...ops...
    print(run.total_ns())

Every op launched inside the block is recorded with the emulator's device-time model
(`ttnn_moe/cpp/emu/timing`): per device, core and RISC. On exit the directory gets
`ops_perf_results.csv` (the columns of tt-metal's profiler report, which `tt-perf-report`
reads), `trace.json` (Chrome / Perfetto JSON trace: a process per device, a track per
core and RISC, one per fabric link and direction, op, kernel and wait slices) and `.logs/`
(tt-metal's raw device profiler log and host op logs, which Tenstorrent's own post-processor
turns into its report: tools/tt_profile_report.py).
Torch-free: the hardware path imports the ops without it.
"""

from ttnn_moe.profiler.bounds import Bound, op_bounds
from ttnn_moe.profiler.records import DeviceRecord, OpRecord
from ttnn_moe.profiler.session import Profile, active_profile, profile

__all__ = ["Bound", "DeviceRecord", "OpRecord", "Profile", "active_profile", "op_bounds", "profile"]
