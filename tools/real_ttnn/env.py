"""The real ttnn 0.81.1 runtime beside the project: a Python 3.12 (or 3.10) environment with the
`ttnn` wheel, the project's extension built for that interpreter, and the kernel-compiler stand-in.

    python -m tools.real_ttnn.env          # create or update it; prints where it is

The wheel exists for CPython 3.10 and 3.12 only. The interpreter is, in order:
$TTNN_MOE_REAL_TTNN_PYTHON, `python3.12` / `python3.10` on PATH, pyenv's 3.12.x / 3.10.x.
The environment lives in the project cache ($TTNN_MOE_CACHE, default ~/.cache/ttnn_moe) and is
reused between runs; the extension is rebuilt only when the project's sources change. torch is
never installed there: the ops and the hardware adapter must import without it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tools.tt_wheel import cache_root

REPO_ROOT = Path(__file__).resolve().parents[2]
TTNN_VERSION = "0.81.1"
# ttnn is installed without its dependencies (they include a CUDA torch); these are the ones its
# import and mock devices need, and the project's build requirements.
PINNED = [
    "loguru==0.7.3",
    "graphviz==0.21",
    "scikit-build-core==1.1.2",
    "pybind11==3.1.0",
    "cmake==4.4.4",
    "ninja==1.13.2",
]
STAND_IN = Path(__file__).resolve().parent / "riscv-tt-elf-g++"
# Sources whose change rebuilds the extension in the environment.
_SOURCE_DIRS = ("ttnn_moe",)
_SOURCE_FILES = ("CMakeLists.txt", "pyproject.toml")


class NoInterpreter(RuntimeError):
    """No CPython 3.12 / 3.10 on this machine: the real-runtime checks cannot run."""


def _version_of(python: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run(
            [python, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    parts = out.stdout.split()
    return (int(parts[0]), int(parts[1])) if out.returncode == 0 and len(parts) == 2 else None


def find_interpreter() -> str:
    """A CPython 3.12 or 3.10 executable, or NoInterpreter saying how to provide one."""
    candidates = []
    if os.environ.get("TTNN_MOE_REAL_TTNN_PYTHON"):
        candidates.append(os.environ["TTNN_MOE_REAL_TTNN_PYTHON"])
    candidates += [p for p in (shutil.which("python3.12"), shutil.which("python3.10")) if p]
    pyenv = shutil.which("pyenv")
    if pyenv:
        root = subprocess.run([pyenv, "root"], capture_output=True, text=True).stdout.strip()
        versions = sorted(Path(root, "versions").glob("3.1[02].*"), reverse=True) if root else []
        candidates += [str(v / "bin" / "python") for v in versions]
    for python in candidates:
        if _version_of(python) in ((3, 12), (3, 10)):
            return python
    raise NoInterpreter(
        "the real ttnn 0.81.1 checks need CPython 3.12 or 3.10 (the only wheels of ttnn 0.81.1); none was found "
        f"(tried {candidates or 'nothing'}). Install one (e.g. `pyenv install 3.12`) or set "
        "TTNN_MOE_REAL_TTNN_PYTHON to its executable."
    )


def env_dir(python: str) -> Path:
    major, minor = _version_of(python)
    return cache_root() / f"real-ttnn-{TTNN_VERSION}-py{major}{minor}"


def _sources_hash() -> str:
    digest = hashlib.sha256()
    files = [REPO_ROOT / f for f in _SOURCE_FILES]
    for directory in _SOURCE_DIRS:
        files += sorted(p for p in (REPO_ROOT / directory).rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    for path in files:
        digest.update(str(path.relative_to(REPO_ROOT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _run(*args: str) -> None:
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{' '.join(args)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


def _site_packages(env_python: Path) -> Path:
    query = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    return Path(
        subprocess.run([str(env_python), "-c", query], capture_output=True, text=True, check=True).stdout.strip()
    )


def installed_project(env_python: Path) -> Path:
    """The `ttnn_moe` package as installed in the environment (its kernels and their headers)."""
    return _site_packages(env_python) / "ttnn_moe"


def ensure_env(log=print) -> Path:
    """Creates or updates the environment; returns its python executable."""
    python = find_interpreter()
    root = env_dir(python)
    env_python = root / "bin" / "python"
    pip = [str(env_python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    stamp = root / ".ttnn_moe_state"
    if not env_python.exists():
        log(f"[real-ttnn] creating {root} with {python}")
        _run(python, "-m", "venv", str(root))
        _run(*pip, "--no-deps", f"ttnn=={TTNN_VERSION}")
        _run(*pip, *PINNED)
    site = _site_packages(env_python)
    compiler = site / "ttnn" / "runtime" / "sfpi" / "compiler" / "bin" / "riscv-tt-elf-g++"
    if not compiler.exists() or compiler.read_bytes() != STAND_IN.read_bytes():
        compiler.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(STAND_IN, compiler)
    state = _sources_hash()
    if not stamp.exists() or stamp.read_text() != state:
        log(f"[real-ttnn] building ttnn_moe for {env_python} (a few minutes the first time)")
        _run(*pip, "--no-build-isolation", "--no-deps", str(REPO_ROOT))
        stamp.write_text(state)
    return env_python


def main() -> int:
    try:
        env_python = ensure_env()
    except NoInterpreter as missing:
        print(f"[real-ttnn] NOT SET UP: {missing}", file=sys.stderr)
        return 0  # the tests that need it fail and say so
    print(f"[real-ttnn] ready: {env_python}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
