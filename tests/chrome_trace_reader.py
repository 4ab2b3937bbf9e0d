"""A reader of Chrome trace event files (JSON object form), written against the format's
specification ("Trace Event Format", the JSON Perfetto's UI and trace processor import): it
checks every event the profiler writes is well formed and rebuilds processes, tracks and
slices, so the tests query the trace the way a trace processor would."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Slice:
    name: str
    cat: str
    start_us: float
    dur_us: float
    args: dict

    @property
    def end_us(self) -> float:
        return self.start_us + self.dur_us


@dataclass
class Track:
    name: str
    slices: list[Slice] = field(default_factory=list)


@dataclass
class Process:
    name: str
    tracks: dict[int, Track] = field(default_factory=dict)


def read_trace(path: Path) -> dict[int, Process]:
    """pid -> process with its named tracks (tid -> track) and their complete ("X") slices."""
    document = json.loads(Path(path).read_text())
    assert isinstance(document, dict) and isinstance(document["traceEvents"], list)
    assert document.get("displayTimeUnit", "ms") in ("ms", "ns")
    processes: dict[int, Process] = {}
    slices: list[tuple[int, int, Slice]] = []
    for event in document["traceEvents"]:
        phase, pid = event["ph"], event["pid"]
        assert isinstance(pid, int)
        if phase == "M":
            assert event["name"] in ("process_name", "thread_name", "process_sort_index", "thread_sort_index")
            if event["name"] == "process_name":
                processes.setdefault(pid, Process("")).name = event["args"]["name"]
            elif event["name"] == "thread_name":
                process = processes.setdefault(pid, Process(""))
                process.tracks.setdefault(event["tid"], Track("")).name = event["args"]["name"]
            continue
        assert phase == "X", f"unexpected phase {phase!r}"
        assert isinstance(event["tid"], int) and isinstance(event["name"], str)
        assert event["ts"] >= 0 and event["dur"] >= 0
        slices.append(
            (
                pid,
                event["tid"],
                Slice(event["name"], event.get("cat", ""), event["ts"], event["dur"], event.get("args", {})),
            )
        )
    for pid, tid, s in slices:
        track = processes[pid].tracks[tid]  # every slice's process and track were named
        assert track.name, f"slice {s.name} on an unnamed track {pid}/{tid}"
        track.slices.append(s)
    return processes


def nested(inner: Slice, outer: Slice, tolerance_us: float = 1e-6) -> bool:
    return outer.start_us - tolerance_us <= inner.start_us and inner.end_us <= outer.end_us + tolerance_us
