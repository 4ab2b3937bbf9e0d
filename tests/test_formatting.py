"""The tree is formatted: clang-format (.clang-format) for C++, ruff (pyproject.toml) for Python."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CXX_DIRS = ("ttnn_moe/cpp", "ttnn_moe/kernels", "tests/kernels", "tools")
CXX_SUFFIXES = {".cpp", ".hpp", ".h"}


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_cxx_sources_are_clang_formatted():
    files = sorted(
        str(p.relative_to(ROOT)) for d in CXX_DIRS for p in (ROOT / d).rglob("*") if p.suffix in CXX_SUFFIXES
    )
    assert len(files) > 100, "the C++ sources were not found"
    done = _run(str(BIN / "clang-format"), "--dry-run", "--Werror", *files)
    assert done.returncode == 0, f"run `clang-format -i` on:\n{done.stderr[:4000]}"


def test_python_sources_are_ruff_formatted_and_clean():
    formatted = _run(str(BIN / "ruff"), "format", "--check", ".")
    assert formatted.returncode == 0, f"run `ruff format`:\n{formatted.stdout[:4000]}"
    linted = _run(str(BIN / "ruff"), "check", ".")
    assert linted.returncode == 0, f"ruff check:\n{linted.stdout[:4000]}"
