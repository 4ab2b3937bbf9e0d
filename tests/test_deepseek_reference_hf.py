"""reference_moe and the gate against transformers' DeepseekV3MoE with the same weights."""

import pytest
import torch
from transformers import DeepseekV3Config
from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3MoE
from ttnn_moe.testing import assert_equal_exact, assert_pcc

from models.deepseek_v3.config import DeepseekV3MoEConfig
from models.deepseek_v3.reference import moe_gate, reference_moe
from models.deepseek_v3.weights import load_moe_layer, random_moe_state_dict

CONFIG = DeepseekV3MoEConfig.mini()


def hf_moe_with(state_dict, config):
    """transformers' layer in fp32 holding `state_dict` (normalized layout), packed into its fused tensors."""
    hf_config = DeepseekV3Config(
        hidden_size=config.hidden_size,
        moe_intermediate_size=config.moe_intermediate_size,
        n_routed_experts=config.n_routed_experts,
        num_experts_per_tok=config.num_experts_per_tok,
        n_group=config.n_group,
        topk_group=config.topk_group,
        n_shared_experts=config.n_shared_experts,
        routed_scaling_factor=config.routed_scaling_factor,
        norm_topk_prob=config.norm_topk_prob,
    )
    moe = DeepseekV3MoE(hf_config).float().eval()
    E = config.n_routed_experts
    fused = {
        "experts.gate_up_proj": torch.stack(
            [
                torch.cat([state_dict[f"experts.{e}.gate_proj.weight"], state_dict[f"experts.{e}.up_proj.weight"]])
                for e in range(E)
            ]
        ),
        "experts.down_proj": torch.stack([state_dict[f"experts.{e}.down_proj.weight"] for e in range(E)]),
    }
    rest = {k: v for k, v in state_dict.items() if not k.startswith("experts.")}
    moe.load_state_dict({k: v.float() for k, v in {**rest, **fused}.items()}, strict=True)
    return moe


@pytest.fixture(scope="module")
def weights():
    # Bias N(0, 0.1): large enough that it changes the routing of most tokens.
    state = random_moe_state_dict(CONFIG, seed=21)
    state["gate.e_score_correction_bias"] = 0.1 * torch.randn(
        CONFIG.n_routed_experts, generator=torch.Generator().manual_seed(22)
    )
    return state


@pytest.fixture(scope="module")
def hf_moe(weights):
    return hf_moe_with(weights, CONFIG)


@pytest.fixture(scope="module")
def x():
    return torch.randn(64, CONFIG.hidden_size, generator=torch.Generator().manual_seed(23))


def test_routing_matches_transformers(weights, hf_moe, x):
    with torch.no_grad():
        _, hf_weights, hf_indices = hf_moe.gate(x)
    indices, topk_weights = moe_gate(x, weights["gate.weight"], weights["gate.e_score_correction_bias"], CONFIG)
    hf_sorted, hf_order = torch.sort(hf_indices, dim=1)
    ours_sorted, ours_order = torch.sort(indices, dim=1)
    assert_equal_exact(hf_sorted, ours_sorted, "topk_indices")
    assert_pcc(hf_weights.gather(1, hf_order), topk_weights.gather(1, ours_order), 0.9999, "topk_weights")
    # The bias matters here: without it the choice differs for some tokens.
    unbiased, _ = moe_gate(x, weights["gate.weight"], torch.zeros(CONFIG.n_routed_experts), CONFIG)
    assert not torch.equal(torch.sort(unbiased, dim=1).values, ours_sorted)


def test_reference_moe_matches_transformers(weights, hf_moe, x):
    with torch.no_grad():
        expected = hf_moe(x.view(1, *x.shape)).view(x.shape)
    assert_pcc(expected, reference_moe(x, weights, CONFIG), 0.9999, "reference_moe vs DeepseekV3MoE")


def test_transformers_state_dict_loads_through_the_fused_layout(weights, hf_moe, x):
    loaded = load_moe_layer(hf_moe.state_dict(), CONFIG)
    assert loaded.keys() == weights.keys()
    for name, tensor in weights.items():
        assert_equal_exact(tensor.float(), loaded[name], name)
