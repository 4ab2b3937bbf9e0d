"""What the front end does on the host: every host built-in that computes and every read of a
device tensor back to the host (to_torch, from_device, a built-in's inputs).

    before = ttnn.host_traffic()
    y = layer(x)
    assert ttnn.host_traffic() - before == ttnn.HostTraffic()   # nothing left the device

The counts are cumulative over the process; `events` lists the last `MAX_EVENTS` as
(number, kind, name), so a test that finds host work can say which.
"""

from __future__ import annotations

import functools
from collections import deque
from dataclasses import dataclass, field

MAX_EVENTS = 1000


@dataclass(frozen=True)
class HostTraffic:
    host_computations: int = 0
    device_reads: int = 0
    events: tuple = field(default=(), compare=False)

    @property
    def total(self) -> int:
        return self.host_computations + self.device_reads

    def __sub__(self, earlier: "HostTraffic") -> "HostTraffic":
        return HostTraffic(
            self.host_computations - earlier.host_computations,
            self.device_reads - earlier.device_reads,
            tuple(e for e in self.events if e[0] > earlier.total),
        )


_counts = {"host_computations": 0, "device_reads": 0}
_events: deque = deque(maxlen=MAX_EVENTS)


def host_traffic() -> HostTraffic:
    """A snapshot of the counters (subtract two snapshots for what happened between them)."""
    return HostTraffic(_counts["host_computations"], _counts["device_reads"], tuple(_events))


def _count(kind: str, what: str) -> None:
    _counts[kind] += 1
    _events.append((sum(_counts.values()), kind, what))  # numbered like HostTraffic.total


def count_device_read(what: str) -> None:
    _count("device_reads", what)


def count_host_computation(what: str) -> None:
    _count("host_computations", what)


def host_builtin(fn):
    """Marks a function as a host built-in that computes: every call is counted."""

    @functools.wraps(fn)
    def counted(*args, **kwargs):
        count_host_computation(fn.__name__)
        return fn(*args, **kwargs)

    return counted
