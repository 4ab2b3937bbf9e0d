"""A small op for profiler tests: moe_bmm over two experts on a few tiles, whose work (and so
modeled time) follows the per-expert token counts."""

from __future__ import annotations

import torch
import ttnn_moe.emu as ttnn

import ttnn_moe

E_L, T, KD, N = 2, 64, 96, 128  # two experts, 64 tokens, small dims (tiles: 3 inner, 4 outer)


def run_moe_bmm(device, counts):
    gen = torch.Generator().manual_seed(7)
    x = ttnn.from_torch(
        torch.randn(E_L, T, KD, generator=gen), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device
    )
    w = ttnn.from_torch(
        torch.randn(E_L, KD, N, generator=gen), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device
    )
    c = ttnn.from_torch(
        torch.tensor(counts, dtype=torch.int64).reshape(E_L, 1),
        dtype=ttnn.uint32,
        layout=ttnn.ROW_MAJOR_LAYOUT,
        device=device,
    )
    return ttnn_moe.moe_bmm(x, w, c)
