"""Golden of all_to_all_combine_dense: slot rows go back to their source device and token."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ttnn_moe.golden._validate import (
    mesh_dims,
    require_axis,
    require_device_list,
    require_float,
    require_int,
    require_positive_int,
    require_shape,
    squeeze_to_rank,
)
from ttnn_moe.golden.mesh import axis_groups


def _slots_of(device, reduced, slot_source, num_slots, group_size, num_tokens):
    """Checks one holder's inputs; -> (n, 2) int64 (position, token) of its n used slots."""
    capacity = reduced.shape[0]
    source = squeeze_to_rank(slot_source, 2, f"slot_source[{device}]")
    require_int(source, f"slot_source[{device}]")
    require_shape(source, (capacity, 2), f"slot_source[{device}] (capacity, 2)")
    count = squeeze_to_rank(num_slots, 1, f"num_slots[{device}]")
    require_int(count, f"num_slots[{device}]")
    require_shape(count, (1,), f"num_slots[{device}]")
    n = int(count[0])
    if not 0 <= n <= capacity:
        raise ValueError(f"num_slots[{device}] = {n} is outside [0, {capacity}]")
    used = source[:n].to(torch.int64)
    for col, limit, what in ((0, group_size, "source position"), (1, num_tokens, "source token")):
        bad = ((used[:, col] < 0) | (used[:, col] >= limit)).nonzero()
        if bad.numel():
            s = int(bad[0, 0])
            raise ValueError(f"slot_source[{device}][{s}] has {what} {int(used[s, col])}, outside [0, {limit})")
    keys = used[:, 0] * num_tokens + used[:, 1]
    if keys.unique().numel() != n:
        raise ValueError(f"slot_source[{device}] lists a (source position, token) pair in more than one slot")
    return used


def all_to_all_combine_dense(
    reduced: list[torch.Tensor],
    slot_source: list[torch.Tensor],
    num_slots: list[torch.Tensor],
    mesh_shape: Sequence[int],
    cluster_axis: int,
    batch: int,
    seq: int,
    *,
    return_partials: bool = False,
) -> list[torch.Tensor]:
    """Per device: reduced (capacity, H), slot_source (capacity, 2), num_slots (1,).

    Returns per device (B, S, H) fp32: for each token, the partials its group's devices sent,
    summed in ascending source position. With return_partials: (D, B, S, H) fp32 unsummed,
    indexed by the sending device's position, zeros where it sent nothing.
    """
    mesh_rows, mesh_cols = mesh_dims(mesh_shape)
    num_devices = mesh_rows * mesh_cols
    group_size = mesh_shape[require_axis(cluster_axis)]
    require_positive_int(batch, "batch")
    require_positive_int(seq, "seq")
    num_tokens = batch * seq
    reduced = require_device_list(reduced, num_devices, "reduced")
    reduced = [squeeze_to_rank(t, 2, f"reduced[{d}] (capacity, H)") for d, t in enumerate(reduced)]
    slot_source = require_device_list(slot_source, num_devices, "slot_source")
    num_slots = require_device_list(num_slots, num_devices, "num_slots")
    for d, t in enumerate(reduced):
        require_float(t, f"reduced[{d}]")
        require_shape(t, reduced[0].shape, f"reduced[{d}] (like reduced[0])")
    hidden = reduced[0].shape[1]

    results: list[torch.Tensor | None] = [None] * num_devices
    for group in axis_groups(mesh_shape, cluster_axis):
        # partials[dest position, sender position, token]
        partials = torch.zeros(group_size, group_size, num_tokens, hidden, dtype=torch.float32)
        for sender_pos, holder in enumerate(group):
            used = _slots_of(holder, reduced[holder], slot_source[holder], num_slots[holder], group_size, num_tokens)
            partials[used[:, 0], sender_pos, used[:, 1]] = reduced[holder][: used.shape[0]].float()
        for dest_pos, device in enumerate(group):
            if return_partials:
                results[device] = partials[dest_pos].reshape(group_size, batch, seq, hidden)
                continue
            total = partials[dest_pos, 0].clone()
            for sender_pos in range(1, group_size):
                total += partials[dest_pos, sender_pos]
            results[device] = total.reshape(batch, seq, hidden)
    return results
