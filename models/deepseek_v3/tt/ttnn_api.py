"""The one place the model gets its `ttnn` from.

Every model file imports `ttnn` (the tensor API: tensors, mesh mappers, collectives, matmul,
eltwise ops) and `ttnn_moe` (our MoE ops) from here, so the backend they run on is chosen in
one place. Today that is the Tensix emulator's module, which has ttnn's API.
"""

import ttnn_moe
from ttnn_moe import emu as ttnn

__all__ = ["ttnn", "ttnn_moe"]
