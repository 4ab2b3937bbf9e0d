"""Mesh geometry and expert placement helpers against coordinate loops."""

import pytest
import torch
from ttnn_moe.golden import axis_groups, expert_owners, group_of, local_expert_slots

from ttnn_moe import expert_mapping

MESHES = [(1, 8), (2, 4), (4, 8), (8, 8), (16, 8)]


@pytest.mark.parametrize("mesh_shape", MESHES, ids=lambda m: f"{m[0]}x{m[1]}")
@pytest.mark.parametrize("cluster_axis", [0, 1])
def test_groups_share_the_other_coordinate(mesh_shape, cluster_axis):
    rows, cols = mesh_shape
    groups = axis_groups(mesh_shape, cluster_axis)
    assert len(groups) == (cols if cluster_axis == 0 else rows)
    assert sorted(d for g in groups for d in g) == list(range(rows * cols))
    for device in range(rows * cols):
        row, col = device // cols, device % cols
        group = group_of(device, mesh_shape, cluster_axis)
        assert group in groups
        position = row if cluster_axis == 0 else col
        assert group[position] == device
        for pos, member in enumerate(group):
            member_row, member_col = member // cols, member % cols
            # same other coordinate; the position is the coordinate on the axis
            if cluster_axis == 0:
                assert (member_col, member_row) == (col, pos)
            else:
                assert (member_row, member_col) == (row, pos)


@pytest.mark.parametrize("num_experts, num_devices", [(256, 8), (256, 32), (256, 64), (256, 128), (8, 8), (12, 4)])
def test_expert_mapping_places_contiguous_ranges(num_experts, num_devices):
    mapping = expert_mapping(num_experts, num_devices)
    assert mapping.dtype == torch.int32 and mapping.shape == (1, 1, num_experts, num_devices)
    per_device = num_experts // num_devices
    for e in range(num_experts):
        row = mapping[0, 0, e].tolist()
        assert row.count(1) == 1 and row.count(0) == num_devices - 1
        assert row.index(1) * per_device <= e < (row.index(1) + 1) * per_device
    assert expert_owners(mapping).tolist() == [row.index(1) for row in mapping[0, 0].tolist()]


def test_expert_mapping_rejects_indivisible_counts():
    with pytest.raises(ValueError, match="expert_mapping: num_experts 10 is not divisible by num_devices 4"):
        expert_mapping(10, 4)
    with pytest.raises(ValueError, match="expert_mapping: num_experts 4 is not divisible by num_devices 8"):
        expert_mapping(4, 8)
    with pytest.raises(ValueError, match=r"expert_mapping: num_devices must be in \[1, 4294967295\], got 0"):
        expert_mapping(8, 0)
    with pytest.raises(TypeError, match="expert_mapping: num_experts must be an int, got 8.0"):
        expert_mapping(8.0, 2)


def test_local_slots_rank_experts_of_any_one_hot_placement():
    num_experts, num_devices = 24, 6
    owner = (torch.randperm(num_experts, generator=torch.Generator().manual_seed(0)) % num_devices).tolist()
    mapping = torch.zeros(1, 1, num_experts, num_devices, dtype=torch.int32)
    for e, d in enumerate(owner):
        mapping[0, 0, e, d] = 1
    for device in range(num_devices):
        mine = [e for e in range(num_experts) if owner[e] == device]
        expected = [mine.index(e) if e in mine else -1 for e in range(num_experts)]
        slots = local_expert_slots(mapping, device)
        assert slots.dtype == torch.int32 and slots.tolist() == expected


def test_bad_mappings_and_geometry_raise():
    mapping = expert_mapping(8, 4)
    with pytest.raises(ValueError, match=r"device_index 4 is outside \[0, 4\)"):
        local_expert_slots(mapping, 4)
    twice = mapping.clone()
    twice[0, 0, 5, 0] = 1
    with pytest.raises(ValueError, match="expert 5 is placed on 2 devices"):
        expert_owners(twice)
    nowhere = mapping.clone()
    nowhere[0, 0, 3] = 0
    with pytest.raises(ValueError, match="expert 3 is placed on 0 devices"):
        expert_owners(nowhere)
    not_binary = mapping.clone()
    not_binary[0, 0, 2, 1] = 7
    with pytest.raises(ValueError, match=r"expert_mapping\[2, 1\] = 7"):
        expert_owners(not_binary)
    with pytest.raises(TypeError, match="integer dtype"):
        expert_owners(mapping.float())
    with pytest.raises(ValueError, match="cluster_axis must be 0 or 1, got 2"):
        axis_groups((2, 4), 2)
    with pytest.raises(ValueError, match=r"mesh_shape must be \(rows, cols\)"):
        axis_groups((2, 4, 1), 0)
    with pytest.raises(ValueError, match="device index 8 is outside the 2x4 mesh"):
        group_of(8, (2, 4), 0)
