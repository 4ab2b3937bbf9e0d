"""scatter_moe_input: gather each local expert's token rows into an expert-major buffer."""

from __future__ import annotations

from typing import Any, NamedTuple

from ttnn_moe import _C
from ttnn_moe.ops._arguments import require_bool
from ttnn_moe.ops._launch import launch
from ttnn_moe.ops._readback import status_records

_OP = "scatter_moe_input"
# Words of the scatter_status record, as the kernel writes them.
StatusWord = _C.ops.scatter_moe_input.StatusWord


class ScatterOutput(NamedTuple):
    output: Any  # (E_l, T, H) bfloat16 ROW_MAJOR
    scatter_status: Any  # (1, 7) uint32, words: StatusWord


def scatter_moe_input(
    x: Any,
    num_routed_tokens: Any,
    routed_tokens: Any,
    *,
    memory_config: Any = None,
    output_tensors: Any = None,
    strict: bool = True,
) -> ScatterOutput:
    """x (T, H) bfloat16 ROW_MAJOR, num_routed_tokens (E_l, 1) uint32 ROW_MAJOR,
    routed_tokens (E_l, T) uint32 ROW_MAJOR -> ScatterOutput(output (E_l, T, H) bfloat16
    ROW_MAJOR, scatter_status (1, 7) uint32).

    out[l, i] = x[routed_tokens[l, i]] for i < num_routed_tokens[l]; the rows after are zero.
    The counts are read on the device (no host round trip). Contract: docs/ops/scatter_moe_input.md.

    The device counts what it cannot gather in scatter_status: token indices outside [0, T)
    below an expert's count (their rows are zero) and counts above T (acted on as T).
    strict=True reads the record after the op (a validation sync, outside the hot path) and
    raises ValueError naming the first bad entry or count; strict=False leaves it on the device.
    output_tensors: preallocated outputs in the order of ScatterOutput (entries may be None).
    """
    require_bool(_OP, "strict", strict)
    result = ScatterOutput(
        *launch(
            _OP,
            {"x": x, "num_routed_tokens": num_routed_tokens, "routed_tokens": routed_tokens},
            _C.ops.scatter_moe_input.Attributes(),
            memory_config=memory_config,
            output_tensors=output_tensors,
        )
    )
    if strict:
        raise_on_scatter_errors(result.scatter_status, num_tokens=int(x.shape[-2]))
    return result


def raise_on_scatter_errors(scatter_status: Any, *, num_tokens: int) -> None:
    """ValueError naming the first device with a token index outside [0, T) or a count above T."""
    for where, words in status_records(_OP, scatter_status):
        if words[StatusWord.kBadTokens]:
            raise ValueError(
                f"{where}routed_tokens[{words[StatusWord.kFirstBadExpert]}, {words[StatusWord.kFirstBadIndex]}] = "
                f"{words[StatusWord.kFirstBadToken]} is outside [0, {num_tokens}) "
                f"({words[StatusWord.kBadTokens]} such entries, their rows are zero)"
            )
        if words[StatusWord.kClampedCounts]:
            raise ValueError(
                f"{where}num_routed_tokens[{words[StatusWord.kFirstClampedExpert]}] = "
                f"{words[StatusWord.kFirstClampedCount]} exceeds T = {num_tokens} "
                f"({words[StatusWord.kClampedCounts]} such experts)"
            )
