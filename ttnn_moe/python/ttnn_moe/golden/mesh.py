"""Mesh geometry and expert placement shared by the mesh goldens.

Devices are numbered row-major: index = row * cols + col. The dispatch group of a
device along `cluster_axis` is the line of devices sharing its other coordinate;
a device's position in the group is its coordinate on the axis.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ttnn_moe.golden._validate import mesh_dims, require_axis, require_int, squeeze_to_rank


def axis_groups(mesh_shape: Sequence[int], cluster_axis: int) -> list[list[int]]:
    """Every dispatch group as the device indices ordered by position on the axis."""
    rows, cols = mesh_dims(mesh_shape)
    if require_axis(cluster_axis) == 0:
        return [[r * cols + c for r in range(rows)] for c in range(cols)]
    return [[r * cols + c for c in range(cols)] for r in range(rows)]


def group_of(device: int, mesh_shape: Sequence[int], cluster_axis: int) -> list[int]:
    """Device indices of `device`'s group, ordered by position on the axis."""
    rows, cols = mesh_dims(mesh_shape)
    if not 0 <= device < rows * cols:
        raise ValueError(f"device index {device} is outside the {rows}x{cols} mesh")
    row, col = divmod(device, cols)
    return axis_groups(mesh_shape, cluster_axis)[col if cluster_axis == 0 else row]


def expert_owners(expert_mapping: torch.Tensor) -> torch.Tensor:
    """(1, 1, E, N) one-hot -> (E,) int64 owning device of each expert; checks one-hotness."""
    mapping = squeeze_to_rank(expert_mapping, 2, "expert_mapping (1, 1, E, num_devices)")
    require_int(mapping, "expert_mapping")
    not_binary = ((mapping != 0) & (mapping != 1)).nonzero()
    if not_binary.numel():
        e, d = (int(v) for v in not_binary[0])
        raise ValueError(f"expert_mapping[{e}, {d}] = {int(mapping[e, d])}: entries must be 0 or 1")
    owners_per_expert = mapping.to(torch.int64).sum(dim=1)
    bad = (owners_per_expert != 1).nonzero()
    if bad.numel():
        e = int(bad[0, 0])
        raise ValueError(
            f"expert {e} is placed on {int(owners_per_expert[e])} devices; expert_mapping must be one-hot per expert"
        )
    return mapping.to(torch.int64).argmax(dim=1)


def local_expert_slots(expert_mapping: torch.Tensor, device_index: int) -> torch.Tensor:
    """(E,) int32: slot of expert e on `device_index` (its rank among that device's experts, by
    ascending e), -1 for experts placed elsewhere. The format prepare_moe_routing_tensors takes."""
    owners = expert_owners(expert_mapping)
    num_devices = squeeze_to_rank(expert_mapping, 2, "expert_mapping").shape[1]
    if isinstance(device_index, bool) or not isinstance(device_index, int) or not 0 <= device_index < num_devices:
        raise ValueError(f"device_index {device_index!r} is outside [0, {num_devices})")
    mine = owners == device_index
    slots = torch.full(owners.shape, -1, dtype=torch.int32)
    slots[mine] = torch.arange(int(mine.sum()), dtype=torch.int32)
    return slots
