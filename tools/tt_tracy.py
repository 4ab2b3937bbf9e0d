"""Tenstorrent's profiler post-processing (`tracy`, with its `tt_llk_perf` dependency), taken
from the `ttnn` wheel on PyPI without installing ttnn: both are pure Python and need only
pandas, click, pyyaml and loguru (pinned in requirements.txt), plus the perf-counter headers
`tt_llk_perf` reads its counter names from (at import, even when a log has no counters).

`ensure_tracy()` downloads the wheel once (see tools/tt_wheel.py) and unpacks only those into
`$TTNN_MOE_CACHE/tracy-<version>/`; `tracy_env()` is the environment that runs e.g.
`python -m tracy.process_ops_logs` from there.
"""

from __future__ import annotations

import tempfile
import zipfile
from pathlib import Path

from loguru import logger

from tools.tt_wheel import DEFAULT_VERSION, cache_root, download_wheel, is_published, publish

_PACKAGES = ("tracy/", "tt_llk_perf/")
# The headers' place in the wheel, and in the unpacked copy (LLK_HOME/tools/include/perf_counters).
_WHEEL_LLK = "ttnn/tt_metal/tt-llk/"
_COUNTER_HEADERS = _WHEEL_LLK + "tools/include/perf_counters/"
_LLK_HOME = "tt-llk"


def ensure_tracy(version: str = DEFAULT_VERSION) -> Path:
    """The directory holding the wheel's `tracy/` and `tt_llk_perf/` packages (unpacked once)."""
    target = cache_root() / f"tracy-{version}"
    if is_published(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".tracy-{version}-", dir=target.parent) as tmp:
        wheel = download_wheel(version, Path(tmp) / "download")
        unpacked = Path(tmp) / "unpacked"
        with zipfile.ZipFile(wheel) as archive:
            members = [m for m in archive.infolist() if m.filename.startswith((*_PACKAGES, _COUNTER_HEADERS))]
            names = {m.filename for m in members}
            if not {"tracy/process_ops_logs.py", _COUNTER_HEADERS + "types.h"} <= names:
                raise RuntimeError(f"{wheel.name} lacks tracy/process_ops_logs.py or the perf-counter headers")
            for member in members:
                member.filename = member.filename.replace(_WHEEL_LLK, _LLK_HOME + "/", 1)
                archive.extract(member, unpacked)
        publish(unpacked, target, f"tracy and tt_llk_perf of ttnn=={version} from {wheel.name}")
    logger.info("Tenstorrent's profiler post-processing ({}) ready in {}", version, target)
    return target


def tracy_env(base: dict[str, str], version: str = DEFAULT_VERSION) -> dict[str, str]:
    """`base` with what running the post-processor from the unpacked copy needs."""
    root = ensure_tracy(version)
    return {**base, "PYTHONPATH": str(root), "LLK_HOME": str(root / _LLK_HOME)}
