"""The MoE pipeline without dispatch (each device routes its own tokens) on the emulator vs torch.

prepare -> scatter -> to_layout(TILE) -> moe_bmm(w1), moe_bmm(w3) -> silu * mul -> moe_bmm(w2)
-> to_layout(ROW_MAJOR) -> local_reduce. silu, mul and to_layout are ttnn_moe.emu host built-ins
(torch on the host, not kernels); the four MoE ops run as kernels.
"""

import torch
from routing_cases import expert_ids, rm, single_device_mapping
from ttnn_moe.emu.tensor import device_shards, from_shards
from ttnn_moe.testing import assert_pcc

import ttnn_moe
from ttnn_moe import emu, golden


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


def test_single_device_pipeline_matches_torch_moe():
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

        counts, tokens, token_weights, idx_map, _ = ttnn_moe.prepare_moe_routing_tensors(
            rm(device, ids, emu.uint32),
            rm(device, weights, emu.bfloat16),
            rm(device, single_device_mapping(num_experts), emu.int32),
        )
        scattered = ttnn_moe.scatter_moe_input(rm(device, x, emu.bfloat16), counts, tokens).output
        scattered = emu.to_layout(scattered, emu.TILE_LAYOUT)
        gate = ttnn_moe.moe_bmm(scattered, tiled(w1), counts)
        up = ttnn_moe.moe_bmm(scattered, tiled(w3), counts)
        down = ttnn_moe.moe_bmm(emu.mul(emu.silu(gate), up), tiled(w2), counts)
        out = ttnn_moe.local_reduce_moe_output(
            emu.to_layout(down, emu.ROW_MAJOR_LAYOUT), idx_map, token_weights, counts, num_out_rows=num_tokens
        ).output
        got = emu.to_torch(out).float()
    finally:
        emu.close_device(device)
    assert_pcc(_torch_moe(x, ids, weights, w1, w3, w2), got, pcc=0.9999, name="moe output")


# --- The mini DeepSeek-V3 config: gate-routed tokens, experts placed over a 1x8 mesh (32 of 256 each). ---

NUM_DEVICES = 8


def _mini_case(num_tokens=48, seed=7):
    from models.deepseek_v3.config import DeepseekV3MoEConfig
    from models.deepseek_v3.reference import local_expert_weights, moe_gate
    from models.deepseek_v3.weights import random_moe_state_dict

    config = DeepseekV3MoEConfig.mini()
    state = random_moe_state_dict(config, seed=seed)
    x = torch.randn(num_tokens, config.hidden_size, generator=torch.Generator().manual_seed(seed)).bfloat16()
    ids, weights = moe_gate(x.float(), state["gate.weight"], state["gate.e_score_correction_bias"], config)
    mapping = ttnn_moe.expert_mapping(config.n_routed_experts, NUM_DEVICES)  # (1, 1, E, 8)
    # Per device: (E_l, H, I), (E_l, H, I), (E_l, I, H) of its experts in ascending id.
    owner = mapping[0, 0].argmax(dim=1)  # (E,) device of expert e
    experts = [
        tuple(w.bfloat16() for w in local_expert_weights(state, (owner == d).nonzero()[:, 0].tolist()))
        for d in range(NUM_DEVICES)
    ]
    return config, x, ids.int(), weights.bfloat16(), mapping, experts


def _golden_padded(x, ids, weights, mapping, device_index, w1, w3, w2):
    counts, tokens, token_weights, idx_map = golden.prepare_moe_routing_tensors(
        ids, weights, mapping, device_index=device_index
    )
    scattered = golden.scatter_moe_input(x, counts, tokens)  # (E_l, T, H)
    hidden = torch.nn.functional.silu(golden.moe_bmm(scattered, w1, counts)) * golden.moe_bmm(scattered, w3, counts)
    down = golden.moe_bmm(hidden, w2, counts)  # (E_l, T, H)
    return golden.local_reduce_moe_output(down, idx_map, token_weights, counts, x.shape[0])


def test_single_device_pipeline_mini_config_matches_golden():
    """Every device of a 1x8 mesh runs the padded pipeline on the same tokens; each routes to and
    computes only the experts of its own mapping column."""
    config, x, ids, weights, mapping, experts = _mini_case()
    num_tokens = x.shape[0]
    expected = [_golden_padded(x, ids, weights, mapping, d, *experts[d]) for d in range(NUM_DEVICES)]
    assert all(e.abs().sum() > 0 for e in expected), "the gate must route some tokens to every device's experts"

    mesh = emu.open_mesh_device(emu.MeshShape(1, NUM_DEVICES), grid=(8, 8))
    try:

        def per_device(which):
            return from_shards([w[which] for w in experts], emu.bfloat16, emu.TILE_LAYOUT, mesh)

        counts, tokens, token_weights, idx_map, _ = ttnn_moe.prepare_moe_routing_tensors(
            rm(mesh, ids, emu.uint32), rm(mesh, weights, emu.bfloat16), rm(mesh, mapping, emu.int32)
        )
        scattered = emu.to_layout(
            ttnn_moe.scatter_moe_input(rm(mesh, x, emu.bfloat16), counts, tokens).output, emu.TILE_LAYOUT
        )  # (E_l, T, H)
        gate = ttnn_moe.moe_bmm(scattered, per_device(0), counts)  # (E_l, T, I)
        up = ttnn_moe.moe_bmm(scattered, per_device(1), counts)  # (E_l, T, I)
        down = ttnn_moe.moe_bmm(emu.mul(emu.silu(gate), up), per_device(2), counts)  # (E_l, T, H)
        out = ttnn_moe.local_reduce_moe_output(
            emu.to_layout(down, emu.ROW_MAJOR_LAYOUT), idx_map, token_weights, counts, num_out_rows=num_tokens
        ).output
        got = [shard.float() for shard in device_shards(out)]  # (T, H) per device
    finally:
        emu.close_mesh_device(mesh)
    for d in range(NUM_DEVICES):
        assert_pcc(expected[d], got[d], pcc=0.9999, name=f"mini-config experts output of device {d} (padded moe_bmm)")


def test_single_device_pipeline_mini_config_grouped_over_packed_input():
    """The packed layout dense dispatch produces (golden dispatch on a 1x8 mesh), through grouped moe_bmm
    and grouped local_reduce on the emulator, vs the padded golden pipeline."""
    config, x, ids, weights, mapping, experts = _mini_case(seed=11)
    num_tokens, hidden_size = x.shape[0], config.hidden_size
    # On a 1x8 mesh dispatching along axis 0 every device is its own dispatch group; device 1 owns
    # experts 32..63 and receives exactly its own tokens' assignments to them.
    device_index = 1
    w1, w3, w2 = experts[device_index]
    expected = _golden_padded(x, ids, weights, mapping, device_index, w1, w3, w2)
    packed = golden.all_to_all_dispatch_dense(
        [x.view(num_tokens, 1, hidden_size)] * 8,
        [ids.view(num_tokens, 1, -1)] * 8,
        [weights.view(num_tokens, 1, -1)] * 8,
        mapping,
        (1, 8),
        0,
    )[device_index]

    device = emu.open_device(grid=(8, 8))
    try:

        def tiled(t):
            return emu.from_torch(t, dtype=emu.bfloat16, layout=emu.TILE_LAYOUT, device=device)

        counts, offsets = (rm(device, t, emu.uint32) for t in (packed.num_routed_tokens, packed.expert_offsets))
        tokens = tiled(packed.tokens)  # (cap, H)
        gate = ttnn_moe.moe_bmm(tokens, tiled(w1), counts, expert_offsets=offsets)  # (cap, I)
        up = ttnn_moe.moe_bmm(tokens, tiled(w3), counts, expert_offsets=offsets)  # (cap, I)
        down = ttnn_moe.moe_bmm(emu.mul(emu.silu(gate), up), tiled(w2), counts, expert_offsets=offsets)
        slots = ttnn_moe.local_reduce_moe_output(
            emu.to_layout(down, emu.ROW_MAJOR_LAYOUT),
            rm(device, packed.token_idx_map, emu.uint32),
            rm(device, packed.routed_token_weights, emu.bfloat16),
            counts,
            num_out_rows=packed.tokens.shape[0],
            expert_offsets=offsets,
        ).output
        got_slots = emu.to_torch(slots).float()  # (cap, H): one row per slot
    finally:
        emu.close_device(device)
    # Slot s holds the partial of source token slot_source[s, 1]; tokens with no local expert have no slot.
    got = torch.zeros(num_tokens, hidden_size)
    num_slots = int(packed.num_slots[0])
    got[packed.slot_source[:num_slots, 1].long()] = got_slots[:num_slots]
    assert_pcc(expected, got, pcc=0.9999, name="mini-config experts output (grouped moe_bmm)")
