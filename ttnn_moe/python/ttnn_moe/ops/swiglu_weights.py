"""The weight layout of moe_bmm's SwiGLU mode: gate and up column tiles interleaved."""

from __future__ import annotations

from typing import Any

_TILE = 32


def interleave_gate_up(w_gate: Any, w_up: Any) -> Any:
    """(..., Kd, N) gate and up weights (torch tensors) -> the (..., Kd, 2N) weight of
    `moe_bmm(..., activation="swiglu")`: for every output column tile n, the gate's column tile n
    (32 columns) followed by the up's column tile n. One read of an x tile then serves both
    products, and a core's gate and up columns for an output tile are neighbours in DRAM order.
    N must be a multiple of 32. Upload the result with `from_torch(..., TILE_LAYOUT)`."""
    import torch  # noqa: PLC0415  (a host-side set-up helper; the ops themselves import without torch)

    if not isinstance(w_gate, torch.Tensor) or not isinstance(w_up, torch.Tensor):
        raise TypeError(f"interleave_gate_up: w_gate and w_up must be torch tensors, got {type(w_gate)}, {type(w_up)}")
    if w_gate.shape != w_up.shape:
        raise ValueError(f"interleave_gate_up: w_gate {list(w_gate.shape)} and w_up {list(w_up.shape)} differ in shape")
    if w_gate.dim() < 2 or w_gate.shape[-1] % _TILE:
        raise ValueError(
            f"interleave_gate_up: weights must be (..., Kd, N) with N a multiple of {_TILE}, got {list(w_gate.shape)}"
        )
    *lead, kd, n = w_gate.shape
    tiles = n // _TILE
    if w_gate.mT.is_contiguous() and w_up.mT.is_contiguous():
        # Transposed views of nn.Linear (..., N, Kd) weights: interleaving their 32-row blocks is
        # whole-row copies, and the transposed view of that is the result (no strided gather).
        rows = [w.mT.reshape(*lead, tiles, _TILE, kd) for w in (w_gate, w_up)]
        return torch.stack(rows, dim=-3).reshape(*lead, 2 * n, kd).mT  # (..., tiles, 2, 32, Kd)
    pairs = torch.stack([w_gate.reshape(*lead, kd, tiles, _TILE), w_up.reshape(*lead, kd, tiles, _TILE)], dim=-2)
    return pairs.reshape(*lead, kd, 2 * n)  # (..., Kd, tiles, 2, 32) -> gate tile n, up tile n, ...
