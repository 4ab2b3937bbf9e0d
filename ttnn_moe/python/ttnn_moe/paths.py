"""Where the files read at run time live: kernels and the emulator's kernel-API headers.

A source checkout (editable install) reads them from the tree; a wheel carries
copies inside the package.
"""

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent
_SOURCE_ROOT = _PACKAGE_DIR.parents[1]  # .../ttnn_moe (holds cpp/, kernels/, python/)


def _first_existing(*candidates: Path) -> Path:
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"none of these directories exists: {[str(c) for c in candidates]}")


def kernels_dir() -> Path:
    """Root of the op kernels (`<op>/{dataflow,compute}/*.cpp`)."""
    return _first_existing(_PACKAGE_DIR / "kernels", _SOURCE_ROOT / "kernels")


def emulator_include_dir() -> Path:
    """Root of the emulator's replacement of the tt-metal device headers (`api/...`)."""
    return _first_existing(_PACKAGE_DIR / "emu_include", _SOURCE_ROOT / "cpp" / "emu" / "include")
