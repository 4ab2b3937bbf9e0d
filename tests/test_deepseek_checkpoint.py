"""A MoE layer of a safetensors checkpoint on a mesh, against transformers' DeepseekV3 MoE.

Two checkpoints: one written by transformers itself (`DeepseekV3ForCausalLM.save_pretrained`,
bf16, sharded) and one in the official fp8 layout written by our writer. The golden of each is
transformers' layer holding the weights as the files hold them, read independently of our loader.
"""

import json
import os

import pytest
import torch
from checkpoint_fixtures import TINY, dequantized_layer, raw_tensors
from hf_moe import hf_moe_with
from safetensors.torch import save_file
from transformers import DeepseekV3Config, DeepseekV3ForCausalLM
from ttnn_moe.testing import assert_equal_exact, assert_pcc

import models.deepseek_v3.checkpoint_layer as checkpoint_layer
from models.deepseek_v3.checkpoint_layer import open_moe_layer
from models.deepseek_v3.checkpoint_writer import hf_config_dict, moe_layer_tensors, write_official_checkpoint
from models.deepseek_v3.pcc_floors import LAYER_PCC_FLOOR
from models.deepseek_v3.reference import reference_moe
from models.deepseek_v3.tt import input_to_mesh, output_to_torch
from models.deepseek_v3.tt.checkpoint_moe import load_checkpoint_moe
from models.deepseek_v3.weights import random_moe_state_dict
from ttnn_moe import emu

HF_PCC = 0.995  # the layer on the mesh vs transformers' layer
LAYER_PCC = LAYER_PCC_FLOOR["bfloat16"]  # the layer on the mesh vs the fp32 reference
MOE_LAYER = 1  # layer 0 is dense in both checkpoints


@pytest.fixture(autouse=True)
def weight_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TTNN_MOE_WEIGHT_CACHE", str(tmp_path / "weight-cache"))
    return tmp_path / "weight-cache"


@pytest.fixture
def mesh():
    mesh_device = emu.open_mesh_device(emu.MeshShape(2, 2))
    yield mesh_device
    emu.close_mesh_device(mesh_device)


def tokens(count: int, seed: int) -> torch.Tensor:
    return torch.randn(count, TINY.hidden_size, generator=torch.Generator().manual_seed(seed)).bfloat16().float()


def run(path, mesh, x, **kwargs):
    load = load_checkpoint_moe(path, MOE_LAYER, mesh, **kwargs)
    return load, output_to_torch(load.moe(input_to_mesh(x, mesh)))


def transformers_checkpoint(path):
    """save_pretrained of a tiny DeepseekV3ForCausalLM (layer 0 dense, layer 1 MoE) in bf16, sharded;
    returns its MoE layer in fp32 holding exactly the saved values."""
    hf_config = DeepseekV3Config(
        vocab_size=32, hidden_size=TINY.hidden_size, intermediate_size=64,
        moe_intermediate_size=TINY.moe_intermediate_size, n_routed_experts=TINY.n_routed_experts,
        num_experts_per_tok=TINY.num_experts_per_tok, n_group=TINY.n_group, topk_group=TINY.topk_group,
        n_shared_experts=TINY.n_shared_experts, num_hidden_layers=2, first_k_dense_replace=1,
        num_attention_heads=2, num_key_value_heads=2, q_lora_rank=16, kv_lora_rank=16, qk_rope_head_dim=8,
        qk_nope_head_dim=8, v_head_dim=8,
    )  # fmt: skip
    model = DeepseekV3ForCausalLM(hf_config)
    generator = torch.Generator().manual_seed(5)
    with torch.no_grad():  # unit-scale projections and a bias that changes the routing
        for name, tensor in [*model.named_parameters(), *model.named_buffers()]:
            if ".mlp." in name and name.endswith("weight"):
                tensor.copy_(torch.randn(tensor.shape, generator=generator) / tensor.shape[-1] ** 0.5)
            elif name.endswith("e_score_correction_bias"):
                tensor.copy_(0.1 * torch.randn(tensor.shape, generator=generator))
    model = model.to(torch.bfloat16)
    model.save_pretrained(path, max_shard_size="40KB")
    return model.model.layers[MOE_LAYER].mlp.float().eval()


def official_checkpoint(path, seed=7):
    """Our writer, official fp8 layout: a dense layer 0 and MoE layer 1, several shards."""
    state = random_moe_state_dict(TINY, seed=seed, dtype=torch.float32)
    generator = torch.Generator().manual_seed(seed + 1)  # the bias decides the routing: never the global RNG
    state["gate.e_score_correction_bias"] = 0.1 * torch.randn(TINY.n_routed_experts, generator=generator)
    dense = {
        f"model.layers.0.mlp.{p}.weight": torch.randn(64, 64, generator=generator) / 8
        for p in ("gate_proj", "up_proj", "down_proj")
    }
    hf_config = hf_config_dict(TINY, num_hidden_layers=2, first_k_dense_replace=1, intermediate_size=64)
    tensors = [*dense.items(), *moe_layer_tensors(state, MOE_LAYER)]
    write_official_checkpoint(path, hf_config, tensors, max_shard_bytes=16 << 10)


def test_transformers_checkpoint_runs_like_transformers(tmp_path, mesh):
    hf_layer = transformers_checkpoint(tmp_path)
    assert len(list(tmp_path.glob("model-*.safetensors"))) > 1  # sharded, read through the index
    x = tokens(8, seed=1)
    load, y = run(tmp_path, mesh, x)
    with torch.no_grad():
        expected = hf_layer(x.view(1, *x.shape)).view(x.shape)
    assert_pcc(expected, y, HF_PCC, "checkpoint layer on the mesh vs transformers")
    assert_pcc(expected, reference_moe(x, load.layer, load.layer.config), 0.9999, "streaming reference vs transformers")
    assert load.layer.config == TINY


@pytest.mark.parametrize("expert_dtype", [emu.bfloat16, emu.bfloat8_b, emu.bfloat4_b], ids=lambda d: d.name)
def test_official_fp8_checkpoint_runs_like_transformers(tmp_path, mesh, expert_dtype):
    official_checkpoint(tmp_path)
    assert any(t.dtype == torch.float8_e4m3fn for t in raw_tensors(tmp_path).values())
    golden_weights = dequantized_layer(tmp_path, MOE_LAYER)
    x = tokens(8, seed=2)
    load, y = run(tmp_path, mesh, x, expert_dtype=expert_dtype)
    with torch.no_grad():
        expected = hf_moe_with(golden_weights, TINY)(x.view(1, *x.shape)).view(x.shape)
    # The expert dtype's own floor bounds both: its rounding is the only difference from bfloat16.
    floor = LAYER_PCC_FLOOR[expert_dtype.name]
    assert_pcc(expected, y, min(HF_PCC, floor), f"fp8 checkpoint layer ({expert_dtype.name} experts) vs transformers")
    assert_pcc(reference_moe(x, load.layer, TINY), y, floor, "vs the streaming fp32 reference")


def test_loaded_values_are_the_block_dequantized_files(tmp_path):
    official_checkpoint(tmp_path)
    golden = dequantized_layer(tmp_path, MOE_LAYER)
    layer = open_moe_layer(tmp_path, MOE_LAYER)
    assert set(layer) == set(golden)
    for name, tensor in golden.items():
        assert_equal_exact(tensor, layer[name].float(), name)


def test_fused_expert_tensors_are_read_one_expert_at_a_time(tmp_path):
    """transformers' in-memory layout (experts.gate_up_proj, experts.down_proj) in a single model.safetensors."""
    state = random_moe_state_dict(TINY, seed=3, dtype=torch.float32)
    fused = hf_moe_with(state, TINY).state_dict()
    assert "experts.gate_up_proj" in fused
    save_file(
        {f"model.layers.{MOE_LAYER}.mlp.{k}": v.contiguous() for k, v in fused.items()}, tmp_path / "model.safetensors"
    )
    config = hf_config_dict(TINY, num_hidden_layers=2, first_k_dense_replace=1, intermediate_size=64)
    (tmp_path / "config.json").write_text(json.dumps(config))
    layer = open_moe_layer(tmp_path, MOE_LAYER)
    for name, tensor in state.items():
        assert_equal_exact(tensor, layer[name].float(), name)


def test_second_load_reads_the_converted_cache(tmp_path, mesh, weight_cache, monkeypatch):
    official_checkpoint(tmp_path)
    dequantized = []
    real_dequantize = checkpoint_layer.dequantize_fp8_blockwise
    monkeypatch.setattr(
        checkpoint_layer, "dequantize_fp8_blockwise", lambda *a: dequantized.append(1) or real_dequantize(*a)
    )
    x = tokens(4, seed=4)
    devices = mesh.get_num_devices()

    first, y_first = run(tmp_path, mesh, x, expert_dtype=emu.bfloat8_b)
    assert (first.shards_converted, first.shards_from_cache) == (2 * devices, 0)  # per device: the fused w1_w3 and w2
    assert len(dequantized) == 3 * TINY.n_routed_experts + 3  # every expert matrix, the shared expert's
    assert first.cache_directory.parent == weight_cache

    dequantized.clear()
    second, y_second = run(tmp_path, mesh, x, expert_dtype=emu.bfloat8_b)
    assert (second.shards_converted, second.shards_from_cache) == (0, 2 * devices)
    assert len(dequantized) == 3  # only the shared expert: no routed expert is read or converted
    assert torch.equal(y_first, y_second)

    other_dtype, _ = run(tmp_path, mesh, x, expert_dtype=emu.bfloat16)  # another key
    assert other_dtype.shards_converted == 2 * devices
    shard = sorted(tmp_path.glob("model-*.safetensors"))[0]
    os.utime(shard, ns=(shard.stat().st_atime_ns, shard.stat().st_mtime_ns + 10**9))  # a changed file
    touched, _ = run(tmp_path, mesh, x, expert_dtype=emu.bfloat8_b)
    assert touched.shards_converted == 2 * devices
