"""ttnn_moe: Mixture-of-Experts ops for Tenstorrent meshes.

`ttnn_moe._C` is the native extension (program descriptions, the Tensix
emulator, the ops' program factories). `ttnn_moe.golden` holds the torch
references every op is checked against. `ttnn_moe.attach(ttnn)` makes the ops
available as `ttnn.<op>` when the real ttnn is importable.
"""

from ttnn_moe import _C  # noqa: F401  (the extension must load with the package)
from ttnn_moe._C import program  # noqa: F401
from ttnn_moe._attach import attach
from ttnn_moe.ops import OPS as _OPS

globals().update(_OPS)

__all__ = ["attach", "program", *_OPS]
