"""Host reads of small status records, for the strict-mode checks the op wrappers make after an op.

Each read is a validation sync outside the hot path, taken only in strict mode. Reading a ttnn
tensor needs no torch (the ops import without it); emulator tensors come with torch anyway.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def _flatten(values: Any) -> list[int]:
    if isinstance(values, (list, tuple)):
        return [v for item in values for v in _flatten(item)]
    return [int(values) & 0xFFFFFFFF]  # uint32 words may come back as int32


def read_device_words(tensor: Any) -> list[list[int]]:
    """A uint32 mesh tensor -> its words per device (row-major device order)."""
    if hasattr(tensor, "to_arg"):  # an emulator tensor
        from ttnn_moe.emu.tensor import device_shards  # noqa: PLC0415

        return [_flatten(shard.reshape(-1).tolist()) for shard in device_shards(tensor)]
    import ttnn  # noqa: PLC0415  (only reached with ttnn tensors)

    return [_flatten(t.cpu().to_list()) for t in ttnn.get_device_tensors(tensor)]


def status_records(op: str, tensor: Any) -> Iterator[tuple[str, list[int]]]:
    """Each device's words of a status record, with the prefix its error messages start with:
    "<op>: " on a single device, "<op>: device d: " on a mesh."""
    per_device = read_device_words(tensor)
    for device, words in enumerate(per_device):
        yield (f"{op}: " if len(per_device) == 1 else f"{op}: device {device}: "), words
