"""load_moe_layer over the checkpoint layouts, fp8 block dequantization, random weights."""

import pytest
import torch
from ttnn_moe.testing import assert_equal_exact

from models.deepseek_v3.config import DeepseekV3MoEConfig
from models.deepseek_v3.weights import RandomMoELayer, load_moe_layer, quantize_fp8_blockwise, random_moe_state_dict

CONFIG = DeepseekV3MoEConfig.mini()  # expert (64, 256) / (256, 64): partial 128x128 edge blocks
PREFIX = "model.layers.3.mlp."
PROJECTIONS = ("gate_proj", "up_proj", "down_proj")


@pytest.fixture(scope="module")
def weights():
    return random_moe_state_dict(CONFIG, seed=1, dtype=torch.float32)


def hand_dequantize(w8, scale_inv):
    """Block by block: W[i, j] = float(W8[i, j]) * scale_inv[i // 128, j // 128]."""
    out = torch.empty(w8.shape)
    for bi in range(scale_inv.shape[0]):
        for bj in range(scale_inv.shape[1]):
            rows, cols = slice(128 * bi, 128 * (bi + 1)), slice(128 * bj, 128 * (bj + 1))
            out[rows, cols] = w8[rows, cols].float() * scale_inv[bi, bj]
    return out


def matrix_names(config):
    experts = [f"experts.{e}.{p}.weight" for e in range(config.n_routed_experts) for p in PROJECTIONS]
    return experts + [f"shared_experts.{p}.weight" for p in PROJECTIONS]


def fp8_checkpoint(weights):
    """The official checkpoint layout: fp8 matrices plus weight_scale_inv, bf16 gate, fp32 bias, prefixed."""
    checkpoint = {
        PREFIX + "gate.weight": weights["gate.weight"].to(torch.bfloat16),
        PREFIX + "gate.e_score_correction_bias": weights["gate.e_score_correction_bias"],
    }
    for name in matrix_names(CONFIG):
        checkpoint[PREFIX + name], checkpoint[PREFIX + name + "_scale_inv"] = quantize_fp8_blockwise(weights[name])
    return checkpoint


def fused_layout(weights, prefix=""):
    """transformers 5.x: gate_up_proj (E, 2I, H) = [gate; up] per expert, down_proj (E, H, I)."""
    E = CONFIG.n_routed_experts
    layout = {prefix + k: v for k, v in weights.items() if not k.startswith("experts.")}
    layout[prefix + "experts.gate_up_proj"] = torch.stack(
        [
            torch.cat([weights[f"experts.{e}.gate_proj.weight"], weights[f"experts.{e}.up_proj.weight"]])
            for e in range(E)
        ]
    )
    layout[prefix + "experts.down_proj"] = torch.stack([weights[f"experts.{e}.down_proj.weight"] for e in range(E)])
    return layout


def test_per_expert_layout_round_trips(weights):
    loaded = load_moe_layer({PREFIX + k: v for k, v in weights.items()}, CONFIG, prefix=PREFIX)
    assert loaded.keys() == weights.keys()
    for name, tensor in weights.items():
        assert torch.equal(loaded[name], tensor), name


def test_fp8_checkpoint_dequantizes_block_by_block(weights):
    checkpoint = fp8_checkpoint(weights)
    assert checkpoint[PREFIX + "experts.0.gate_proj.weight_scale_inv"].shape == (1, 2)
    assert checkpoint[PREFIX + "experts.0.down_proj.weight_scale_inv"].shape == (2, 1)
    loaded = load_moe_layer(checkpoint, CONFIG, prefix=PREFIX)
    for name in matrix_names(CONFIG):
        expected = hand_dequantize(checkpoint[PREFIX + name], checkpoint[PREFIX + name + "_scale_inv"])
        assert loaded[name].dtype == torch.float32
        assert_equal_exact(expected, loaded[name], name)
    assert loaded["gate.weight"].dtype == torch.bfloat16
    assert loaded["gate.e_score_correction_bias"].dtype == torch.float32


def test_fp8_quantization_error_is_within_fp8_rounding():
    w = torch.randn(300, 200, generator=torch.Generator().manual_seed(4))  # partial blocks both ways
    w[:128, :128] = 0.0  # an all-zero block
    w8, scale_inv = quantize_fp8_blockwise(w)
    assert w8.dtype == torch.float8_e4m3fn and scale_inv.shape == (3, 2)
    scale = hand_dequantize(torch.ones(300, 200).to(torch.float8_e4m3fn), scale_inv)  # per-element block scale
    error = (hand_dequantize(w8, scale_inv) - w).abs()
    # e4m3: 3 mantissa bits (relative step 1/8, rounding error 1/16); subnormal step 2^-9 of the scale.
    assert bool((error <= w.abs() / 16 + scale * 2.0**-10 + 1e-12).all())
    assert bool((hand_dequantize(w8, scale_inv)[:128, :128] == 0).all())
    for bi, bj in [(0, 1), (2, 1)]:  # each block's largest magnitude maps to fp8's maximum
        block = w[128 * bi : 128 * (bi + 1), 128 * bj : 128 * (bj + 1)]
        assert float(scale_inv[bi, bj]) == pytest.approx(float(block.abs().max()) / 448, rel=1e-6)


def test_fused_layout_equals_per_expert_layout(weights):
    loaded = load_moe_layer(fused_layout(weights, PREFIX), CONFIG, prefix=PREFIX)
    assert loaded.keys() == weights.keys()
    for name, tensor in weights.items():
        assert torch.equal(loaded[name], tensor), name


def test_fused_fp8_layout_dequantizes(weights):
    layout = fused_layout(weights)
    for name in ("experts.gate_up_proj", "experts.down_proj"):
        pairs = [quantize_fp8_blockwise(m) for m in layout[name]]
        layout[name] = torch.stack([w8 for w8, _ in pairs])
        layout[name + "_scale_inv"] = torch.stack([s for _, s in pairs])
    loaded = load_moe_layer(layout, CONFIG)
    for e in (0, 77, 255):
        gate_up = hand_dequantize(layout["experts.gate_up_proj"][e], layout["experts.gate_up_proj_scale_inv"][e])
        assert_equal_exact(gate_up[:64], loaded[f"experts.{e}.gate_proj.weight"], f"expert {e} gate")
        assert_equal_exact(gate_up[64:], loaded[f"experts.{e}.up_proj.weight"], f"expert {e} up")
        down = hand_dequantize(layout["experts.down_proj"][e], layout["experts.down_proj_scale_inv"][e])
        assert_equal_exact(down, loaded[f"experts.{e}.down_proj.weight"], f"expert {e} down")


def test_dtype_converts_everything_but_the_bias(weights):
    loaded = load_moe_layer(weights, CONFIG, dtype=torch.bfloat16)
    assert {t.dtype for k, t in loaded.items() if k != "gate.e_score_correction_bias"} == {torch.bfloat16}
    assert loaded["gate.e_score_correction_bias"].dtype == torch.float32


def _broken(weights, change):
    state = {PREFIX + k: v for k, v in weights.items()}
    change(state)
    return state


@pytest.mark.parametrize(
    "change, error, key",
    [
        (lambda s: s.update({PREFIX + "gate.weight": torch.zeros(256, 255)}), ValueError, "gate.weight"),
        (
            lambda s: s.update({PREFIX + "experts.17.down_proj.weight": torch.zeros(64, 256)}),
            ValueError,
            "experts.17.down_proj.weight",
        ),
        (lambda s: s.pop(PREFIX + "experts.200.up_proj.weight"), ValueError, "experts.200.up_proj.weight"),
        (lambda s: s.pop(PREFIX + "shared_experts.gate_proj.weight"), ValueError, "shared_experts.gate_proj.weight"),
        (
            lambda s: s.update({PREFIX + "experts.256.gate_proj.weight": torch.zeros(64, 256)}),
            ValueError,
            "experts.256.gate_proj.weight",
        ),
        (
            lambda s: s.update({PREFIX + "gate.e_score_correction_bias": torch.zeros(256, dtype=torch.int64)}),
            TypeError,
            "gate.e_score_correction_bias",
        ),
        (
            lambda s: s.update({PREFIX + "experts.3.gate_proj.weight": torch.zeros(64, 256).to(torch.float8_e4m3fn)}),
            ValueError,
            "experts.3.gate_proj.weight_scale_inv",
        ),
    ],
)
def test_bad_keys_and_shapes_raise_naming_the_key(weights, change, error, key):
    with pytest.raises(error, match=PREFIX.replace(".", r"\.") + key.replace(".", r"\.")):
        load_moe_layer(_broken(weights, change), CONFIG, prefix=PREFIX)


def test_wrong_scale_shape_raises_naming_the_scale(weights):
    checkpoint = fp8_checkpoint(weights)
    checkpoint[PREFIX + "experts.9.up_proj.weight_scale_inv"] = torch.ones(2, 2)
    with pytest.raises(ValueError, match=r"experts\.9\.up_proj\.weight_scale_inv.*\(1, 2\)"):
        load_moe_layer(checkpoint, CONFIG, prefix=PREFIX)


def test_fused_with_wrong_shape_raises(weights):
    layout = fused_layout(weights)
    layout["experts.gate_up_proj"] = layout["experts.gate_up_proj"][:, :64]
    with pytest.raises(ValueError, match=r"experts\.gate_up_proj.*\(256, 128, 256\)"):
        load_moe_layer(layout, CONFIG)


def test_random_weights_are_reproducible_and_scaled():
    config = DeepseekV3MoEConfig.mini(n_routed_experts=16, n_group=4, topk_group=2, num_experts_per_tok=4)
    a, b = random_moe_state_dict(config, seed=3), random_moe_state_dict(config, seed=3)
    c = random_moe_state_dict(config, seed=4)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["experts.0.gate_proj.weight"], c["experts.0.gate_proj.weight"])
    assert load_moe_layer(a, config).keys() == a.keys()  # every shape matches the config
    assert a["experts.0.gate_proj.weight"].dtype == torch.bfloat16
    assert a["gate.e_score_correction_bias"].dtype == torch.float32
    gate = torch.cat([a[f"experts.{e}.gate_proj.weight"].float().reshape(-1) for e in range(16)])
    down = torch.cat([a[f"experts.{e}.down_proj.weight"].float().reshape(-1) for e in range(16)])
    assert float(gate.std()) == pytest.approx(256**-0.5, rel=0.05)  # fan_in H
    assert float(down.std()) == pytest.approx(64**-0.5, rel=0.05)  # fan_in I


def test_random_layer_generates_each_tensor_alone_and_in_any_order():
    full = DeepseekV3MoEConfig()  # 256 experts of 7168 x 2048: ~22 GiB in bf16 if built at once
    layer = RandomMoELayer(full, seed=5)
    assert len(layer) == 1 + 1 + 256 * 3 + 3 and "experts.255.down_proj.weight" in layer
    down = layer["experts.200.down_proj.weight"]  # one tensor, none of the others
    assert down.shape == (full.hidden_size, full.moe_intermediate_size) and down.dtype == torch.bfloat16
    assert torch.equal(RandomMoELayer(full, seed=5)["experts.200.down_proj.weight"], down)  # order-free
    assert not torch.equal(RandomMoELayer(full, seed=6)["experts.200.down_proj.weight"], down)
    small = DeepseekV3MoEConfig.mini(n_routed_experts=16, n_group=4, topk_group=2, num_experts_per_tok=4)
    lazy, whole = RandomMoELayer(small, seed=3), random_moe_state_dict(small, seed=3)
    assert list(lazy) == list(whole) and all(torch.equal(lazy[k], whole[k]) for k in reversed(list(whole)))
    with pytest.raises(KeyError):
        lazy["experts.16.gate_proj.weight"]
    with pytest.raises(ValueError, match="seed must be an integer in \\[0, 2\\*\\*31\\), got -1"):
        RandomMoELayer(small, seed=-1)


def test_a_random_layer_of_the_config_is_normalized_as_it_is():
    small = DeepseekV3MoEConfig.mini(n_routed_experts=16, n_group=4, topk_group=2, num_experts_per_tok=4)
    layer = RandomMoELayer(small, seed=3)
    assert load_moe_layer(layer, small) is layer  # its tensors still generated one at a time, when looked up
    copied = load_moe_layer(layer, small, dtype=torch.float32)  # anything else is read and checked key by key
    assert torch.equal(copied["experts.3.up_proj.weight"], layer["experts.3.up_proj.weight"].float())
    other = DeepseekV3MoEConfig.mini(
        n_routed_experts=16, n_group=4, topk_group=2, num_experts_per_tok=4, hidden_size=512
    )
    with pytest.raises(ValueError, match=r"gate\.weight.*\(16, 512\)"):
        load_moe_layer(layer, other)
