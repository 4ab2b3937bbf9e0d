"""DeepseekV3MoEConfig: official defaults, reading config.json, validation, mini config, mesh presets."""

import dataclasses

import pytest

from models.deepseek_v3.config import MESH_PRESETS, DeepseekV3MoEConfig, mesh_shape

# The MoE part of deepseek-ai/DeepSeek-V3's config.json, with some of its unrelated keys.
OFFICIAL_CONFIG_JSON = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "hidden_act": "silu",
    "hidden_size": 7168,
    "intermediate_size": 18432,
    "moe_intermediate_size": 2048,
    "moe_layer_freq": 1,
    "n_group": 8,
    "n_routed_experts": 256,
    "n_shared_experts": 1,
    "norm_topk_prob": True,
    "num_experts_per_tok": 8,
    "num_hidden_layers": 61,
    "routed_scaling_factor": 2.5,
    "scoring_func": "sigmoid",
    "topk_group": 4,
    "topk_method": "noaux_tc",
    "vocab_size": 129280,
    "quantization_config": {
        "activation_scheme": "dynamic",
        "fmt": "e4m3",
        "quant_method": "fp8",
        "weight_block_size": [128, 128],
    },
}


def test_defaults_are_the_official_values():
    config = DeepseekV3MoEConfig()
    expected = {
        key: OFFICIAL_CONFIG_JSON[key]
        for key in (
            "hidden_size",
            "moe_intermediate_size",
            "n_routed_experts",
            "num_experts_per_tok",
            "n_group",
            "topk_group",
            "routed_scaling_factor",
            "norm_topk_prob",
            "n_shared_experts",
            "scoring_func",
            "topk_method",
        )
    }
    assert dataclasses.asdict(config) == expected
    assert config.experts_per_group == 32
    assert config.shared_intermediate_size == 2048


def test_from_hf_config_reads_the_official_json_and_ignores_other_keys():
    assert DeepseekV3MoEConfig.from_hf_config(OFFICIAL_CONFIG_JSON) == DeepseekV3MoEConfig()


def test_from_hf_config_takes_non_default_values():
    config = DeepseekV3MoEConfig.from_hf_config(
        {
            "hidden_size": 512,
            "n_routed_experts": 64,
            "n_group": 4,
            "topk_group": 2,
            "num_experts_per_tok": 6,
            "norm_topk_prob": False,
            "routed_scaling_factor": 1.0,
            "rope_theta": 10000,
        }
    )
    assert (config.hidden_size, config.n_routed_experts, config.n_group, config.topk_group) == (512, 64, 4, 2)
    assert (config.num_experts_per_tok, config.norm_topk_prob, config.routed_scaling_factor) == (6, False, 1.0)
    assert config.moe_intermediate_size == 2048  # missing keys keep the default


def test_from_hf_config_reads_a_transformers_config():
    from transformers import DeepseekV3Config

    hf = DeepseekV3Config(hidden_size=256, moe_intermediate_size=64, n_shared_experts=4, n_group=8, topk_group=4)
    assert DeepseekV3MoEConfig.from_hf_config(hf) == DeepseekV3MoEConfig.mini()


@pytest.mark.parametrize(
    "overrides, words",
    [
        ({"n_routed_experts": 250}, ["n_routed_experts=250", "n_group=8"]),
        ({"topk_group": 9}, ["topk_group=9", "n_group=8"]),
        ({"n_routed_experts": 32, "topk_group": 1}, ["num_experts_per_tok=8", "topk_group=1"]),
        ({"num_experts_per_tok": 129}, ["num_experts_per_tok=129", "128"]),
        ({"n_routed_experts": 8}, ["n_routed_experts=8", "n_group=8"]),
        ({"scoring_func": "softmax"}, ["'softmax'"]),
        ({"topk_method": "greedy"}, ["'greedy'"]),
        ({"hidden_size": 0}, ["hidden_size", "0"]),
    ],
)
def test_invalid_values_raise_naming_them(overrides, words):
    with pytest.raises(ValueError) as error:
        DeepseekV3MoEConfig.from_hf_config({**OFFICIAL_CONFIG_JSON, **overrides})
    for word in words:
        assert word in str(error.value)


@pytest.mark.parametrize(
    "overrides, word",
    [
        ({"n_group": None}, "n_group"),
        ({"hidden_size": 7168.0}, "hidden_size"),
        ({"norm_topk_prob": "yes"}, "norm_topk_prob"),
    ],
)
def test_wrong_types_raise_naming_the_field(overrides, word):
    with pytest.raises(TypeError, match=word):
        DeepseekV3MoEConfig.from_hf_config({**OFFICIAL_CONFIG_JSON, **overrides})


def test_mini_keeps_the_routing_and_splits_in_tiles_over_8_columns():
    config = DeepseekV3MoEConfig.mini()
    assert (config.n_routed_experts, config.num_experts_per_tok, config.n_group, config.topk_group) == (256, 8, 8, 4)
    assert (config.scoring_func, config.topk_method, config.norm_topk_prob) == ("sigmoid", "noaux_tc", True)
    assert config.hidden_size % (8 * 32) == 0
    assert config.shared_intermediate_size % (8 * 32) == 0
    assert config.moe_intermediate_size % 32 == 0
    assert DeepseekV3MoEConfig.mini(hidden_size=512).hidden_size == 512


def test_mesh_presets():
    assert {name: mesh_shape(name) for name in MESH_PRESETS} == {
        "t3k": (1, 8),
        "tg": (4, 8),
        "galaxy": (4, 8),
        "dual": (8, 8),
        "quad": (16, 8),
    }
    with pytest.raises(ValueError, match="'n300'"):
        mesh_shape("n300")
