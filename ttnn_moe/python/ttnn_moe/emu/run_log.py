"""Which device programs ran: every generic_op run (ours, ttnn's and the ops') inside
`record_runs()` is appended to its list as the run's counters.

    with ttnn.record_runs() as runs:
        y = layer(x)
    len(runs)   # mesh program launches; runs[i]["devices"] holds each device's counters
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

_recorders: list[list[dict]] = []


@contextlib.contextmanager
def record_runs() -> Iterator[list[dict]]:
    runs: list[dict] = []
    _recorders.append(runs)
    try:
        yield runs
    finally:
        _recorders.remove(runs)


def note_run(counters: dict) -> None:
    for runs in _recorders:
        runs.append(counters)
