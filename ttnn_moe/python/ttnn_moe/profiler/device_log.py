"""`.logs/profile_log_device.csv`: the raw log tt-metal's device profiler writes, which
Tenstorrent's post-processor (`tracy.process_ops_logs`) turns into its ops report.

Line 1 names the arch, the clock in MHz and the worker-core count; line 2 is the 15-column
header; then one row per zone start and end: device, core, RISC, timer id, cycle, data,
run host id (the op's global call count), trace id and replay counter, zone name,
ZONE_START / ZONE_END and the zone's source (the kernel, for KERNEL zones). Cycles are the
modeled ones: an op's kernels start at its host-timeline start (ns) times the clock.

Per op and core there is one BRISC-FW zone (the post-processor's op boundary: an op is done
when every core that ran it closed its BRISC-FW) and, per RISC that runs a kernel, its FW
zone around its KERNEL zone. The model has no firmware time, so FW zones are made one cycle
wider than what they enclose on each side: the strict nesting keeps every row of an op
inside its BRISC-FW zones, which the op detection relies on. DEVICE FW DURATION is therefore
the kernel duration plus 4 cycles; the KERNEL zones are exactly the model's.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import TYPE_CHECKING

from ttnn_moe.profiler.records import RISCS, DeviceRecord, OpRecord

if TYPE_CHECKING:
    from ttnn_moe.profiler.session import Profile

LOGS_DIR = ".logs"
DEVICE_LOG = "profile_log_device.csv"
HEADER = (
    "PCIe slot, core_x, core_y, RISC processor type, timer_id, time[cycles since reset], data, run host ID, "
    "trace id, trace id counter, zone name, type, source line, source file, meta data"
)
# Trace id and replay counter of an op run outside a trace. tt-metal leaves them blank, which the
# post-processor reads as -1, except under pandas 3, whose string column refuses its in-place
# integer conversion; so the log says -1 itself.
NO_TRACE = -1
# The post-processor's RISC names and the zone-name prefix of each (the three TRISCs share TRISC-).
_RISC_NAMES = {"BRISC": "BRISC", "NCRISC": "NCRISC", "TRISC0": "TRISC_0", "TRISC1": "TRISC_1", "TRISC2": "TRISC_2"}
_ZONE_PREFIX = {"BRISC": "BRISC", "NCRISC": "NCRISC", "TRISC0": "TRISC", "TRISC1": "TRISC", "TRISC2": "TRISC"}
# Timer ids name a zone's source location on hardware; the post-processor skips id 0.
_TIMER_IDS = {"BRISC-FW": 1, "NCRISC-FW": 2, "TRISC-FW": 3, "BRISC-KERNEL": 4, "NCRISC-KERNEL": 5, "TRISC-KERNEL": 6}


def _device_rows(op: OpRecord, device: DeviceRecord) -> list[list]:
    base = round(op.start_ns * device.clock_ghz)

    def zone(core: tuple[int, int], risc: str, name: str, start: int, end: int, source: str = "") -> list[list]:
        x, y = core
        fields = (_RISC_NAMES[risc], _TIMER_IDS[name])
        return [
            [device.device_id, x, y, *fields, cycle, 0, op.call_count, NO_TRACE, NO_TRACE, name, phase, 0, source, ""]
            for cycle, phase in ((start, "ZONE_START"), (end, "ZONE_END"))
        ]

    spans: dict[tuple[int, int], list[dict]] = {}
    for span in device.timing["riscs"]:
        spans.setdefault(tuple(span["core"]), []).append(span)
    rows = []
    for core in sorted(spans):
        core_spans = sorted(spans[core], key=lambda s: RISCS.index(s["risc"]))
        first = base + min(int(s["start"]) for s in core_spans)
        last = base + max(int(s["end"]) for s in core_spans)
        rows += zone(core, "BRISC", "BRISC-FW", first - 2, last + 2)
        for span in core_spans:
            start, end, prefix = base + int(span["start"]), base + int(span["end"]), _ZONE_PREFIX[span["risc"]]
            if span["risc"] != "BRISC":
                rows += zone(core, span["risc"], f"{prefix}-FW", start - 1, end + 1)
            rows += zone(core, span["risc"], f"{prefix}-KERNEL", start, end, span["kernel"])
    return rows


def write_device_log(profile: Profile, path: Path) -> None:
    """Writes the device log of every op and device of `profile` to `path`."""
    clock_mhz = round(float(profile.params["clock_ghz"]) * 1000)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        f.write(
            f"ARCH: {profile.arch}, CHIP_FREQ[MHz]: {clock_mhz}, Max Compute Cores: {profile.params['worker_cores']}\n"
        )
        f.write(HEADER + "\n")
        writer = csv.writer(f)
        for op in profile.ops:
            for device in op.devices:
                writer.writerows(_device_rows(op, device))
