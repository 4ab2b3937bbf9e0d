"""all_to_all_dispatch_dense: token rows to the devices of the dispatch line that own their experts."""

from __future__ import annotations

from typing import Any, NamedTuple

from ttnn_moe.ops._mesh_launch import launch_mesh
from ttnn_moe.ops._readback import read_device_words

# Words of the (1, 8) dispatch_status record (dispatch_dense.cpp).
_DROPPED, _NEEDED, _INVALID, _BAD_T, _BAD_K, _BAD_ID, _MAPPING_ERRORS, _BAD_EXPERT = range(8)


class DispatchDenseOutput(NamedTuple):
    """Per-device mesh tensors after dispatch (all ROW_MAJOR, DRAM)."""

    tokens: Any  # (capacity, H) bf16: expert blocks at expert_offsets; rows past a block's 32-row padding unspecified
    num_routed_tokens: Any  # (E_l, 1) uint32
    expert_offsets: Any  # (E_l, 1) uint32, multiples of 32
    token_idx_map: Any  # (capacity,) uint32: slot of each row, 0 where unused
    routed_token_weights: Any  # (capacity,) bf16, 0 where unused
    slot_source: Any  # (capacity, 2) uint32: (source position on the axis, source token b*S+s), 0 past num_slots
    num_slots: Any  # (1,) uint32
    dispatch_status: Any  # (1, 8) uint32: dropped rows, needed rows, invalid ids (+ first t, k, id), mapping errors


def all_to_all_dispatch_dense(
    x: Any,
    topk_indices: Any,
    topk_weights: Any,
    expert_mapping: Any,
    *,
    cluster_axis: int,
    capacity: int | None = None,
    num_links: int = 1,
    topology: Any = None,
    memory_config: Any = None,
    strict: bool = True,
) -> DispatchDenseOutput:
    """Dense dispatch along `cluster_axis` of the mesh (SPEC section 4).

    Per device: x (B, S, H) bfloat16, topk_indices (B, S, K) uint32, topk_weights (B, S, K)
    bfloat16, expert_mapping (1, 1, E, num_devices) one-hot (uint16/uint32/int32), all
    ROW_MAJOR mesh tensors. Devices first exchange their assignment counts per expert over
    the fabric, derive the same packing plan, then send each token row once per remote
    device that owns one of its experts (local rows go over the NOC), with the list of
    (token, expert, weight) of their assignments there (counts and lists are the routing
    metadata).

    capacity: rows per device (multiple of 32); None = the worst case for distinct experts.
    topology: ttnn.Topology (Linear, Ring, Mesh) or None for the mesh fabric's own.
    num_links: fabric links per direction (1..4); token t's rows travel on link t % num_links.
    strict: after the op, read every device's dispatch_status (a validation sync, outside
    the hot path) and raise ValueError on invalid ids, a bad mapping or capacity overflow.
    With strict=False overflowing rows are dropped and counted in dispatch_status.
    """
    _require_int("cluster_axis", cluster_axis, minimum=0)
    _require_int("num_links", num_links, minimum=1)
    if capacity is not None:
        _require_int("capacity", capacity, minimum=1)
    outputs = launch_mesh(
        "all_to_all_dispatch_dense",
        {"x": x, "topk_indices": topk_indices, "topk_weights": topk_weights, "expert_mapping": expert_mapping},
        attrs={"cluster_axis": cluster_axis, "capacity": capacity or 0, "num_links": num_links},
        topology=topology,
        memory_config=memory_config,
    )
    result = DispatchDenseOutput(*outputs[:8])  # outputs[8:] are the routing-metadata scratch buffers
    if strict:
        raise_on_dispatch_errors(result.dispatch_status)
    return result


def raise_on_dispatch_errors(dispatch_status: Any) -> None:
    """ValueError naming the first device with invalid ids, a bad mapping or an overflow."""
    for device, words in enumerate(read_device_words(dispatch_status)):
        if words[_INVALID]:
            raise ValueError(
                f"all_to_all_dispatch_dense: device {device}: expert id {words[_BAD_ID]} at token {words[_BAD_T]}, "
                f"k {words[_BAD_K]} is outside [0, E) ({words[_INVALID]} invalid ids on that device)"
            )
        if words[_MAPPING_ERRORS]:
            raise ValueError(
                f"all_to_all_dispatch_dense: device {device}: expert_mapping is not one-hot with E/num_devices "
                f"experts per device (first bad expert {words[_BAD_EXPERT]}, {words[_MAPPING_ERRORS]} errors)"
            )
        if words[_DROPPED]:
            raise ValueError(
                f"all_to_all_dispatch_dense: device {device}: dispatch needs {words[_NEEDED]} rows but capacity is "
                f"smaller; {words[_DROPPED]} rows did not fit"
            )


def _require_int(name: str, value: Any, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"all_to_all_dispatch_dense: {name} must be an int >= {minimum}, got {value!r}")
