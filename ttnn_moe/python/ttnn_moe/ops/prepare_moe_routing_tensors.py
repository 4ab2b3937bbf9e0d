"""prepare_moe_routing_tensors: per-local-expert tables of the (token, k) assignments."""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from ttnn_moe import _C
from ttnn_moe.ops._arguments import require_int
from ttnn_moe.ops._launch import launch

_OP = "prepare_moe_routing_tensors"

_NONE = 0xFFFFFFFF


def _read_words(tensor: Any) -> list[int]:
    # uint32 device tensors come back as torch.int32 holding the same bits.
    return [int(v) & 0xFFFFFFFF for v in _to_torch(tensor).reshape(-1).tolist()]


def _to_torch(tensor: Any) -> torch.Tensor:
    to_torch = getattr(tensor, "cpu", None)
    if to_torch is not None and not hasattr(tensor, "to_arg"):  # a ttnn tensor
        return tensor.cpu().to_torch()
    from ttnn_moe import emu

    return emu.to_torch(tensor)


def raise_on_routing_errors(routing_errors: Any, num_experts: int) -> None:
    """Strict mode: ValueError naming the first bad (t, k) and its id, or the overflowing expert.

    This reads the (1, 8) record back to the host: a validation sync outside the hot path,
    taken only when the caller asks for strict checking.
    """
    invalid, first_t, first_k, first_id, dropped, dropped_slot = _read_words(routing_errors)[:6]
    if invalid:
        raise ValueError(
            f"prepare_moe_routing_tensors: expert id {first_id} at (t, k) = ({first_t}, {first_k}) is outside "
            f"[0, {num_experts}) ({invalid} invalid ids in total)"
        )
    if dropped:
        raise ValueError(
            f"prepare_moe_routing_tensors: local expert {dropped_slot} receives more assignments than the "
            f"routing tables have columns (a token selected it more than once); {dropped} dropped"
        )


class RoutingTensors(NamedTuple):
    """Per-local-expert tables of the (token, k) assignments (all ROW_MAJOR)."""

    num_routed_tokens: Any  # (E_l, 1) uint32
    routed_tokens: Any  # (E_l, T) uint32: token indices by ascending token (ties by k), then 0
    routed_token_weights: Any  # (E_l, T) bfloat16, 0 past the count
    token_idx_map: Any  # (E_l, T) uint32: the output row of each assignment
    routing_status: Any  # (1, 8) uint32: invalid ids, first bad t, k, id, dropped, first dropped slot


def prepare_moe_routing_tensors(
    selected_experts: Any,
    routing_weights: Any,
    expert_mapping: Any,
    *,
    num_experts: int,
    num_local_experts: int | None = None,
    memory_config: Any = None,
    output_tensors: Any = None,
    strict: bool = True,
) -> RoutingTensors:
    """selected_experts (T, K) uint32 RM (global ids), routing_weights (T, K) bfloat16 RM,
    expert_mapping (E,) int32 RM (local slot of global expert e on this device, or -1), num_experts E
    -> RoutingTensors. Contract: docs/ops/prepare_moe_routing_tensors.md.

    Row l lists local expert l's assignments by ascending token, ties by ascending k, then 0s.
    Ids outside [0, E) are not routed; the device counts them (and assignments past an expert's
    T columns) in the (1, 8) uint32 routing_status record. strict=True reads that record after
    the op (a validation sync, outside the hot path) and raises ValueError naming the first bad
    (t, k).

    num_local_experts (E_l) sizes the tables; when None it is read from expert_mapping on the
    host (a setup-time sync: pass it in the hot path).
    output_tensors: preallocated outputs in the order of RoutingTensors (entries may be None).
    """
    require_int(_OP, "num_experts", num_experts, minimum=1)
    if num_local_experts is None:
        num_local_experts = _num_local_slots(expert_mapping)
    require_int(_OP, "num_local_experts", num_local_experts, minimum=1)
    result = RoutingTensors(*launch(
        _OP,
        {"selected_experts": selected_experts, "routing_weights": routing_weights, "expert_mapping": expert_mapping},
        _C.ops.prepare_moe_routing_tensors.Attributes(num_experts=num_experts, num_local_experts=num_local_experts),
        memory_config=memory_config,
        output_tensors=output_tensors,
    ))
    if strict:
        raise_on_routing_errors(result.routing_status, num_experts)
    return result


def _num_local_slots(expert_mapping: Any) -> int:
    """E_l of an (E,) slot map whose used slots must be exactly 0..E_l-1."""
    mapping = _to_torch(expert_mapping).reshape(-1).to(torch.int64)
    below = (mapping < -1).nonzero()
    if below.numel():
        e = int(below[0, 0])
        raise ValueError(f"expert_mapping[{e}] = {int(mapping[e])}: entries must be -1 or a local slot >= 0")
    slots = mapping[mapping >= 0]
    if not torch.equal(slots.sort().values, torch.arange(slots.numel())):
        raise ValueError(f"expert_mapping slots {slots.tolist()} must be exactly 0..{slots.numel() - 1}, each once")
    if slots.numel() == 0:
        raise ValueError("expert_mapping places no expert on this device (every entry is -1)")
    return int(slots.numel())
