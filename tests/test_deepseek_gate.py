"""moe_gate against a per-token loop that picks groups and experts explicitly."""

import math

import pytest
import torch
from ttnn_moe.testing import assert_equal_exact, assert_pcc

from models.deepseek_v3.config import DeepseekV3MoEConfig
from models.deepseek_v3.reference import moe_gate


def loop_gate(x, gate_weight, bias, config):
    """One token at a time, plain Python lists: score, rank groups, rank experts in the kept groups."""
    E, G, K = config.n_routed_experts, config.n_group, config.num_experts_per_tok
    per_group = E // G
    all_indices, all_weights = [], []
    for token in x.float():
        scores = [1.0 / (1.0 + math.exp(-float(token @ gate_weight[e].float()))) for e in range(E)]
        biased = [scores[e] + float(bias[e]) for e in range(E)]
        group_score = []
        for g in range(G):
            members = sorted((biased[e] for e in range(g * per_group, (g + 1) * per_group)), reverse=True)
            group_score.append(members[0] + members[1])
        kept_groups = sorted(range(G), key=lambda g: -group_score[g])[: config.topk_group]
        candidates = [e for g in kept_groups for e in range(g * per_group, (g + 1) * per_group)]
        chosen = sorted(candidates, key=lambda e: -biased[e])[:K]
        weights = [scores[e] for e in chosen]
        total = sum(weights) if config.norm_topk_prob else 1.0
        all_indices.append(chosen)
        all_weights.append([w / total * config.routed_scaling_factor for w in weights])
    return torch.tensor(all_indices), torch.tensor(all_weights, dtype=torch.float64)


def sort_rows(indices, weights):
    """Rows sorted by expert id (stable), weights carried along: order-free comparison."""
    order = torch.sort(indices, dim=1, stable=True).indices
    return indices.gather(1, order), weights.gather(1, order)


def random_gate(config, seed, bias_std):
    generator = torch.Generator().manual_seed(seed)
    H, E = config.hidden_size, config.n_routed_experts
    x = torch.randn(24, H, generator=generator)
    gate_weight = torch.randn(E, H, generator=generator) / H**0.5
    bias = bias_std * torch.randn(E, generator=generator)
    return x, gate_weight, bias


@pytest.mark.parametrize(
    "config",
    [
        DeepseekV3MoEConfig.mini(),
        DeepseekV3MoEConfig.mini(norm_topk_prob=False, routed_scaling_factor=1.0),
        DeepseekV3MoEConfig.mini(n_routed_experts=64, n_group=4, topk_group=2, num_experts_per_tok=6),
    ],
    ids=["deepseek", "unnormalized", "64experts_4groups"],
)
@pytest.mark.parametrize("bias_std", [0.0, 0.01, 0.3])
def test_gate_matches_per_token_loop(config, bias_std):
    x, gate_weight, bias = random_gate(config, seed=7, bias_std=bias_std)
    indices, weights = moe_gate(x, gate_weight, bias, config)
    assert indices.dtype == torch.int64 and weights.dtype == torch.float32
    assert indices.shape == weights.shape == (24, config.num_experts_per_tok)

    want_indices, want_weights = loop_gate(x, gate_weight, bias, config)
    got_indices, got_weights = sort_rows(indices, weights)
    want_indices, want_weights = sort_rows(want_indices, want_weights)
    assert_equal_exact(want_indices, got_indices, "topk_indices")
    assert_pcc(want_weights, got_weights, 0.999, "topk_weights")
    torch.testing.assert_close(got_weights.double(), want_weights, rtol=1e-5, atol=1e-6)


def test_bias_changes_the_choice_but_not_the_weights():
    config = DeepseekV3MoEConfig.mini()
    x, gate_weight, _ = random_gate(config, seed=3, bias_std=0.0)
    # A large bias on expert 5 wins it every token (and its group), whatever its score.
    bias = torch.zeros(config.n_routed_experts)
    bias[5] = 10.0
    plain_indices, _ = moe_gate(x, gate_weight, torch.zeros_like(bias), config)
    indices, weights = moe_gate(x, gate_weight, bias, config)
    assert not bool((plain_indices == 5).any(dim=1).all())
    assert bool((indices == 5).any(dim=1).all())

    scores = torch.sigmoid(x @ gate_weight.T)  # (T, E), no bias
    chosen = scores.gather(1, indices)
    expected = chosen / chosen.sum(dim=1, keepdim=True) * config.routed_scaling_factor
    torch.testing.assert_close(weights, expected)
    assert float(weights.max()) < 1.0  # expert 5's weight stays its share of sigmoid scores, not 10


def test_experts_come_only_from_the_best_groups():
    config = DeepseekV3MoEConfig.mini()
    x, gate_weight, bias = random_gate(config, seed=11, bias_std=0.01)
    indices, _ = moe_gate(x, gate_weight, bias, config)
    groups_used = indices // config.experts_per_group
    for row in groups_used:
        assert len(set(row.tolist())) <= config.topk_group


def test_weights_sum_to_the_scaling_factor():
    config = DeepseekV3MoEConfig.mini()
    x, gate_weight, bias = random_gate(config, seed=5, bias_std=0.01)
    _, weights = moe_gate(x, gate_weight, bias, config)
    torch.testing.assert_close(weights.sum(dim=1), torch.full((24,), 2.5))


@pytest.mark.parametrize("what, shape", [("x", (4, 100)), ("gate_weight", (255, 256)), ("bias", (128,))])
def test_bad_shapes_raise(what, shape):
    config = DeepseekV3MoEConfig.mini()
    args = {"x": torch.randn(4, 256), "gate_weight": torch.randn(256, 256), "bias": torch.zeros(256)}
    args[what] = torch.randn(*shape)
    with pytest.raises(ValueError, match=str(shape[0])):
        moe_gate(args["x"], args["gate_weight"], args["bias"], config)
