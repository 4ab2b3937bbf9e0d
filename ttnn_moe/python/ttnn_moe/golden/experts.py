"""Goldens of the single-device expert ops: scatter_moe_input, moe_bmm, local_reduce_moe_output.

Math is fp32: bf16 inputs are upcast, outputs of moe_bmm and local_reduce are fp32.
"""

from __future__ import annotations

import torch

from ttnn_moe.golden._validate import (
    counts_column,
    grouped_offsets,
    require_float,
    require_int,
    require_positive_int,
    require_shape,
    squeeze_to_rank,
)


def scatter_moe_input(x: torch.Tensor, num_routed_tokens: torch.Tensor, routed_tokens: torch.Tensor) -> torch.Tensor:
    """x (T, H), counts (E_l, 1), routed_tokens (E_l, T) -> (E_l, T, H) in x's dtype.

    out[l, i] = x[routed_tokens[l, i]] for i < count_l; later rows are 0.
    """
    x = squeeze_to_rank(x, 2, "x")
    require_float(x, "x")
    num_tokens, hidden = x.shape
    tokens = squeeze_to_rank(routed_tokens, 2, "routed_tokens")
    require_int(tokens, "routed_tokens")
    counts = counts_column(num_routed_tokens, num_tokens)
    require_shape(tokens, (counts.numel(), num_tokens), "routed_tokens (E_l, T)")
    out = torch.zeros(counts.numel(), num_tokens, hidden, dtype=x.dtype)
    for l, count in enumerate(counts.tolist()):
        rows = tokens[l, :count].to(torch.int64)
        bad = ((rows < 0) | (rows >= num_tokens)).nonzero()
        if bad.numel():
            i = int(bad[0, 0])
            raise ValueError(f"routed_tokens[{l}, {i}] = {int(rows[i])} is outside [0, {num_tokens})")
        out[l, :count] = x[rows]
    return out


def moe_bmm(
    x: torch.Tensor,
    w: torch.Tensor,
    num_routed_tokens: torch.Tensor,
    *,
    expert_offsets: torch.Tensor | None = None,
) -> torch.Tensor:
    """Per-expert matmul of the active rows, fp32 output.

    padded:  x (E_l, T, Kd), w (E_l, Kd, N) -> (E_l, T, N); out[l, :count_l] = x[l, :count_l] @ w[l].
    grouped: x (M, Kd) with expert_offsets (E_l, 1) -> (M, N); rows [off_l, off_l + count_l) use w[l].
    Every other output row is 0.
    """
    w = squeeze_to_rank(w, 3, "w")
    require_float(w, "w")
    num_local, depth, width = w.shape
    grouped = expert_offsets is not None
    x = squeeze_to_rank(x, 2 if grouped else 3, "x (grouped: (M, Kd))" if grouped else "x (padded: (E_l, T, Kd))")
    require_float(x, "x")
    if x.shape[-1] != depth:
        raise ValueError(
            f"inner dims differ: x {tuple(x.shape)} has Kd={x.shape[-1]}, w {tuple(w.shape)} has Kd={depth}"
        )
    if not grouped and x.shape[0] != num_local:
        raise ValueError(f"x has {x.shape[0]} experts, w has {num_local}")
    rows_per_block = x.shape[-2]
    counts = counts_column(num_routed_tokens, rows_per_block)
    if counts.numel() != num_local:
        raise ValueError(f"num_routed_tokens has {counts.numel()} experts, w has {num_local}")
    x32, w32 = x.float(), w.float()
    if grouped:
        offsets = grouped_offsets(expert_offsets, counts, rows_per_block)
        out = torch.zeros(rows_per_block, width, dtype=torch.float32)
        for l, (off, count) in enumerate(zip(offsets.tolist(), counts.tolist())):
            out[off : off + count] = x32[off : off + count] @ w32[l]
        return out
    out = torch.zeros(num_local, rows_per_block, width, dtype=torch.float32)
    for l, count in enumerate(counts.tolist()):
        out[l, :count] = x32[l, :count] @ w32[l]
    return out


def _sum_rows_in_order(dest: torch.Tensor, contrib: torch.Tensor, num_rows: int) -> torch.Tensor:
    """out[r] = contributions with dest == r summed left to right in the given order (fp32).

    Pass j adds every row's j-th contribution; inside one pass the destinations are distinct,
    so each output row sees exactly the sequence 0 + c0 + c1 + ... of its own contributions.
    """
    out = torch.zeros(num_rows, contrib.shape[1], dtype=torch.float32)
    if dest.numel() == 0:
        return out
    order = torch.sort(dest, stable=True).indices
    sorted_dest = dest[order]
    first = torch.searchsorted(sorted_dest, sorted_dest, side="left")  # start of each dest's run
    rank = torch.empty_like(dest)
    rank[order] = torch.arange(dest.numel()) - first
    for j in range(int(rank.max()) + 1):
        pick = rank == j
        out[dest[pick]] += contrib[pick]
    return out


def local_reduce_moe_output(
    y: torch.Tensor,
    token_idx_map: torch.Tensor,
    routed_token_weights: torch.Tensor,
    num_routed_tokens: torch.Tensor,
    num_out_rows: int,
    *,
    expert_offsets: torch.Tensor | None = None,
    num_used_rows: int | None = None,
) -> torch.Tensor:
    """-> (num_out_rows, H) fp32: out[r] = sum of w * y over valid assignments mapped to r.

    num_used_rows: only rows [0, num_used_rows) are computed (an assignment naming a later row is an
    error); the op leaves the later rows as they were, so here they are NaN, which equals nothing.

    padded:  y (E_l, T, H), token_idx_map / routed_token_weights (E_l, T); entry (l, i) valid iff i < count_l.
    grouped: y (M, H), token_idx_map / routed_token_weights (M,); row m valid iff inside some
             [off_l, off_l + count_l).
    Sums run in ascending l, then ascending i (row), so the result is reproducible bit for bit.
    """
    require_positive_int(num_out_rows, "num_out_rows")
    if num_used_rows is None:
        num_used_rows = num_out_rows
    elif (
        isinstance(num_used_rows, bool) or not isinstance(num_used_rows, int) or not 0 <= num_used_rows <= num_out_rows
    ):
        raise ValueError(f"num_used_rows must be an int in [0, num_out_rows={num_out_rows}], got {num_used_rows!r}")
    grouped = expert_offsets is not None
    y = squeeze_to_rank(y, 2 if grouped else 3, "y (grouped: (M, H))" if grouped else "y (padded: (E_l, T, H))")
    require_float(y, "y")
    idx_map = squeeze_to_rank(token_idx_map, 1 if grouped else 2, "token_idx_map")
    require_int(idx_map, "token_idx_map")
    weights = squeeze_to_rank(routed_token_weights, 1 if grouped else 2, "routed_token_weights")
    require_float(weights, "routed_token_weights")
    require_shape(idx_map, y.shape[:-1], "token_idx_map")
    require_shape(weights, y.shape[:-1], "routed_token_weights")
    hidden = y.shape[-1]

    if grouped:
        counts = counts_column(num_routed_tokens, y.shape[0])
        offsets = grouped_offsets(expert_offsets, counts, y.shape[0]).tolist()
        width = 1
    else:
        counts = counts_column(num_routed_tokens, y.shape[1])
        if counts.numel() != y.shape[0]:
            raise ValueError(f"num_routed_tokens has {counts.numel()} experts, y has {y.shape[0]}")
        width = y.shape[1]
        offsets = [l * width for l in range(counts.numel())]
    # Flat indices (into y viewed as (rows, H)) of the valid entries, in (l, i) order.
    blocks = [torch.arange(off, off + count) for off, count in zip(offsets, counts.tolist())]
    flat_rows = torch.cat(blocks + [torch.zeros(0, dtype=torch.int64)])  # (A,)
    dest = idx_map.reshape(-1)[flat_rows].to(torch.int64)
    bad = ((dest < 0) | (dest >= num_used_rows)).nonzero()
    if bad.numel():
        a = int(bad[0, 0])
        row = int(flat_rows[a])
        where = f"[{row}]" if grouped else f"[{row // width}, {row % width}]"
        raise ValueError(f"token_idx_map{where} = {int(dest[a])} is outside [0, {num_used_rows})")
    contrib = weights.reshape(-1)[flat_rows].float()[:, None] * y.reshape(-1, hidden)[flat_rows].float()  # (A, H)
    out = _sum_rows_in_order(dest, contrib, num_out_rows)
    out[num_used_rows:] = float("nan")
    return out
