"""The emulator and ops under AddressSanitizer and UndefinedBehaviorSanitizer.

    .venv/bin/python -m tools.sanitizers [pytest arguments]     (default: SANITIZED_TESTS)

Builds ttnn_moe with TTNN_MOE_SANITIZE=ON (-fsanitize=address,undefined, no recovery) into the project
cache (`$TTNN_MOE_CACHE/sanitized`, rebuilt only when the sources change; the kernels the emulator
compiles at run time are instrumented too) and runs pytest on it in a subprocess: the sanitized
package replaces the development install for that process, and the ASan runtime is preloaded since
the Python interpreter itself is not instrumented. Any sanitizer report fails the run (exit code and
the report's text). Leak detection is off: the interpreter and torch keep allocations to exit.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tools.tt_wheel import cache_root

REPO_ROOT = Path(__file__).resolve().parents[1]
# Every op at least once, on a single device and on a mesh, plus the emulator's own checks.
SANITIZED_TESTS = [
    "tests/test_emu_compute.py",
    "tests/test_emu_dataflow.py",
    "tests/test_emu_matmul_thread.py",  # the tile matmuls on their second thread
    "tests/test_op_prepare_moe_routing_tensors.py::test_tables_exact",
    "tests/test_op_scatter_moe_input.py::test_rows_exact",
    "tests/test_op_moe_bmm.py::test_padded_routings_on_grids",
    "tests/test_op_moe_bmm.py::test_grouped_packed_input",
    "tests/test_op_local_reduce_moe_output.py::test_matches_golden",
    "tests/test_op_moe_gate.py",
    "tests/test_deepseek_tt_moe.py::test_two_runs_are_bitwise_equal",  # the layer on a mesh: fabric ops
]
REPORT_MARKS = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer")
_SOURCES = ("ttnn_moe", "CMakeLists.txt", "pyproject.toml")


def _sources_hash() -> str:
    digest = hashlib.sha256()
    for name in _SOURCES:
        path = REPO_ROOT / name
        files = (
            sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
            if path.is_dir()
            else [path]
        )
        for file in files:
            digest.update(str(file.relative_to(REPO_ROOT)).encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()


def ensure_sanitized_build(log=print) -> Path:
    """The directory holding the sanitized `ttnn_moe` package (built if the sources changed)."""
    root = cache_root() / "sanitized"
    target, stamp = root / "site", root / ".sources"
    state = _sources_hash()
    if stamp.exists() and stamp.read_text() == state and (target / "ttnn_moe").is_dir():
        return target
    log("[sanitizers] building ttnn_moe with AddressSanitizer and UndefinedBehaviorSanitizer (a few minutes)")
    shutil.rmtree(target, ignore_errors=True)
    command = [
        sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-build-isolation",
        "--no-deps", "--target", str(target),
        "--config-settings=cmake.define.TTNN_MOE_SANITIZE=ON",
        "--config-settings=cmake.define.TTNN_MOE_TESTING=OFF",
        f"--config-settings=build-dir={root / 'build'}",
        str(REPO_ROOT),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"the sanitized build failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    stamp.write_text(state)
    return target


def preloaded_runtimes() -> str:
    """LD_PRELOAD for the interpreter, which is not instrumented: the ASan runtime of the compiler that
    built the extension, and libstdc++ beside it (ASan's __cxa_throw interceptor needs the real one
    loaded when it starts, or the first C++ exception fails its check)."""
    compiler = os.environ.get("CXX", "c++")
    paths = []
    for library in ("libasan.so", "libstdc++.so"):
        found = subprocess.run([compiler, f"-print-file-name={library}"], capture_output=True, text=True).stdout.strip()
        if not found or not Path(found).is_file():
            raise RuntimeError(f"{compiler} has no {library}; install its sanitizer and C++ runtime libraries")
        paths.append(str(Path(found).resolve()))
    return " ".join(paths)


def run(pytest_args: list[str]) -> subprocess.CompletedProcess:
    """pytest on the sanitized build, in a subprocess; returns its result (output captured)."""
    target = ensure_sanitized_build()
    env = dict(
        os.environ,
        LD_PRELOAD=preloaded_runtimes(),
        ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=0",
        UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
        TTNN_MOE_SANITIZED_SITE=str(target),
    )
    command = [sys.executable, "-m", "tools.sanitizers", "--in-sanitized-process", *pytest_args]
    return subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True)


def _pytest_on_sanitized_build(pytest_args: list[str]) -> int:
    """Inside the sanitized process: drop the development install's import hook, import the sanitized
    package instead, run pytest."""
    site = os.environ["TTNN_MOE_SANITIZED_SITE"]
    sys.meta_path[:] = [f for f in sys.meta_path if "ScikitBuild" not in type(f).__name__]
    sys.path.insert(0, site)
    import pytest  # noqa: PLC0415

    import ttnn_moe  # noqa: PLC0415

    if not str(Path(ttnn_moe.__file__).resolve()).startswith(str(Path(site).resolve())):
        raise RuntimeError(f"imported {ttnn_moe.__file__}, not the sanitized build under {site}")
    # -s: a sanitizer report ends the process at once; with pytest's capture it would be lost.
    return pytest.main(["-q", "-s", "-p", "no:cacheprovider", *pytest_args])


def main(argv: list[str]) -> int:
    if argv[:1] == ["--in-sanitized-process"]:
        return _pytest_on_sanitized_build(argv[1:])
    done = run(argv or SANITIZED_TESTS)
    print(done.stdout[-6000:], done.stderr[-6000:], sep="\n")
    reports = [mark for mark in REPORT_MARKS if mark in done.stdout + done.stderr]
    print(f"sanitizers: exit {done.returncode}, reports: {reports or 'none'}")
    return 0 if done.returncode == 0 and not reports else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
