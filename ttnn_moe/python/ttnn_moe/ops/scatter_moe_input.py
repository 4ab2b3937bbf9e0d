"""scatter_moe_input: gather each local expert's token rows into an expert-major buffer."""

from __future__ import annotations

from typing import Any

from ttnn_moe import _C
from ttnn_moe.ops._launch import launch


def scatter_moe_input(
    x: Any,
    num_routed_tokens: Any,
    routed_tokens: Any,
    *,
    memory_config: Any = None,
    output_tensor: Any = None,
) -> Any:
    """x (T, H) bfloat16 ROW_MAJOR, num_routed_tokens (E_l, 1) uint32 ROW_MAJOR,
    routed_tokens (E_l, T) uint32 ROW_MAJOR -> (E_l, T, H) bfloat16 ROW_MAJOR.

    out[l, i] = x[routed_tokens[l, i]] for i < num_routed_tokens[l]; the rows after are zero.
    The counts are read on the device (no host round trip). Contract: docs/ops/scatter_moe_input.md.
    """
    (out,) = launch(
        "scatter_moe_input",
        {"x": x, "num_routed_tokens": num_routed_tokens, "routed_tokens": routed_tokens},
        _C.ops.scatter_moe_input.Attributes(),
        memory_config=memory_config,
        output_tensors=[output_tensor],
    )
    return out
