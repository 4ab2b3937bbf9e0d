"""prepare_moe_routing_tensors: per-local-expert tables of the (token, k) assignments."""

from __future__ import annotations

from typing import Any, NamedTuple

from ttnn_moe import _C
from ttnn_moe.ops._arguments import require_bool
from ttnn_moe.ops._launch import launch
from ttnn_moe.ops._readback import status_records

_OP = "prepare_moe_routing_tensors"
_WORD = _C.ops.prepare_moe_routing_tensors.StatusWord


class RoutingTensors(NamedTuple):
    """Per-local-expert tables of the (token, k) assignments (all ROW_MAJOR, per device)."""

    num_routed_tokens: Any  # (E_l, 1) uint32
    routed_tokens: Any  # (E_l, T) uint32: token indices by ascending token (ties by k), then 0
    routed_token_weights: Any  # (E_l, T) bfloat16, 0 past the count
    token_idx_map: Any  # (E_l, T) uint32: the output row of each assignment
    routing_status: Any  # (1, 8) uint32, words: _C.ops.prepare_moe_routing_tensors.StatusWord


def prepare_moe_routing_tensors(
    selected_experts: Any,
    routing_weights: Any,
    expert_mapping: Any,
    *,
    memory_config: Any = None,
    output_tensors: Any = None,
    strict: bool = True,
) -> RoutingTensors:
    """selected_experts (T, K) uint32 RM (global ids), routing_weights (T, K) bfloat16 RM,
    expert_mapping (1, 1, E, D) one-hot RM (`ttnn_moe.expert_mapping` builds it; D = the mesh's
    devices in row-major order) -> RoutingTensors of each device's E_l = E / D local experts
    (its column of expert_mapping, ascending id). Contract: docs/ops/prepare_moe_routing_tensors.md.

    Row l lists local expert l's assignments by ascending token, ties by ascending k, then 0s.
    Ids outside [0, E) are not routed; the device counts them, assignments past an expert's T
    columns and mapping rows that are not one-hot in the (1, 8) uint32 routing_status record.
    strict=True reads every device's record after the op (a validation sync, outside the hot
    path) and raises ValueError naming the first bad (t, k), expert or mapping row.
    output_tensors: preallocated outputs in the order of RoutingTensors (entries may be None).
    """
    require_bool(_OP, "strict", strict)
    result = RoutingTensors(
        *launch(
            _OP,
            {
                "selected_experts": selected_experts,
                "routing_weights": routing_weights,
                "expert_mapping": expert_mapping,
            },
            _C.ops.prepare_moe_routing_tensors.Attributes(),
            memory_config=memory_config,
            output_tensors=output_tensors,
        )
    )
    if strict:
        raise_on_routing_errors(result.routing_status, num_experts=int(expert_mapping.shape[-2]))
    return result


def raise_on_routing_errors(routing_status: Any, *, num_experts: int) -> None:
    """ValueError naming the first device with an invalid id, an overflowing expert or a bad mapping."""
    for where, words in status_records(_OP, routing_status):
        if words[_WORD.num_invalid_ids]:
            raise ValueError(
                f"{where}expert id {words[_WORD.first_invalid_id]} at (t, k) = ({words[_WORD.first_invalid_t]}, "
                f"{words[_WORD.first_invalid_k]}) is outside [0, {num_experts}) "
                f"({words[_WORD.num_invalid_ids]} invalid ids in total)"
            )
        if words[_WORD.mapping_errors]:
            raise ValueError(
                f"{where}expert_mapping is not one-hot with E/num_devices experts per device "
                f"(first row that is not one-hot: {_row_name(words[_WORD.first_bad_expert])}, "
                f"{words[_WORD.mapping_errors]} errors)"
            )
        if words[_WORD.num_dropped]:
            raise ValueError(
                f"{where}local expert {words[_WORD.first_dropped_slot]} receives more assignments than the "
                f"routing tables have columns (a token selected it more than once); "
                f"{words[_WORD.num_dropped]} dropped"
            )


def _row_name(expert: int) -> str:
    return (
        "none, but this device's expert count is wrong"
        if expert == _C.ops.prepare_moe_routing_tensors.NONE
        else f"expert {expert}"
    )
