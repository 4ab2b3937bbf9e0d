"""Routing inputs for the routing-op tests: (T, K) expert ids of a named distribution."""

from __future__ import annotations

import torch

from ttnn_moe import emu


def expert_ids(kind: str, num_tokens: int, top_k: int, num_experts: int, seed: int) -> torch.Tensor:
    """(T, K) int32 ids, K distinct experts per token drawn by weight. uniform: equal weights;
    skewed: experts 0-1 twenty times as likely; one_expert: every token picks expert 0;
    sparse: only even experts (odd ones get zero tokens)."""
    g = torch.Generator().manual_seed(seed)
    weight = torch.ones(num_experts)
    if kind == "skewed":
        weight[:2] = 20.0
    elif kind == "one_expert":
        weight[1:] = 1e-3
        weight[0] = 0.0  # picked explicitly below
    elif kind == "sparse":
        weight[1::2] = 0.0
    elif kind != "uniform":
        raise ValueError(kind)
    if kind == "one_expert":
        rest = [torch.multinomial(weight, top_k - 1, generator=g) for _ in range(num_tokens)] if top_k > 1 else []
        first = torch.zeros(num_tokens, 1, dtype=torch.int64)
        return (torch.cat([first, torch.stack(rest)], dim=1) if rest else first).int()
    return torch.stack([torch.multinomial(weight, top_k, generator=g) for _ in range(num_tokens)]).int()


def single_device_mapping(num_experts: int) -> torch.Tensor:
    """(1, 1, E, 1) int32 expert_mapping of a 1x1 mesh: the device holds every expert."""
    return torch.ones(1, 1, num_experts, 1, dtype=torch.int32)


def placement_mapping(owner: list[int], num_devices: int) -> torch.Tensor:
    """(1, 1, E, D) int32 one-hot expert_mapping with expert e on device owner[e]."""
    mapping = torch.zeros(1, 1, len(owner), num_devices, dtype=torch.int32)
    mapping[0, 0, torch.arange(len(owner)), torch.tensor(owner)] = 1
    return mapping


def shuffled_placement(num_experts: int, num_devices: int, seed: int) -> list[int]:
    """Owner of each expert: E / D experts per device, in a random order."""
    perm = torch.randperm(num_experts, generator=torch.Generator().manual_seed(seed))
    return (perm % num_devices).tolist()


def rm(device, t: torch.Tensor, dtype):
    return emu.from_torch(t, dtype=dtype, layout=emu.ROW_MAJOR_LAYOUT, device=device)
