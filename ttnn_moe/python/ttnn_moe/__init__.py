"""ttnn_moe: Mixture-of-Experts ops for Tenstorrent meshes.

`ttnn_moe._C` is the native extension (program descriptions, the Tensix
emulator, the ops' program factories). `ttnn_moe.golden` holds the torch
references every op is checked against.

When the real `ttnn` is importable, importing ttnn_moe attaches the ops to it
(`ttnn.moe_bmm(...)` etc., see `ttnn_moe.attach`); set TTNN_MOE_NO_ATTACH=1 to
opt out. Without ttnn (as in this project's CI) nothing is attached.
"""

import importlib.util as _importlib_util
import os as _os

from ttnn_moe import _C  # noqa: F401  (the extension must load with the package)
from ttnn_moe._attach import attach
from ttnn_moe._C import program  # noqa: F401
from ttnn_moe.ops import OPS as _OPS
from ttnn_moe.ops import (
    CombineOutput,
    DispatchDenseOutput,
    DispatchHandle,
    GateOutput,
    LocalReduceOutput,
    RoutingTensors,
    ScatterOutput,
    all_to_all_combine_dense_partials,
    expert_mapping,
    interleave_gate_up,
)
from ttnn_moe.profiler import profile

globals().update(_OPS)

if _os.environ.get("TTNN_MOE_NO_ATTACH") != "1" and _importlib_util.find_spec("ttnn") is not None:
    attach()

__all__ = [
    "attach",
    "profile",
    "program",
    *_OPS,
    "CombineOutput",
    "DispatchDenseOutput",
    "DispatchHandle",
    "GateOutput",
    "LocalReduceOutput",
    "RoutingTensors",
    "ScatterOutput",
    "all_to_all_combine_dense_partials",
    "expert_mapping",
    "interleave_gate_up",
]
