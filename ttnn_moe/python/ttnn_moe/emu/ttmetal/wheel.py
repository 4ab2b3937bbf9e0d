"""Where the emulator finds the ttnn 0.81.1 wheel's kernels and headers."""

from __future__ import annotations

from pathlib import Path

from ttnn_moe._C import emu

_root: Path | None = None


def use_wheel(root: Path | str | None) -> None:
    """Run Tenstorrent's ops from the unpacked wheel at `root` (None: forget it).

    `root` holds `tt_metal/` and `ttnn/cpp/`, as `tools/tt_wheel.ensure_ttnn_wheel()` returns.
    The wheel's op headers (`ttnn/cpp`) and `tt-metalium/` API become kernel include paths.
    """
    global _root
    if root is None:
        _root = None
        emu.set_kernel_include_dirs([])
        return
    root = Path(root)
    for needed in ("ttnn/cpp/ttnn/operations", "tt_metal/api"):
        if not (root / needed).is_dir():
            raise ValueError(f"{root} is not an unpacked ttnn wheel: it has no {needed}/")
    _root = root
    emu.set_kernel_include_dirs([str(root / "ttnn" / "cpp"), str(root / "tt_metal" / "api")])


def wheel_root() -> Path:
    if _root is None:
        raise RuntimeError(
            "Tenstorrent's ops need the ttnn 0.81.1 wheel's kernels: call "
            "ttnn_moe.emu.ttmetal.use_wheel(tools.tt_wheel.ensure_ttnn_wheel()) first"
        )
    return _root


def wheel_kernel_path(relative: str) -> str:
    """Absolute path of a kernel source in the wheel, e.g. 'ttnn/cpp/ttnn/operations/ccl/...cpp'."""
    path = wheel_root() / relative
    if not path.is_file():
        raise FileNotFoundError(f"the ttnn wheel at {wheel_root()} has no {relative}")
    return str(path)


def use_kernel_library_includes() -> None:
    """Kernel include dirs as tt-metal's JIT has them for kernels that include the kernel library as
    `ttnn/cpp/ttnn/kernel_lib/...`: the wheel's `ttnn/cpp` and `tt_metal/api` (use_wheel sets those) and
    the wheel's root."""
    root = wheel_root()
    wanted = [str(root / "ttnn" / "cpp"), str(root / "tt_metal" / "api"), str(root)]
    if list(emu.kernel_include_dirs()) != wanted:
        emu.set_kernel_include_dirs(wanted)
