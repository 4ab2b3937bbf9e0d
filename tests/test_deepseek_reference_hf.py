"""reference_moe and the gate against transformers' DeepseekV3MoE with the same weights."""

import pytest
import torch
from hf_moe import hf_moe_with
from ttnn_moe.testing import assert_equal_exact, assert_pcc

from models.deepseek_v3.config import DeepseekV3MoEConfig
from models.deepseek_v3.reference import moe_gate, reference_moe
from models.deepseek_v3.weights import load_moe_layer, random_moe_state_dict

CONFIG = DeepseekV3MoEConfig.mini()


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
