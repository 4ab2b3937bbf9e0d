"""The single-device V2 MoE pipeline of seed 004 on the emulator vs a torch fp32 MoE.

prepare -> scatter -> to_layout(TILE) -> moe_bmm(w1), moe_bmm(w3) -> silu * mul -> moe_bmm(w2)
-> to_layout(ROW_MAJOR) -> local_reduce. silu, mul and to_layout are ttnn_moe.emu host built-ins
(torch on the host, not kernels); the four MoE ops run as kernels.
"""

import torch
from routing_cases import expert_ids, identity_mapping, rm

import ttnn_moe
from ttnn_moe import emu
from ttnn_moe.testing import assert_pcc


def _torch_moe(x, ids, weights, w1, w3, w2):
    """out[t] = sum_k weights[t, k] * expert_{ids[t, k]}(x[t]), SwiGLU experts, fp32."""
    x32 = x.float()
    out = torch.zeros_like(x32)
    for t in range(x.shape[0]):
        for k in range(ids.shape[1]):
            e = int(ids[t, k])
            hidden = torch.nn.functional.silu(x32[t] @ w1[e].float()) * (x32[t] @ w3[e].float())
            out[t] += weights[t, k].float() * (hidden @ w2[e].float())
    return out


def test_v2_pipeline_matches_torch_moe():
    num_tokens, hidden, inter, num_experts, top_k = 64, 256, 128, 8, 2
    g = torch.Generator().manual_seed(4)
    x = torch.randn(num_tokens, hidden, generator=g).bfloat16()
    ids = expert_ids("skewed", num_tokens, top_k, num_experts, seed=4)
    weights = torch.rand(num_tokens, top_k, generator=g).bfloat16()
    w1 = (torch.randn(num_experts, hidden, inter, generator=g) / hidden**0.5).bfloat16()
    w3 = (torch.randn(num_experts, hidden, inter, generator=g) / hidden**0.5).bfloat16()
    w2 = (torch.randn(num_experts, inter, hidden, generator=g) / inter**0.5).bfloat16()

    device = emu.open_device(grid=(8, 8))
    try:
        def tiled(t):
            return emu.from_torch(t, dtype=emu.bfloat16, layout=emu.TILE_LAYOUT, device=device)

        counts, tokens, token_weights, idx_map = ttnn_moe.prepare_moe_routing_tensors(
            rm(device, ids, emu.uint32), rm(device, weights, emu.bfloat16),
            rm(device, identity_mapping(num_experts), emu.int32), num_experts,
        )
        scattered = ttnn_moe.scatter_moe_input(rm(device, x, emu.bfloat16), counts, tokens)
        scattered = emu.to_layout(scattered, emu.TILE_LAYOUT)
        gate = ttnn_moe.moe_bmm(scattered, tiled(w1), counts)
        up = ttnn_moe.moe_bmm(scattered, tiled(w3), counts)
        down = ttnn_moe.moe_bmm(emu.mul(emu.silu(gate), up), tiled(w2), counts)
        out = ttnn_moe.local_reduce_moe_output(
            emu.to_layout(down, emu.ROW_MAJOR_LAYOUT), idx_map, token_weights, counts, num_tokens
        )
        got = emu.to_torch(out).float()
    finally:
        emu.close_device(device)
    assert_pcc(_torch_moe(x, ids, weights, w1, w3, w2), got, pcc=0.9999, name="moe output")
