"""local_reduce_moe_output: weighted sum of expert outputs back into token (or slot) rows."""

from __future__ import annotations

from typing import Any

from ttnn_moe.ops._launch import launch
from ttnn_moe.ops.compute_kernel_config import MathFidelity, WormholeComputeKernelConfig, compute_attrs

# fp32 accumulation unless the caller's config says otherwise.
_DEFAULT_CONFIG = WormholeComputeKernelConfig(
    math_fidelity=MathFidelity.HiFi4, math_approx_mode=False, fp32_dest_acc_en=True
)


def local_reduce_moe_output(
    y: Any,
    token_idx_map: Any,
    routed_token_weights: Any,
    num_routed_tokens: Any,
    num_out_rows: int,
    *,
    expert_offsets: Any = None,
    memory_config: Any = None,
    compute_kernel_config: Any = None,
) -> Any:
    """out[r] = sum over valid assignments (l, i) with token_idx_map[l, i] == r of weight * y[l, i].

    padded : y (E_l, T, H) bfloat16 ROW_MAJOR, token_idx_map (E_l, T) uint32,
             routed_token_weights (E_l, T) bfloat16, num_routed_tokens (E_l, 1) uint32
    grouped: y (M, H), token_idx_map (M,), routed_token_weights (M,), num_routed_tokens (E_l, 1),
             expert_offsets (E_l, 1) uint32 (multiples of 32)
    -> (num_out_rows, H) bfloat16 ROW_MAJOR. Entry (l, i) is valid iff i < num_routed_tokens[l].

    Token-stationary: output rows are split over the cores; each core builds the inverse
    index of its rows on the device (work linear in the number of assignments). Sums run in
    ascending l with fp32 accumulation (compute_kernel_config.fp32_dest_acc_en, default True),
    so results are bitwise reproducible.
    """
    if not isinstance(num_out_rows, int) or isinstance(num_out_rows, bool) or num_out_rows <= 0:
        raise ValueError(f"local_reduce_moe_output: num_out_rows must be a positive int, got {num_out_rows!r}")
    compute = compute_attrs(compute_kernel_config or _DEFAULT_CONFIG)
    inputs = {
        "y": y,
        "token_idx_map": token_idx_map,
        "routed_token_weights": routed_token_weights,
        "num_routed_tokens": num_routed_tokens,
    }
    if expert_offsets is not None:
        inputs["expert_offsets"] = expert_offsets
    (out,) = launch(
        "local_reduce_moe_output",
        inputs,
        attrs={
            "num_out_rows": num_out_rows,
            "math_fidelity": compute["math_fidelity"],
            "fp32_dest_acc_en": compute["fp32_dest_acc_en"],
        },
        memory_config=memory_config,
    )
    return out

