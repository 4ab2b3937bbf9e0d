"""Golden of prepare_moe_routing_tensors: per-local-expert tables of the (token, k) assignments."""

from __future__ import annotations

import torch

from ttnn_moe.golden._validate import (
    require_bf16,
    require_int,
    require_positive_int,
    require_shape,
    squeeze_to_rank,
)
from ttnn_moe.golden.mesh import expert_owners, local_expert_slots


def _expert_ids(selected_experts: torch.Tensor, name: str = "selected_experts") -> torch.Tensor:
    """(T, K) any-int ids (uint32 values) -> (T, K) int64."""
    ids = squeeze_to_rank(selected_experts, 2, name)
    require_int(ids, name)
    return ids.to(torch.int64)


def _invalid_mask(ids: torch.Tensor, num_experts: int) -> torch.Tensor:
    return (ids < 0) | (ids >= num_experts)


def count_invalid_expert_ids(selected_experts: torch.Tensor, num_experts: int) -> int:
    """Number of (t, k) assignments whose id is outside [0, num_experts)."""
    require_positive_int(num_experts, "num_experts")
    return int(_invalid_mask(_expert_ids(selected_experts), num_experts).sum())


def raise_on_first_invalid(ids: torch.Tensor, num_experts: int, where: str = "") -> None:
    """Strict mode: ValueError naming the first bad (t, k) in row-major order and its id."""
    bad = _invalid_mask(ids, num_experts).nonzero()
    if bad.numel():
        t, k = (int(v) for v in bad[0])
        raise ValueError(
            f"{where}expert id {int(ids[t, k])} at (t, k) = ({t}, {k}) is outside [0, {num_experts}) "
            f"({bad.shape[0]} invalid ids in total)"
        )


def _require_even_placement(expert_mapping: torch.Tensor) -> None:
    """Every device of the mapping holds E / D experts (the routing tables have E_l = E / D rows)."""
    owners = expert_owners(expert_mapping)
    num_devices = squeeze_to_rank(expert_mapping, 2, "expert_mapping").shape[1]
    per_device = torch.bincount(owners, minlength=num_devices)
    uneven = (per_device * num_devices != owners.numel()).nonzero()
    if uneven.numel():
        d = int(uneven[0, 0])
        raise ValueError(
            f"expert_mapping places {int(per_device[d])} experts on device {d}; every device must hold "
            f"E / D = {owners.numel()} / {num_devices}"
        )


def prepare_moe_routing_tensors(
    selected_experts: torch.Tensor,
    routing_weights: torch.Tensor,
    expert_mapping: torch.Tensor,
    *,
    device_index: int = 0,
    strict: bool = True,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """selected_experts (T, K) int, routing_weights (T, K) bf16, expert_mapping (1, 1, E, D) one-hot
    -> the tables of device `device_index`: num_routed_tokens (E_l, 1) int32, routed_tokens (E_l, T)
    int32, routed_token_weights (E_l, T) bf16, token_idx_map (E_l, T) int32.

    The device's local experts are the E_l = E / D experts of its mapping column, by ascending id
    (every device must hold E / D). Row l lists local expert l's assignments by ascending token,
    ties (same expert chosen twice) by ascending k; the rest of the row is 0.
    """
    ids = _expert_ids(selected_experts)
    weights = squeeze_to_rank(routing_weights, 2, "routing_weights")
    require_bf16(weights, "routing_weights")
    require_shape(weights, ids.shape, "routing_weights (like selected_experts)")
    num_tokens, top_k = ids.shape
    if num_tokens == 0 or top_k == 0:
        raise ValueError(f"selected_experts must be non-empty, got shape {tuple(ids.shape)}")
    slot_of_expert = local_expert_slots(expert_mapping, device_index).to(torch.int64)  # (E,) slot or -1
    num_experts = slot_of_expert.numel()
    _require_even_placement(expert_mapping)
    num_local = int((slot_of_expert >= 0).sum())
    if strict:
        raise_on_first_invalid(ids, num_experts)

    # Assignments in (t, k) row-major order: a stable sort by slot keeps that order inside a slot.
    flat_ids = ids.reshape(-1)  # (T*K,)
    valid = ~_invalid_mask(flat_ids, num_experts)
    slot = torch.full_like(flat_ids, -1)
    slot[valid] = slot_of_expert[flat_ids[valid]]
    local = (slot >= 0).nonzero()[:, 0]  # flat (t, k) positions routed to this device, ascending
    order = torch.sort(slot[local], stable=True).indices
    picked = local[order]  # (A,) flat positions grouped by slot
    picked_slot = slot[picked]
    counts = torch.bincount(picked_slot, minlength=num_local)  # (E_l,)
    too_many = (counts > num_tokens).nonzero()
    if too_many.numel():
        l = int(too_many[0, 0])
        raise ValueError(
            f"local expert {l} receives {int(counts[l])} assignments, more than the {num_tokens} columns "
            f"of the routing tables (a token selected it more than once)"
        )
    block_start = torch.cumsum(counts, 0) - counts  # (E_l,)
    column = torch.arange(picked.numel()) - block_start[picked_slot]

    routed_tokens = torch.zeros(num_local, num_tokens, dtype=torch.int32)
    routed_token_weights = torch.zeros(num_local, num_tokens, dtype=torch.bfloat16)
    routed_tokens[picked_slot, column] = (picked // top_k).to(torch.int32)
    routed_token_weights[picked_slot, column] = weights.reshape(-1)[picked]
    num_routed_tokens = counts.to(torch.int32).reshape(num_local, 1)
    return num_routed_tokens, routed_tokens, routed_token_weights, routed_tokens.clone()
