"""Torch golden of ttnn.experimental.selective_reduce_combine's documented semantics, and the routings the tests use.

A routing: in each dispatch group (the devices along cluster_axis), every group token chose up to K experts
held by the group's devices, each in its own slot k. Expert x lives on device x // E (row-major device index),
as local expert x % E. The combine returns, on the token's own device, row [k, token % T] = the output of the
expert the token chose in slot k; rows of slots whose expert is off the group stay zero.
"""

from __future__ import annotations

import torch


def group_devices(rows: int, cols: int, axis: int) -> list[list[int]]:
    """The dispatch groups: device indices along `axis`, in group position order."""
    if axis == 1:
        return [[r * cols + c for c in range(cols)] for r in range(rows)]
    return [[r * cols + c for r in range(rows)] for c in range(cols)]


def random_routing(rows, cols, axis, tokens, experts, k, generator) -> list[list[list[tuple[int, int]]]]:
    """Every group token draws K distinct experts of the whole mesh (DeepSeek's top-k over all experts); the
    ones held in its group are the ones this combine returns. Returns chosen[d][e] = [(group token, k), ...] in
    token order."""
    devices = rows * cols
    local = experts // devices
    chosen = [[[] for _ in range(local)] for _ in range(devices)]
    for members in group_devices(rows, cols, axis):
        for t in range(tokens):
            picks = torch.randperm(experts, generator=generator)[:k].tolist()
            for slot, x in enumerate(picks):
                owner = x // local
                if owner in members:
                    chosen[owner][x % local].append((t, slot))
    for per_device in chosen:
        for pairs in per_device:
            pairs.sort()
    return chosen


def single_expert_routing(rows, cols, axis, tokens, experts, k, expert, slot) -> list[list[list[tuple[int, int]]]]:
    """Every token of every group chose local expert `expert` of the group's first device, in slot `slot`."""
    local = experts // (rows * cols)
    chosen = [[[] for _ in range(local)] for _ in range(rows * cols)]
    for members in group_devices(rows, cols, axis):
        chosen[members[0]][expert] = [(t, slot) for t in range(tokens)]
    return chosen


def combine_golden(contributions: torch.Tensor, chosen, rows, cols, axis, k) -> torch.Tensor:
    """`[devices, K, T, H]`: contributions `[devices, E, G, H]` ([d, e, t]: device d's local expert e for group
    token t) placed at each token's device, row (slot, token % T)."""
    devices, _, tokens, hidden = contributions.shape
    per_device = tokens // (cols if axis == 1 else rows)
    out = torch.zeros(devices, k, per_device, hidden, dtype=torch.bfloat16)
    for members in group_devices(rows, cols, axis):
        for owner in members:
            for e, pairs in enumerate(chosen[owner]):
                for t, slot in pairs:
                    out[members[t // per_device], slot, t % per_device] = contributions[owner, e, t]
    return out
