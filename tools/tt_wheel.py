"""The real tt-metal device headers and kernels, taken from the `ttnn` wheel on PyPI.

The wheel is published for CPython 3.10/3.12 only, so it is never installed here:
`ensure_ttnn_wheel()` downloads it with pip (cross-platform tags), unpacks only
`ttnn/tt_metal/*` (device headers, LLK, firmware wrappers) and `ttnn/ttnn/cpp/*`
(Tenstorrent's own op kernels), and returns the directory that holds both:

    <root>/tt_metal/hw/inc/api/...          device kernel API
    <root>/ttnn/cpp/ttnn/operations/...     Tenstorrent's kernels

The copy lives in `$TTNN_MOE_CACHE/ttnn-<version>/` (default `~/.cache/ttnn_moe`).
It is unpacked into a temporary directory beside it and renamed into place, so an
interrupted run never leaves a half-unpacked tree that a later run would trust.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from loguru import logger

DEFAULT_VERSION = "0.81.1"

# pip's cross-download tags: the wheel exists for these and nothing here runs it.
_PIP_TARGET = ["--python-version", "3.12", "--implementation", "cp", "--platform", "manylinux_2_34_x86_64"]
# Archive prefixes kept from the wheel (everything else is host binaries and Python).
_KEPT_PREFIXES = ("ttnn/tt_metal/", "ttnn/ttnn/cpp/")
_COMPLETE_MARKER = ".unpacked"
_VERSION_PATTERN = re.compile(r"^[0-9]+(\.[0-9A-Za-z]+)*$")


def cache_root() -> Path:
    """Root of everything this project caches on disk (`$TTNN_MOE_CACHE`, default ~/.cache/ttnn_moe)."""
    configured = os.environ.get("TTNN_MOE_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "ttnn_moe"


def pip_download_command(version: str, dest: Path) -> list[str]:
    """The pip command that fetches the wheel (also shown to the user when it fails)."""
    return [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        *_PIP_TARGET,
        "-d",
        str(dest),
        f"ttnn=={version}",
    ]


def ensure_ttnn_wheel(version: str = DEFAULT_VERSION) -> Path:
    """Download and unpack `ttnn==version` once; return the root holding `tt_metal/` and `ttnn/cpp/`."""
    if not isinstance(version, str) or not _VERSION_PATTERN.match(version):
        raise ValueError(f"not a ttnn release version: {version!r}")
    target = cache_root() / f"ttnn-{version}"
    if is_published(target):
        return target

    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".ttnn-{version}-", dir=target.parent) as tmp:
        wheel = download_wheel(version, Path(tmp) / "download")
        unpacked = _unpack(wheel, Path(tmp) / "unpacked")
        publish(unpacked, target, f"ttnn=={version} from {wheel.name}")
    logger.info("ttnn {} headers and kernels ready in {}", version, target)
    return target


def is_published(target: Path) -> bool:
    """Whether `target` is a complete tree put in place by `publish`."""
    return (target / _COMPLETE_MARKER).is_file()


def publish(unpacked: Path, target: Path, note: str) -> None:
    """Marks the fully unpacked tree `unpacked` complete (`note` says what it holds) and renames
    it to `target`, on the same file system, so no reader ever sees a half-unpacked `target`."""
    (unpacked / _COMPLETE_MARKER).write_text(note + "\n")
    if target.exists():
        # A stale, unmarked tree from an interrupted older layout: replace it.
        logger.info("replacing incomplete {}", target)
        shutil.rmtree(target)
    try:
        unpacked.rename(target)
    except OSError:
        # Another process finished first; its tree is complete (marked) and equivalent.
        if not is_published(target):
            raise


def download_wheel(version: str, dest: Path) -> Path:
    """Downloads the `ttnn==version` wheel into the new directory `dest` with pip; returns its path."""
    dest.mkdir(parents=True)
    command = pip_download_command(version, dest)
    logger.info("downloading ttnn=={} from PyPI (about 100 MB, once)", version)
    completed = subprocess.run(command, capture_output=True, text=True)
    wheels = sorted(dest.glob(f"ttnn-{version}-*.whl"))
    if completed.returncode != 0 or not wheels:
        tail = "\n".join((completed.stderr or completed.stdout).strip().splitlines()[-8:])
        shown = shlex.join(["python3", *pip_download_command(version, Path("DIR"))[1:]])
        raise RuntimeError(
            f"could not download ttnn=={version} (pip exit code {completed.returncode}).\n"
            f"Run this yourself to see why (it needs access to PyPI):\n    {shown}\n"
            f"pip said:\n{tail}"
        )
    logger.info("downloaded {} ({:.0f} MB)", wheels[0].name, wheels[0].stat().st_size / 2**20)
    return wheels[0]


def _unpack(wheel: Path, dest: Path) -> Path:
    """Extract the kept prefixes; return the directory that plays the role of the wheel's `ttnn/`."""
    with zipfile.ZipFile(wheel) as archive:
        members = [m for m in archive.infolist() if m.filename.startswith(_KEPT_PREFIXES)]
        if not any(m.filename.startswith("ttnn/tt_metal/hw/inc/") for m in members):
            raise RuntimeError(f"{wheel.name} has no ttnn/tt_metal/hw/inc: not a ttnn wheel with device headers")
        logger.info("unpacking {} files of {}", len(members), wheel.name)
        for member in members:
            archive.extract(member, dest)
    return dest / "ttnn"
