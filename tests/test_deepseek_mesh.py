"""TtMoE's mesh flow stage by stage: every op's output, observed in a forward pass, against that op's
torch golden computed from the previous stage's observed tensors (so a wrong stage is named, not just
a wrong layer), and the layer's output against the single-device fp32 reference."""

import pytest
import torch
import torch.nn.functional as F
from ttnn_moe.testing import assert_equal_exact, assert_pcc

from models.deepseek_v3.config import DeepseekV3MoEConfig
from models.deepseek_v3.reference import local_expert_weights, moe_gate, reference_moe
from models.deepseek_v3.tt import TtMoE, device_values, input_to_mesh, output_to_torch
from models.deepseek_v3.weights import random_moe_state_dict
from ttnn_moe import emu, expert_mapping, golden

CONFIG = DeepseekV3MoEConfig.mini()
LAYER_PCC = 0.999
STAGE_PCC = 0.9999


@pytest.fixture(scope="module")
def weights():
    return random_moe_state_dict(CONFIG, seed=5)


def bf16_tokens(count, seed):
    return torch.randn(count, CONFIG.hidden_size, generator=torch.Generator().manual_seed(seed)).bfloat16().float()


def forward_with_stages(state_dict, mesh_shape, x, config=CONFIG):
    """Runs TtMoE on an emulated mesh; returns (y (T, H), stage -> per-device torch tensors)."""
    mesh_device = emu.open_mesh_device(emu.MeshShape(*mesh_shape))
    stages = {}
    try:
        moe = TtMoE(state_dict, config, mesh_device)
        y = output_to_torch(
            moe(input_to_mesh(x, mesh_device), observer=lambda stage, t: stages.setdefault(stage, device_values(t)))
        )
    finally:
        emu.close_mesh_device(mesh_device)
    return y, stages


def words(t):
    return t.to(torch.int64) & 0xFFFFFFFF


def check_stages(state_dict, mesh_shape, x, config=CONFIG):
    rows, cols = mesh_shape
    num_devices, B, K = rows * cols, x.shape[0] // rows, config.num_experts_per_tok
    y, seen = forward_with_stages(state_dict, mesh_shape, x, config)

    # all_gather: each device of a row holds the row's tokens in full.
    gathered = golden.all_gather([t.bfloat16() for t in seen["input"]], mesh_shape, 1, 1)
    for d in range(num_devices):
        assert_equal_exact(gathered[d], seen["all_gather"][d], f"device {d} all_gather")

    # gate: the reference gate on the row's tokens (indices exact; weights as bf16).
    for d in range(num_devices):
        ids, gate_weights = moe_gate(
            seen["all_gather"][d].float(), state_dict["gate.weight"], state_dict["gate.e_score_correction_bias"], config
        )
        assert_equal_exact(ids.to(torch.int32), words(seen["gate.topk_indices"][d]).reshape(B, K), f"device {d} ids")
        assert_equal_exact(gate_weights.bfloat16(), seen["gate.topk_weights"][d].reshape(B, K), f"device {d} weights")

    # dispatch along axis 0 from the observed routing: every index and routing output exact.
    mapping = expert_mapping(config.n_routed_experts, num_devices)
    capacity = seen["dispatch.tokens"][0].shape[0]
    dispatched = golden.all_to_all_dispatch_dense(
        [t.bfloat16().reshape(B, 1, -1) for t in seen["all_gather"]],
        [words(t).to(torch.int32).reshape(B, 1, K) for t in seen["gate.topk_indices"]],
        [t.reshape(B, 1, K) for t in seen["gate.topk_weights"]],
        mapping,
        mesh_shape,
        0,
        capacity=capacity,
    )
    for d, want in enumerate(dispatched):
        for name in ("num_routed_tokens", "expert_offsets", "token_idx_map", "slot_source", "num_slots"):
            got = words(seen[f"dispatch.{name}"][d]).reshape(getattr(want, name).shape)
            assert_equal_exact(getattr(want, name).to(torch.int64), got, f"device {d} dispatch.{name}")
        assert_equal_exact(
            want.routed_token_weights,
            seen["dispatch.routed_token_weights"][d].reshape(-1),
            f"device {d} dispatch.routed_token_weights",
        )
        for offset, count in zip(want.expert_offsets.reshape(-1).tolist(), want.num_routed_tokens.reshape(-1).tolist()):
            rows_of_block = slice(offset, offset + count)
            assert_equal_exact(
                want.tokens[rows_of_block],
                seen["dispatch.tokens"][d][rows_of_block],
                f"device {d} dispatch.tokens rows {rows_of_block}",
            )

    # experts, local reduce: per device, from the observed inputs of each op.
    owner = mapping[0, 0].argmax(dim=1)
    for d in range(num_devices):
        w1, w3, w2 = (w.bfloat16() for w in local_expert_weights(state_dict, (owner == d).nonzero()[:, 0].tolist()))
        counts = words(seen["dispatch.num_routed_tokens"][d]).to(torch.int32)
        offsets = words(seen["dispatch.expert_offsets"][d]).to(torch.int32)
        active = torch.zeros(capacity, dtype=torch.bool)
        for offset, count in zip(offsets.reshape(-1).tolist(), counts.reshape(-1).tolist()):
            active[offset : offset + count] = True
        if not active.any():
            continue  # no token reached this device's experts
        tokens = seen["dispatch.tokens"][d]
        for stage, x_in, w in (
            ("experts.w1", tokens, w1),
            ("experts.w3", tokens, w3),
            ("experts.w2", (F.silu(seen["experts.w1"][d].float()) * seen["experts.w3"][d].float()).bfloat16(), w2),
        ):
            want = golden.moe_bmm(x_in, w, counts, expert_offsets=offsets)
            assert_pcc(want[active], seen[stage][d].float()[active], STAGE_PCC, f"device {d} {stage}")
        reduced = golden.local_reduce_moe_output(
            seen["experts.w2"][d],
            words(seen["dispatch.token_idx_map"][d]).to(torch.int32),
            seen["dispatch.routed_token_weights"][d],
            counts,
            capacity,
            expert_offsets=offsets,
        )
        num_slots = int(words(seen["dispatch.num_slots"][d]).reshape(-1)[0])
        assert_pcc(
            reduced[:num_slots], seen["local_reduce"][d].float()[:num_slots], STAGE_PCC, f"device {d} local_reduce"
        )

    # combine up each column, from the observed slot rows.
    combined = golden.all_to_all_combine_dense(
        seen["local_reduce"],
        [words(t).to(torch.int32) for t in seen["dispatch.slot_source"]],
        [words(t).to(torch.int32) for t in seen["dispatch.num_slots"]],
        mesh_shape,
        0,
        B,
        1,
    )
    for d in range(num_devices):
        assert_pcc(combined[d], seen["combine"][d].float(), STAGE_PCC, f"device {d} combine")

    # the layer: against the single-device fp32 reference.
    assert_pcc(reference_moe(x, state_dict, config), y, LAYER_PCC, f"TtMoE on {rows}x{cols} vs reference_moe")
    return seen


@pytest.mark.parametrize("mesh_shape, tokens", [((2, 4), 10), ((4, 8), 24), ((1, 8), 5)], ids=["2x4", "tg", "t3k"])
def test_every_stage_matches_its_golden(weights, mesh_shape, tokens):
    """Tokens per row are never a multiple of a tile; with 256 experts most get no token."""
    seen = check_stages(weights, mesh_shape, bf16_tokens(tokens, seed=tokens))
    counts = torch.cat([t.reshape(-1) for t in seen["dispatch.num_routed_tokens"]])
    assert (counts == 0).any(), "some expert must receive no token"


def test_every_token_on_the_experts_of_one_device(weights):
    """A score-correction bias that makes experts 0..7 win every token: one device's experts take all
    the work (a block spanning several row tiles), every other device's experts none."""
    state = dict(weights)
    bias = torch.full((CONFIG.n_routed_experts,), -10.0)
    bias[: CONFIG.num_experts_per_tok] = 10.0
    state["gate.e_score_correction_bias"] = bias
    seen = check_stages(state, (2, 4), bf16_tokens(48, seed=3))
    per_device = [int(words(t).sum()) for t in seen["dispatch.num_routed_tokens"]]
    assert per_device == [48 * CONFIG.num_experts_per_tok] + [0] * 7


def test_the_observer_sees_every_stage_in_flow_order(weights):
    _, seen = forward_with_stages(weights, (2, 4), bf16_tokens(8, seed=1))
    assert list(seen) == [
        "input",
        "all_gather",
        "gate.topk_indices",
        "gate.topk_weights",
        "dispatch.tokens",
        "dispatch.num_routed_tokens",
        "dispatch.expert_offsets",
        "dispatch.token_idx_map",
        "dispatch.routed_token_weights",
        "dispatch.slot_source",
        "dispatch.num_slots",
        "experts.w1",
        "experts.w3",
        "experts.swiglu",
        "experts.w2",
        "local_reduce",
        "combine",
        "shared_expert_partial",
        "reduce_scatter",
    ]
    assert all(len(per_device) == 8 for per_device in seen.values())
