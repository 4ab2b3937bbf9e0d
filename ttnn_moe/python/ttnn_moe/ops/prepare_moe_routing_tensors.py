"""prepare_moe_routing_tensors: per-local-expert tables of the (token, k) assignments."""

from __future__ import annotations

from typing import Any

import torch

from ttnn_moe.ops._launch import launch

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


def prepare_moe_routing_tensors(
    selected_experts: Any,
    routing_weights: Any,
    expert_mapping: Any,
    num_experts: int,
    *,
    num_local_experts: int | None = None,
    strict: bool = True,
    return_routing_errors: bool = False,
    memory_config: Any = None,
) -> tuple[Any, ...]:
    """selected_experts (T, K) uint32 RM (global ids), routing_weights (T, K) bfloat16 RM,
    expert_mapping (E,) int32 RM (local slot of global expert e on this device, or -1), num_experts E
    -> num_routed_tokens (E_l, 1) uint32, routed_tokens (E_l, T) uint32,
       routed_token_weights (E_l, T) bfloat16, token_idx_map (E_l, T) uint32 (all ROW_MAJOR).

    Row l lists local expert l's assignments by ascending token, ties by ascending k, then 0s.
    Ids outside [0, E) are not routed; the device counts them (and assignments past an expert's
    T columns) in a (1, 8) uint32 routing_errors record = [invalid ids, first bad t, k, id,
    dropped, first dropped slot, 0, 0]. strict=True reads that record after the op (a
    validation sync, outside the hot path) and raises ValueError naming the first bad (t, k).
    return_routing_errors=True appends the record to the outputs.

    num_local_experts (E_l) sizes the tables; when None it is read from expert_mapping on the
    host (a setup-time sync: pass it in the hot path).
    """
    if not isinstance(num_experts, int) or isinstance(num_experts, bool) or num_experts <= 0:
        raise ValueError(f"prepare_moe_routing_tensors: num_experts must be a positive int, got {num_experts!r}")
    if num_local_experts is None:
        num_local_experts = _num_local_slots(expert_mapping)
    counts, tokens, token_weights, idx_map, errors = launch(
        "prepare_moe_routing_tensors",
        {"selected_experts": selected_experts, "routing_weights": routing_weights, "expert_mapping": expert_mapping},
        attrs={"num_experts": num_experts, "num_local_experts": num_local_experts},
        memory_config=memory_config,
    )
    if strict:
        raise_on_routing_errors(errors, num_experts)
    outputs = (counts, tokens, token_weights, idx_map)
    return outputs + (errors,) if return_routing_errors else outputs


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
