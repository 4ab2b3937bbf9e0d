"""Where the emulator finds the ttnn 0.81.1 wheel's kernels and headers."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from ttnn_moe._C import emu
from ttnn_moe.paths import emulator_include_dir

_root: Path | None = None

# tt-metal's Wormhole SFPU kernels (ckernel_sfpu_*.h), which compute kernels include by name, and tt-llk's
# shared ones they include as `sfpu/...`: those written in sfpi run unmodified on the emulator's sfpi; the
# emulator's include tree replaces the rest.
SFPU_HEADERS = "tt_metal/hw/ckernels/wormhole_b0/metal/llk_api/llk_sfpu"
LLK_SFPU_HEADERS = "tt_metal/tt-llk/tt_llk_wormhole_b0/common/inc/sfpu"


def sfpu_header_dir(root: Path) -> Path:
    """The wheel's SFPU kernels without those the emulator's include tree replaces: a directory of links to
    the others (and `sfpu/`, tt-llk's). A quoted include is looked up beside its includer first, so the
    wheel's own directory would hand e.g. ckernel_sfpu_sigmoid.h the wheel's ckernel_sfpu_exp.h instead of
    the emulator's."""
    root = Path(root)
    ours = emulator_include_dir()
    links: list[tuple[str, Path]] = []
    for relative, sub in ((SFPU_HEADERS, ""), (LLK_SFPU_HEADERS, "sfpu/")):
        for header in sorted((root / relative).glob("*.h")):
            if not (ours / sub / header.name).is_file():
                links.append((sub + header.name, header.resolve()))
    key = hashlib.sha256("\n".join(f"{name} {target}" for name, target in links).encode()).hexdigest()[:16]
    cache = Path(os.environ.get("TTNN_MOE_CACHE") or Path.home() / ".cache" / "ttnn_moe")
    target = cache / "emu_sfpu_headers" / key
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=target.parent))
    (staging / "sfpu").mkdir()
    for name, header in links:
        (staging / name).symlink_to(header)
    try:
        staging.rename(target)
    except OSError:  # another process made it first
        shutil.rmtree(staging)
    return target


def kernel_include_dirs(root: Path) -> list[str]:
    """The wheel's kernel include paths: op headers (`ttnn/cpp`), `tt-metalium/` (`tt_metal/api`), SFPU kernels."""
    return [str(root / "ttnn" / "cpp"), str(root / "tt_metal" / "api"), str(sfpu_header_dir(root))]


def use_wheel(root: Path | str | None) -> None:
    """Run Tenstorrent's ops from the unpacked wheel at `root` (None: forget it).

    `root` holds `tt_metal/` and `ttnn/cpp/`, as `tools/tt_wheel.ensure_ttnn_wheel()` returns.
    The wheel's op headers (`ttnn/cpp`), `tt-metalium/` API and SFPU kernels become kernel include paths.
    """
    global _root
    if root is None:
        _root = None
        emu.set_kernel_include_dirs([])
        return
    root = Path(root)
    for needed in ("ttnn/cpp/ttnn/operations", "tt_metal/api", SFPU_HEADERS, LLK_SFPU_HEADERS):
        if not (root / needed).is_dir():
            raise ValueError(f"{root} is not an unpacked ttnn wheel: it has no {needed}/")
    _root = root
    emu.set_kernel_include_dirs(kernel_include_dirs(root))


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
    `ttnn/cpp/ttnn/kernel_lib/...`: use_wheel's (kernel_include_dirs) and the wheel's root."""
    root = wheel_root()
    wanted = [*kernel_include_dirs(root), str(root)]
    if list(emu.kernel_include_dirs()) != wanted:
        emu.set_kernel_include_dirs(wanted)
