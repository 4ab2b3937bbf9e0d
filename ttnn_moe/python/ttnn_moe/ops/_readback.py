"""Host reads of small status records, for the strict-mode checks the op wrappers make after an op.

Each read is a validation sync outside the hot path, taken only in strict mode. Reading a ttnn
tensor needs no torch (the ops import without it); emulator tensors come with torch anyway.
"""

from __future__ import annotations

from typing import Any

from ttnn_moe.ops._launch import target_of


def read_device_words(tensor: Any) -> list[list[int]]:
    """A uint32 mesh tensor -> its words per device (row-major device order), read by its target."""
    return target_of("read_device_words", "tensor", tensor).device_words(tensor)
