"""all_to_all_dispatch_dense: token rows to the devices of the dispatch line that own their experts.

Like DeepEP's buffer API, dispatch returns what the experts need plus one `DispatchHandle`
holding everything combine needs to send the results back; combine takes only the handle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from ttnn_moe import _C
from ttnn_moe.ops._arguments import require_bool, require_int
from ttnn_moe.ops._launch import common_target_and_mesh, launch
from ttnn_moe.ops._readback import read_device_words

_OP = "all_to_all_dispatch_dense"
# Words of the dispatch_status record, as the kernel writes them.
StatusWord = _C.ops.all_to_all_dispatch_dense.StatusWord


@dataclass(frozen=True)
class DispatchHandle:
    """What dispatch hands to combine (per-device mesh tensors stay on the device).

    slot_source (capacity, 2) uint32: (source position on the axis, source token b*S+s) of
    every slot, 0 past num_slots; num_slots (1,) uint32; dispatch_status (1, 8) uint32 indexed
    by StatusWord: dropped rows, needed rows, invalid ids (+ first t, k, id), mapping errors
    (+ first expert).
    The rest is how dispatch ran, so combine runs the same way back.
    """

    slot_source: Any
    num_slots: Any
    dispatch_status: Any
    cluster_axis: int
    batch: int
    seq: int
    unit_dim: bool  # x was ttnn's (B, S, 1, H): combine returns that form too
    capacity: int
    num_links: int
    topology: Any


class DispatchDenseOutput(NamedTuple):
    """Per-device mesh tensors after dispatch (all ROW_MAJOR, DRAM), and the handle for combine."""

    tokens: Any  # (capacity, H) bf16: expert blocks at expert_offsets; rows past a block's 32-row padding unspecified
    num_routed_tokens: Any  # (E_l, 1) uint32
    expert_offsets: Any  # (E_l, 1) uint32, multiples of 32
    token_idx_map: Any  # (capacity,) uint32: slot of each row, 0 where unused
    routed_token_weights: Any  # (capacity,) bf16, 0 where unused
    handle: DispatchHandle


def all_to_all_dispatch_dense(
    x: Any,
    topk_indices: Any,
    topk_weights: Any,
    expert_mapping: Any,
    *,
    cluster_axis: int,
    capacity: int | None = None,
    num_links: int | None = None,
    topology: Any = None,
    memory_config: Any = None,
    output_tensors: Any = None,
    strict: bool = True,
) -> DispatchDenseOutput:
    """Dense dispatch along `cluster_axis` of the mesh. Contract: docs/ops/all_to_all_dispatch_dense.md.

    Per device: x (B, S, H) or ttnn's (B, S, 1, H) bfloat16, topk_indices (B, S, K) or (B, S, 1, K)
    uint32, topk_weights (same shape) bfloat16, expert_mapping (1, 1, E, num_devices) one-hot
    (uint16/uint32/int32; `ttnn_moe.expert_mapping` builds it), all ROW_MAJOR mesh tensors.
    Devices first exchange their assignment counts per expert over the fabric, derive the same
    packing plan, then send each token row once per remote device that owns one of its experts
    (local rows go over the NOC), with the list of (token, expert, weight) of their assignments
    there (counts and lists are the routing metadata).

    capacity: rows per device (multiple of 32); None = the worst case for distinct experts.
    topology: ttnn.Topology (Linear, Ring, Mesh) or None for the mesh fabric's own.
    num_links: fabric links per direction (1..4), each driven by its own worker core sending one
    share of the tokens; None = every link the mesh's fabric has (the emulator's; one on hardware,
    where it is not read from the device), at most one per core of the worker grid's first row.
    output_tensors: preallocated outputs in the order tokens, num_routed_tokens, expert_offsets,
    token_idx_map, routed_token_weights, slot_source, num_slots, dispatch_status (entries may be None).
    strict: after the op, read every device's dispatch_status (a validation sync, outside
    the hot path) and raise ValueError on invalid ids, a bad mapping or capacity overflow.
    With strict=False overflowing rows are dropped and counted in dispatch_status.
    """
    require_int(_OP, "cluster_axis", cluster_axis, minimum=0, maximum=1)
    if capacity is not None:
        require_int(_OP, "capacity", capacity, minimum=1)
    require_bool(_OP, "strict", strict)
    if num_links is None:
        target, mesh = common_target_and_mesh(_OP, {"x": x})
        # One row-sending core per link, from the first row of the worker grid.
        num_links = min(target.fabric_num_links(mesh), int(target.device_limits(mesh).grid.x))
    require_int(_OP, "num_links", num_links, minimum=1)
    outputs = launch(
        _OP,
        {"x": x, "topk_indices": topk_indices, "topk_weights": topk_weights, "expert_mapping": expert_mapping},
        _C.ops.all_to_all_dispatch_dense.Attributes(
            cluster_axis=cluster_axis, capacity=capacity or 0, num_links=num_links
        ),
        topology=topology,
        memory_config=memory_config,
        output_tensors=output_tensors,
    )
    tokens, counts, offsets, idx_map, weights, slot_source, num_slots, status = outputs[:8]  # then 2 scratch buffers
    shape = [int(d) for d in x.shape]
    unit_dim = len(shape) >= 4 and shape[-2] == 1
    batch, seq = (shape[-4], shape[-3]) if unit_dim else (shape[-3], shape[-2])
    handle = DispatchHandle(
        slot_source=slot_source,
        num_slots=num_slots,
        dispatch_status=status,
        cluster_axis=cluster_axis,
        batch=batch,
        seq=seq,
        unit_dim=unit_dim,
        capacity=int(tokens.shape[0]),
        num_links=num_links,
        topology=topology,
    )
    if strict:
        raise_on_dispatch_errors(status)
    return DispatchDenseOutput(tokens, counts, offsets, idx_map, weights, handle)


def raise_on_dispatch_errors(dispatch_status: Any) -> None:
    """ValueError naming the first device with invalid ids, a bad mapping or an overflow."""
    for device, words in enumerate(read_device_words(dispatch_status)):
        if words[StatusWord.kInvalidIds]:
            raise ValueError(
                f"{_OP}: device {device}: expert id {words[StatusWord.kFirstInvalidId]} at token "
                f"{words[StatusWord.kFirstInvalidToken]}, k {words[StatusWord.kFirstInvalidK]} is outside [0, E) "
                f"({words[StatusWord.kInvalidIds]} invalid ids on that device)"
            )
        if words[StatusWord.kMappingErrors]:
            raise ValueError(
                f"{_OP}: device {device}: expert_mapping is not one-hot with E/num_devices "
                f"experts per device (first bad expert {words[StatusWord.kFirstBadExpert]}, "
                f"{words[StatusWord.kMappingErrors]} errors)"
            )
        if words[StatusWord.kDroppedRows]:
            raise ValueError(
                f"{_OP}: device {device}: dispatch needs {words[StatusWord.kNeededRows]} rows but capacity is "
                f"smaller; {words[StatusWord.kDroppedRows]} rows did not fit"
            )
