"""The demo's device-time report (`--profile DIR`): every op of the layer with its modeled
device time and the device resource that bounds it (roofline lower bound, fraction reached),
the layer's total with and without host dispatch, and the three largest bounds."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from loguru import logger
from ttnn_moe.profiler import Profile, profile
from ttnn_moe.profiler.bounds import op_bounds


@contextlib.contextmanager
def device_time_profile(directory: str | None) -> Iterator[Profile | None]:
    """ttnn_moe.profile(directory) around the block, or nothing when directory is None."""
    if directory is None:
        yield None
        return
    with profile(directory) as session:
        yield session
    log_device_time(session)
    logger.info(
        f"profile written to {directory}: ops_perf_results.csv (tt-perf-report), trace.json (Perfetto), "
        f".logs/ (tt-metal's post-processor: scripts/tt_profile_report.sh {directory})"
    )


def log_device_time(session: Profile) -> None:
    logger.info(f"modeled device time ({session.arch}), per op (slowest device):")
    bounds = []
    for op in session.ops:
        bound = op_bounds(op, session.params)[0]
        bounds.append((op, bound))
        cache = "hit" if op.program_cache_hit else "miss"
        logger.info(
            f"  {op.name:<28} #{op.call_count:<3} {op.device_ns() / 1e3:>9.2f} us   bound: {bound.resource:<7} "
            f"(lower bound {bound.lower_ns / 1e3:.2f} us, {bound.fraction:.0%} reached)  program cache {cache}"
        )
    dispatch = sum(op.dispatch_ns for op in session.ops)
    logger.info(
        f"layer: device {session.device_ns() / 1e3:.2f} us over {len(session.ops)} device ops; "
        f"with host dispatch {session.total_ns() / 1e3:.2f} us ({dispatch / 1e3:.2f} us dispatch); "
        "host built-ins (torch on the host) would have no device time; the layer uses none"
    )
    top = sorted(bounds, key=lambda pair: pair[1].lower_ns, reverse=True)[:3]
    logger.info("top three bounds:")
    for op, bound in top:
        logger.info(
            f"  {op.name} #{op.call_count}: {bound.resource} {bound.lower_ns / 1e3:.2f} us of "
            f"{op.device_ns() / 1e3:.2f} us modeled"
        )
