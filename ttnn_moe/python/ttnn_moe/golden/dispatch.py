"""Golden of all_to_all_dispatch_dense: each device receives, packed by local expert, the token
rows its dispatch group routes to it, plus the metadata local reduce and combine need."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import torch

from ttnn_moe.golden._validate import (
    TILE,
    mesh_dims,
    require_axis,
    require_bf16,
    require_device_list,
    require_float,
    require_int,
    require_positive_int,
    require_shape,
    squeeze_to_rank,
)
from ttnn_moe.golden.mesh import axis_groups, expert_owners


class DispatchOutput(NamedTuple):
    """What one device holds after dispatch. Row = one (source token, k) assignment."""

    tokens: torch.Tensor  # (capacity, H) x's dtype; expert blocks at expert_offsets, unused rows 0
    num_routed_tokens: torch.Tensor  # (E_l, 1) int32: rows of each local expert
    expert_offsets: torch.Tensor  # (E_l, 1) int32: first row of each expert block, multiple of 32
    token_idx_map: torch.Tensor  # (capacity,) int32: slot of each row, 0 if unused
    routed_token_weights: torch.Tensor  # (capacity,) bf16: routing weight of each row, 0 if unused
    slot_source: torch.Tensor  # (capacity, 2) int32: slot -> (source position on axis, token b*S+s)
    num_slots: torch.Tensor  # (1,) int32: distinct (source, token) pairs received
    overflow: torch.Tensor  # (1,) int32: rows that did not fit in capacity (non-strict mode)


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def default_dispatch_capacity(tokens_per_device: int, top_k: int, group_size: int, experts_per_device: int) -> int:
    """Rows that always suffice with distinct experts per token: every token of the group sends
    min(K, E_l) rows, plus up to 31 rows of padding per expert block."""
    for name, value in (
        ("tokens_per_device", tokens_per_device),
        ("top_k", top_k),
        ("group_size", group_size),
        ("experts_per_device", experts_per_device),
    ):
        require_positive_int(value, name)
    rows = group_size * tokens_per_device * min(top_k, experts_per_device)
    return _round_up(rows, TILE) + TILE * experts_per_device


def _check_inputs(x, topk_indices, topk_weights, num_devices):
    """-> x (N, T, H), ids (N, T, K) int64, weights (N, T, K) bf16, and (B, S)."""
    xs = require_device_list(x, num_devices, "x")
    ids = require_device_list(topk_indices, num_devices, "topk_indices")
    ws = require_device_list(topk_weights, num_devices, "topk_weights")
    xs = [squeeze_to_rank(t, 3, f"x[{d}] (B, S, H)") for d, t in enumerate(xs)]
    batch, seq, hidden = xs[0].shape
    for d in range(num_devices):
        require_float(xs[d], f"x[{d}]")
        require_shape(xs[d], (batch, seq, hidden), f"x[{d}] (like x[0])")
        ids[d] = squeeze_to_rank(ids[d], 3, f"topk_indices[{d}] (B, S, K)")
        require_int(ids[d], f"topk_indices[{d}]")
        ws[d] = squeeze_to_rank(ws[d], 3, f"topk_weights[{d}] (B, S, K)")
        require_bf16(ws[d], f"topk_weights[{d}]")
    top_k = ids[0].shape[2]
    for d in range(num_devices):
        require_shape(ids[d], (batch, seq, top_k), f"topk_indices[{d}] (B, S, K)")
        require_shape(ws[d], (batch, seq, top_k), f"topk_weights[{d}] (B, S, K)")
    if batch * seq == 0 or top_k == 0 or hidden == 0:
        raise ValueError(f"x (B, S, H) = {(batch, seq, hidden)} and K = {top_k} must be non-empty")
    if len({t.dtype for t in xs}) != 1:
        raise TypeError(f"x dtypes differ across devices: {sorted({str(t.dtype) for t in xs})}")
    tokens = batch * seq
    return (
        torch.stack([t.reshape(tokens, hidden) for t in xs]),
        torch.stack([t.reshape(tokens, top_k).to(torch.int64) for t in ids]),
        torch.stack([t.reshape(tokens, top_k) for t in ws]),
        (batch, seq),
    )


def _raise_on_first_invalid(ids: torch.Tensor, num_experts: int, seq: int) -> None:
    """ids (N, T, K): ValueError naming the first bad (device, b, s, k) and the id."""
    bad = ((ids < 0) | (ids >= num_experts)).nonzero()
    if bad.numel():
        d, t, k = (int(v) for v in bad[0])
        raise ValueError(
            f"topk_indices[{d}] at (b, s, k) = ({t // seq}, {t % seq}, {k}) holds expert id {int(ids[d, t, k])}, "
            f"outside [0, {num_experts})"
        )


def _slot_on_owner(owners: torch.Tensor) -> torch.Tensor:
    """(E,) owner device -> (E,) rank of each expert among its owner's experts (ascending e)."""
    slot = torch.empty_like(owners)
    for device in owners.unique().tolist():
        mine = owners == device
        slot[mine] = torch.arange(int(mine.sum()))
    return slot


def _receive(x, ids, weights, owners, slot, device, num_local, capacity, strict) -> DispatchOutput:
    """One destination device. x (D, T, H), ids / weights (D, T, K) of its group, by position."""
    group_size, num_tokens, top_k = ids.shape
    flat_ids = ids.reshape(-1)  # (D*T*K,) in (position, token, k) order
    valid = (flat_ids >= 0) & (flat_ids < owners.numel())
    mine = torch.zeros_like(valid)
    mine[valid] = owners[flat_ids[valid]] == device
    picked = mine.nonzero()[:, 0]  # ascending (position, token, k)
    picked = picked[torch.sort(slot[flat_ids[picked]], stable=True).indices]  # grouped by slot, order kept
    counts = torch.bincount(slot[flat_ids[picked]], minlength=num_local).tolist()

    needed = sum(_round_up(c, TILE) for c in counts)
    if strict and needed > capacity:
        raise ValueError(f"device {device}: dispatch needs {needed} rows but capacity is {capacity}")
    # Blocks in ascending l; an expert keeps the rows that still fit (capacity is tile-aligned,
    # so every block start stays <= capacity).
    offsets, kept, rows, sources = [], [], [], []
    start, next_row = 0, 0
    for count in counts:
        keep = min(count, capacity - next_row)
        offsets.append(next_row)
        kept.append(keep)
        rows.append(torch.arange(next_row, next_row + keep))
        sources.append(picked[start : start + keep])
        start += count
        next_row += _round_up(keep, TILE)
    rows = torch.cat(rows + [torch.zeros(0, dtype=torch.int64)])
    sources = torch.cat(sources + [torch.zeros(0, dtype=torch.int64)])  # flat (position, token, k) per row

    pair = sources // top_k  # position * T + token
    pairs = torch.unique(pair)  # sorted: slots in ascending (position, token)
    hidden = x.shape[2]
    out = DispatchOutput(
        tokens=torch.zeros(capacity, hidden, dtype=x.dtype),
        num_routed_tokens=torch.tensor(kept, dtype=torch.int32).reshape(num_local, 1),
        expert_offsets=torch.tensor(offsets, dtype=torch.int32).reshape(num_local, 1),
        token_idx_map=torch.zeros(capacity, dtype=torch.int32),
        routed_token_weights=torch.zeros(capacity, dtype=torch.bfloat16),
        slot_source=torch.zeros(capacity, 2, dtype=torch.int32),
        num_slots=torch.tensor([pairs.numel()], dtype=torch.int32),
        overflow=torch.tensor([sum(counts) - sum(kept)], dtype=torch.int32),
    )
    out.tokens[rows] = x.reshape(-1, hidden)[pair]
    out.token_idx_map[rows] = torch.searchsorted(pairs, pair).to(torch.int32)
    out.routed_token_weights[rows] = weights.reshape(-1)[sources]
    out.slot_source[: pairs.numel(), 0] = (pairs // num_tokens).to(torch.int32)
    out.slot_source[: pairs.numel(), 1] = (pairs % num_tokens).to(torch.int32)
    return out


def all_to_all_dispatch_dense(
    x: list[torch.Tensor],
    topk_indices: list[torch.Tensor],
    topk_weights: list[torch.Tensor],
    expert_mapping: torch.Tensor,
    mesh_shape: Sequence[int],
    cluster_axis: int,
    *,
    capacity: int | None = None,
    strict: bool = True,
) -> list[DispatchOutput]:
    """Per device (row-major order): x (B, S, H), topk_indices (B, S, K) int, topk_weights (B, S, K) bf16;
    expert_mapping (1, 1, E, num_devices) one-hot. Returns one DispatchOutput per device.

    Device d receives every assignment of its dispatch group whose expert it owns; assignments to
    experts outside the group are left to the group that owns them. Invalid ids raise (strict)
    or are skipped. Rows that do not fit `capacity` raise (strict) or are dropped and counted.
    """
    mesh_rows, mesh_cols = mesh_dims(mesh_shape)
    num_devices = mesh_rows * mesh_cols
    require_axis(cluster_axis)
    xs, ids, weights, (_, seq) = _check_inputs(x, topk_indices, topk_weights, num_devices)
    owners = expert_owners(expert_mapping)
    mapped_devices = squeeze_to_rank(expert_mapping, 2, "expert_mapping").shape[1]
    if mapped_devices != num_devices:
        raise ValueError(f"expert_mapping covers {mapped_devices} devices, the {mesh_rows}x{mesh_cols} mesh has {num_devices}")
    if strict:
        _raise_on_first_invalid(ids, owners.numel(), seq)
    num_local = torch.bincount(owners, minlength=num_devices).tolist()
    group_size = mesh_shape[cluster_axis]
    if capacity is None:
        capacity = default_dispatch_capacity(ids.shape[1], ids.shape[2], group_size, max(num_local))
    require_positive_int(capacity, "capacity")
    if capacity % TILE:
        raise ValueError(f"capacity {capacity} must be a multiple of {TILE} (expert blocks are tile-aligned)")

    slot = _slot_on_owner(owners)
    outputs: list[DispatchOutput | None] = [None] * num_devices
    for group in axis_groups(mesh_shape, cluster_axis):
        for device in group:
            outputs[device] = _receive(
                xs[group], ids[group], weights[group], owners, slot, device, num_local[device], capacity, strict
            )
    return outputs
