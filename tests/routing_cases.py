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


def identity_mapping(num_experts: int) -> torch.Tensor:
    return torch.arange(num_experts, dtype=torch.int32)


def rm(device, t: torch.Tensor, dtype):
    return emu.from_torch(t, dtype=dtype, layout=emu.ROW_MAJOR_LAYOUT, device=device)
