"""all_to_all_combine_dense: slot rows back to their source devices, summed in fixed order."""

from __future__ import annotations

from typing import Any, NamedTuple

from ttnn_moe import _C
from ttnn_moe.ops._arguments import require_bool
from ttnn_moe.ops._launch import launch
from ttnn_moe.ops._readback import read_device_words
from ttnn_moe.ops.all_to_all_dispatch_dense import DispatchHandle

_OP = "all_to_all_combine_dense"
# Words of the combine_status record, as the kernel writes them.
StatusWord = _C.ops.all_to_all_combine_dense.StatusWord


class CombineOutput(NamedTuple):
    output: Any  # per device (B, S, H) (or (B, S, 1, H)) in output_dtype
    combine_status: Any  # per device (1, 8) uint32, words: StatusWord


_OUTPUT_FORMATS = {"bfloat16": _C.program.DataFormat.Float16_b, "float32": _C.program.DataFormat.Float32}


def all_to_all_combine_dense(
    reduced: Any,
    handle: DispatchHandle,
    *,
    output_dtype: Any = "bfloat16",
    memory_config: Any = None,
    output_tensor: Any = None,
    strict: bool = True,
) -> CombineOutput:
    """Dense combine along the dispatch's cluster axis. Contract: docs/ops/all_to_all_combine_dense.md.

    Per device: reduced (capacity, H) bfloat16, local_reduce_moe_output over the dispatch slots;
    handle: the DispatchHandle of the all_to_all_dispatch_dense that produced the slots.
    Returns CombineOutput: per device (B, S, H) (or (B, S, 1, H) when dispatch's x was in that
    form) in output_dtype (bfloat16 or float32), the partials of the line's devices summed in
    ascending source position with fp32 accumulation (bitwise reproducible); and combine_status,
    which counts slot sources outside the line or the tokens (skipped) and a num_slots past the
    capacity (clamped).

    strict: read every device's combine_status after the op (a validation sync, outside the
    hot path) and raise ValueError naming the first bad slot or the clamped num_slots.
    """
    output, _partials, _presence, status = _combine(
        reduced, handle, output_dtype, False, memory_config, output_tensor, strict
    )
    return CombineOutput(output, status)


def all_to_all_combine_dense_partials(
    reduced: Any, handle: DispatchHandle, *, memory_config: Any = None, strict: bool = True
) -> Any:
    """For debugging combine: the unsummed (D, B, S, H) bfloat16 partials, partials[q] = what line
    position q sent back, zero rows where it sent nothing. Not part of the hot path."""
    _output, partials, _presence, _status = _combine(reduced, handle, "bfloat16", True, memory_config, None, strict)
    return partials


def _combine(
    reduced: Any,
    handle: DispatchHandle,
    output_dtype: Any,
    return_partials: bool,
    memory_config: Any,
    output_tensor: Any,
    strict: bool,
) -> list[Any]:
    if not isinstance(handle, DispatchHandle):
        raise TypeError(
            f"{_OP}: handle must be the DispatchHandle all_to_all_dispatch_dense returned, got {type(handle).__name__}"
        )
    dtype_name = str(getattr(output_dtype, "name", output_dtype)).split(".")[-1].lower()
    if dtype_name not in _OUTPUT_FORMATS:
        raise ValueError(f"{_OP}: output_dtype must be bfloat16 or float32, got {output_dtype!r}")
    require_bool(_OP, "strict", strict)
    outputs = launch(
        _OP,
        {"reduced": reduced, "slot_source": handle.slot_source, "num_slots": handle.num_slots},
        _C.ops.all_to_all_combine_dense.Attributes(
            cluster_axis=handle.cluster_axis,
            batch=handle.batch,
            seq=handle.seq,
            output_dtype=_OUTPUT_FORMATS[dtype_name],
            unit_dim=handle.unit_dim,
            return_partials=return_partials,
            num_links=handle.num_links,
        ),
        topology=handle.topology,
        memory_config=memory_config,
        output_tensor=output_tensor,
    )
    if strict:
        for device, words in enumerate(read_device_words(outputs[3])):
            if words[StatusWord.kBadSlots]:
                raise ValueError(
                    f"{_OP}: device {device}: slot {words[StatusWord.kFirstBadSlot]} names a source "
                    f"outside the line or the B*S tokens ({words[StatusWord.kBadSlots]} bad slots)"
                )
            if words[StatusWord.kNumSlotsClamped]:
                raise ValueError(
                    f"{_OP}: device {device}: num_slots = {words[StatusWord.kNumSlotsRead]} exceeds the capacity "
                    f"{handle.capacity}"
                )
    return outputs
