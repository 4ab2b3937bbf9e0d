"""local_reduce_moe_output: weighted sum of expert outputs back into token (or slot) rows."""

from __future__ import annotations

from typing import Any

from ttnn_moe.ops._launch import launch
from ttnn_moe.ops._readback import read_device_words
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
    max_assignments_per_row: int | None = None,
    strict: bool = True,
    return_row_overflow: bool = False,
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

    max_assignments_per_row: most assignments one output row receives (the top-k K: a token or
    slot row gets one per choice). Each core's L1 assignment list is then sized rows_per_core x K
    instead of every map entry (None), which lets large grouped maps fit in L1. A row receiving
    more keeps its first K (ascending l, i); the rest are dropped on the device and counted in
    row_overflow (num_out_rows, 1) uint32 (0 for every row that fits). Other rows are unaffected.
    strict: with a bound, read row_overflow after the op (a validation sync, outside the hot
    path) and raise ValueError naming the first overflowing row and the bound; strict=False
    leaves it on the device. return_row_overflow=True returns (out, row_overflow).
    """
    if not isinstance(num_out_rows, int) or isinstance(num_out_rows, bool) or num_out_rows <= 0:
        raise ValueError(f"local_reduce_moe_output: num_out_rows must be a positive int, got {num_out_rows!r}")
    if max_assignments_per_row is not None and (
        not isinstance(max_assignments_per_row, int) or isinstance(max_assignments_per_row, bool)
        or max_assignments_per_row <= 0
    ):
        raise ValueError(
            "local_reduce_moe_output: max_assignments_per_row must be a positive int or None, "
            f"got {max_assignments_per_row!r}"
        )
    compute = compute_attrs(compute_kernel_config or _DEFAULT_CONFIG)
    inputs = {
        "y": y,
        "token_idx_map": token_idx_map,
        "routed_token_weights": routed_token_weights,
        "num_routed_tokens": num_routed_tokens,
    }
    if expert_offsets is not None:
        inputs["expert_offsets"] = expert_offsets
    out, row_overflow = launch(
        "local_reduce_moe_output",
        inputs,
        attrs={
            "num_out_rows": num_out_rows,
            "math_fidelity": compute["math_fidelity"],
            "fp32_dest_acc_en": compute["fp32_dest_acc_en"],
            "max_assignments_per_row": max_assignments_per_row,
        },
        memory_config=memory_config,
    )
    if strict and max_assignments_per_row is not None:  # without a bound no row can overflow
        raise_on_row_overflow(row_overflow, max_assignments_per_row)
    return (out, row_overflow) if return_row_overflow else out


def raise_on_row_overflow(row_overflow: Any, max_assignments_per_row: int | None) -> None:
    """ValueError naming the first row (on any device) that received more than the bound."""
    for device, dropped in enumerate(read_device_words(row_overflow)):
        rows = [r for r, n in enumerate(dropped) if n]
        if rows:
            r = rows[0]
            raise ValueError(
                f"local_reduce_moe_output: output row {r} (device {device}) receives {max_assignments_per_row} + "
                f"{dropped[r]} assignments, more than max_assignments_per_row={max_assignments_per_row}; "
                f"{sum(dropped)} dropped over {len(rows)} rows"
            )

