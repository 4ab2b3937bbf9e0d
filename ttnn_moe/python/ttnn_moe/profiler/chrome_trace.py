"""trace.json in the Chrome trace event format (JSON object form), which Perfetto's UI and
trace processor open: a process per device (and one for the host), a thread (track) per
core and RISC with a kernel slice per op and its wait slices nested inside, a track per
fabric link and direction with the op's traffic on it, and an "ops" track with one slice
per op. Timestamps are microseconds of the modeled timeline ("ts", "dur")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from ttnn_moe.profiler.records import RISCS

if TYPE_CHECKING:
    from ttnn_moe.profiler.session import Profile

HOST_PID = 0
OPS_TID = 0
_LINK_TID_BASE = 1 << 20


def _device_pid(device_id: int) -> int:
    return device_id + 1


def _slice(name: str, cat: str, pid: int, tid: int, start_ns: float, dur_ns: float, args: dict | None = None) -> dict:
    event = {"ph": "X", "name": name, "cat": cat, "pid": pid, "tid": tid, "ts": start_ns / 1e3, "dur": dur_ns / 1e3}
    if args:
        event["args"] = args
    return event


def _meta(kind: str, pid: int, name: str, tid: int | None = None, sort_index: int | None = None) -> list[dict]:
    event: dict = {"ph": "M", "name": kind, "pid": pid, "args": {"name": name}}
    if tid is not None:
        event["tid"] = tid
    events = [event]
    if sort_index is not None:
        sort_kind = "thread_sort_index" if tid is not None else "process_sort_index"
        sort = {"ph": "M", "name": sort_kind, "pid": pid, "args": {"sort_index": sort_index}}
        if tid is not None:
            sort["tid"] = tid
        events.append(sort)
    return events


def trace_events(profile: Profile) -> list[dict]:
    events = _meta("process_name", HOST_PID, "host", sort_index=0)
    events += _meta("thread_name", HOST_PID, "dispatch", tid=OPS_TID)
    tracks: dict[tuple[int, object], int] = {}  # (pid, (core, risc) or link) -> tid

    def track(pid: int, key: object, name: str, link: bool) -> int:
        if (pid, key) not in tracks:
            tid = (_LINK_TID_BASE if link else 1) + sum(1 for p, k in tracks if p == pid and (k[0] == "link") == link)
            tracks[(pid, key)] = tid
            events.extend(_meta("thread_name", pid, name, tid=tid, sort_index=tid))
        return tracks[(pid, key)]

    seen_devices: set[int] = set()
    for op in profile.ops:
        label = f"{op.name} #{op.call_count}"
        cache = "hit" if op.program_cache_hit else "miss"
        events.append(
            _slice(
                f"dispatch {label}",
                "dispatch",
                HOST_PID,
                OPS_TID,
                op.start_ns - op.dispatch_ns,
                op.dispatch_ns,
                {"program_cache": cache},
            )
        )
        for device in op.devices:
            pid = _device_pid(device.device_id)
            if device.device_id not in seen_devices:
                seen_devices.add(device.device_id)
                events += _meta("process_name", pid, f"device {device.device_id}", sort_index=pid)
                events += _meta("thread_name", pid, "ops", tid=OPS_TID, sort_index=0)
            ghz = device.clock_ghz
            events.append(
                _slice(
                    label,
                    "op",
                    pid,
                    OPS_TID,
                    op.start_ns,
                    device.duration_ns(),
                    {"math_fidelity": op.math_fidelity, "program_cache": cache, "cycles": device.duration_cycles},
                )
            )
            spans = sorted(device.timing["riscs"], key=lambda s: (tuple(s["core"]), RISCS.index(s["risc"])))
            for span in spans:
                x, y = span["core"]
                tid = track(pid, ((x, y), span["risc"]), f"core ({x}, {y}) {span['risc']}", link=False)
                start = op.start_ns + span["start"] / ghz
                events.append(
                    _slice(
                        Path(span["kernel"]).name or span["kernel"],
                        "kernel",
                        pid,
                        tid,
                        start,
                        (span["end"] - span["start"]) / ghz,
                        {"op": label, "kernel": span["kernel"], "wait_cycles": dict(span["wait_cycles"])},
                    )
                )
                for w_start, w_end, kind in span["waits"]:
                    events.append(_slice(kind, "wait", pid, tid, op.start_ns + w_start / ghz, (w_end - w_start) / ghz))
            for link in device.timing["links"]:
                key = ("link", link["from_chip"], link["to_chip"], link["link"])
                name = f"link {link['link']} chip {link['from_chip']} -> {link['to_chip']}"
                tid = track(pid, key, name, link=True)
                events.append(
                    _slice(
                        label,
                        "fabric",
                        pid,
                        tid,
                        op.start_ns + link["first_start"] / ghz,
                        (link["last_end"] - link["first_start"]) / ghz,
                        {
                            "packets": link["packets"],
                            "wire_bytes": link["wire_bytes"],
                            "busy_cycles": link["busy_cycles"],
                        },
                    )
                )
    return events


def write_trace(profile: Profile, path: Path) -> None:
    with path.open("w") as f:
        json.dump({"traceEvents": trace_events(profile), "displayTimeUnit": "ns"}, f)
