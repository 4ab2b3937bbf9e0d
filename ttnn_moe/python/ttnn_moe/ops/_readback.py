"""Host reads of small status records, for the strict-mode checks the op wrappers make after an op.

Each read is a validation sync outside the hot path, taken only in strict mode.
"""

from __future__ import annotations

from typing import Any

import torch


def read_device_words(tensor: Any) -> list[list[int]]:
    """A uint32 mesh tensor -> its words per device (row-major device order)."""
    if hasattr(tensor, "to_arg"):  # an emulator tensor
        from ttnn_moe.emu.tensor import device_shards

        shards = device_shards(tensor)
    else:  # a ttnn mesh tensor
        import ttnn  # noqa: PLC0415  (only reached with hardware tensors)

        shards = [ttnn.to_torch(t) for t in ttnn.get_device_tensors(tensor)]
    return [[int(v) & 0xFFFFFFFF for v in torch.as_tensor(s).reshape(-1).tolist()] for s in shards]
