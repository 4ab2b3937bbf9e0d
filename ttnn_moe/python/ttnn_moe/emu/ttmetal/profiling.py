"""Recording Tenstorrent's ops in an active `ttnn_moe.profile` session, like the suite's own ops."""

from __future__ import annotations

from typing import Any, Sequence

from ttnn_moe.profiler.session import active_profile


def record_op(name: str, inputs: Sequence[Any], outputs: Sequence[Any], program: Any, counters: dict | None) -> None:
    """Adds the run (its modeled device time is in `counters`) to the profile, if one is recording.
    The emulated op builds its program on every call, so each run counts as a program-cache miss."""
    session = active_profile()
    if session is not None and counters is not None:
        session.record(name, [t.to_arg() for t in inputs], [t.to_arg() for t in outputs], program, False, counters)
