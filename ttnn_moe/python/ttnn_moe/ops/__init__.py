"""The MoE device ops, ttnn-style: each takes and returns device tensors.

Every op runs through `ttnn_moe.ops._launch.launch` (C++ validation and output
specs, cached program, `generic_op`), so the same function runs on emulator
tensors and, after `ttnn_moe.attach(ttnn)`, on ttnn tensors.
"""

from collections.abc import Callable

# name -> op function; `ttnn_moe.attach` sets each of these on the ttnn module.
OPS: dict[str, Callable] = {}

__all__ = ["OPS"]

from ttnn_moe.ops.moe_bmm import moe_bmm  # noqa: E402  (registers after OPS exists)

OPS["moe_bmm"] = moe_bmm
