"""What a dispatch hands all_to_all_combine_dense, built from slot lists: for tests and benchmarks that
run the combine alone on chosen slots."""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from ttnn_moe.emu.tensor import from_shards

from ttnn_moe import DispatchHandle, emu


class CombineInputs(NamedTuple):
    handle: DispatchHandle
    reduced_mesh: object  # the reduced rows on the mesh, one shard per device
    reduced: list[torch.Tensor]  # per device (capacity, hidden) bfloat16
    sources: list[torch.Tensor]  # per device (capacity, 2) int32, the slots then zero rows
    counts: list[torch.Tensor]  # per device (1,) int32, its number of slots


def combine_inputs(
    mesh, slots: list[torch.Tensor], tokens: int, *, cluster_axis: int, links: int, hidden: int, seed: int
) -> CombineInputs:
    """Per device, its slots ((source position, token) int32 pairs) padded with zero rows to the
    smallest 32-row capacity that holds every device's, and random bfloat16 reduced rows (seeded)."""
    capacity = max(32, math.ceil(max(s.shape[0] for s in slots) / 32) * 32)
    sources = [torch.cat([s, torch.zeros(capacity - s.shape[0], 2, dtype=torch.int32)]) for s in slots]
    counts = [torch.tensor([s.shape[0]], dtype=torch.int32) for s in slots]
    g = torch.Generator().manual_seed(seed)
    reduced = [torch.randn(capacity, hidden, generator=g).to(torch.bfloat16) for _ in slots]
    handle = DispatchHandle(
        slot_source=from_shards(sources, emu.uint32, emu.ROW_MAJOR_LAYOUT, mesh),
        num_slots=from_shards(counts, emu.uint32, emu.ROW_MAJOR_LAYOUT, mesh),
        dispatch_status=None,
        cluster_axis=cluster_axis,
        batch=1,
        seq=tokens,
        unit_dim=False,
        capacity=capacity,
        num_links=links,
        topology=None,
    )
    reduced_mesh = from_shards(reduced, emu.bfloat16, emu.ROW_MAJOR_LAYOUT, mesh)
    return CombineInputs(handle, reduced_mesh, reduced, sources, counts)


def check_exact(got32, got16, want) -> None:
    """The float32 output bit for bit the golden, the bfloat16 one its rounding, per device."""
    for d, expected in enumerate(want):
        assert torch.equal(got32[d], expected), f"device {d}: float32 output differs from the golden"
        assert torch.equal(got16[d], expected.to(torch.bfloat16)), f"device {d}: bfloat16 output"
