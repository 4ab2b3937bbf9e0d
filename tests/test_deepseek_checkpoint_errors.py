"""Bad checkpoints name the tensor and the file; the demo turns them into one line."""

import json

import pytest
import torch
from checkpoint_fixtures import TINY, TINY_8_COLUMNS, rewrite_index
from safetensors.torch import save_file

from models.deepseek_v3 import demo
from models.deepseek_v3.checkpoint import CheckpointError
from models.deepseek_v3.checkpoint_layer import DenseLayerError, open_moe_layer
from models.deepseek_v3.checkpoint_writer import (
    hf_config_dict,
    moe_layer_tensors,
    write_official_checkpoint,
    write_random_checkpoint,
)
from models.deepseek_v3.pcc_floors import LAYER_PCC_FLOOR
from models.deepseek_v3.weights import random_moe_state_dict

PREFIX = "model.layers.1.mlp."


def write(path, state=None, **edits):
    """Official layout of TINY's layer 1 (plus a dense layer 0), after renaming/replacing tensors."""
    state = dict(state or random_moe_state_dict(TINY, seed=0, dtype=torch.float32))
    for old, new in edits.get("rename", {}).items():
        state[new] = state.pop(old)
    state.update(edits.get("replace", {}))
    dense = [(f"model.layers.0.mlp.{p}.weight", torch.randn(64, 64)) for p in ("gate_proj", "up_proj", "down_proj")]
    hf_config = hf_config_dict(TINY, num_hidden_layers=2, first_k_dense_replace=1, intermediate_size=64)
    write_official_checkpoint(path, hf_config, [*dense, *moe_layer_tensors(state, 1)], max_shard_bytes=16 << 10)
    return path


def shard_of(path, name):
    return json.loads((path / "model.safetensors.index.json").read_text())["weight_map"][name]


def test_missing_tensor_is_named(tmp_path):
    write(tmp_path, rename={"experts.3.up_proj.weight": "experts.3.upproj.weight"})
    with pytest.raises(CheckpointError, match=rf"tensor '{PREFIX}experts\.3\.up_proj\.weight' is missing from"):
        open_moe_layer(tmp_path, 1)


def test_unexpected_tensor_is_named_with_its_file(tmp_path):
    write(tmp_path, replace={"experts.9.gate_proj.weight": torch.randn(32, 64)})
    file = shard_of(tmp_path, PREFIX + "experts.9.gate_proj.weight")
    with pytest.raises(CheckpointError, match=rf"unexpected tensor '{PREFIX}experts\.9\.gate_proj\.weight' in {file}"):
        open_moe_layer(tmp_path, 1)


def test_missing_shard_is_named(tmp_path):
    write(tmp_path)
    file = shard_of(tmp_path, PREFIX + "experts.5.down_proj.weight")
    (tmp_path / file).unlink()
    with pytest.raises(CheckpointError, match=rf"shard file '{file}' of checkpoint .* is missing"):
        open_moe_layer(tmp_path, 1)


def test_index_naming_the_wrong_shard_is_named(tmp_path):
    write(tmp_path)
    name = PREFIX + "experts.2.gate_proj.weight"
    other = shard_of(tmp_path, "model.layers.0.mlp.gate_proj.weight")
    assert other != shard_of(tmp_path, name)
    rewrite_index(tmp_path, lambda weight_map: weight_map.update({name: other}))
    with pytest.raises(CheckpointError, match=rf"tensor '{name}' is not in {other} \(the index says it is\)"):
        open_moe_layer(tmp_path, 1)


def test_shape_mismatch_is_named_with_its_file(tmp_path):
    write(tmp_path, replace={"gate.weight": torch.randn(TINY.n_routed_experts, 32)})
    file = shard_of(tmp_path, PREFIX + "gate.weight")
    with pytest.raises(
        CheckpointError, match=rf"tensor '{PREFIX}gate\.weight' in {file} has shape \(8, 32\), expected \(8, 64\)"
    ):
        open_moe_layer(tmp_path, 1)


def test_dtype_mismatch_and_missing_scales_are_named(tmp_path):
    """A hand-written single-file checkpoint: an int32 router weight; then an fp8 weight without scales."""
    state = {PREFIX + k: v.bfloat16() for k, v in random_moe_state_dict(TINY, seed=1).items()}
    config = hf_config_dict(TINY, num_hidden_layers=2, first_k_dense_replace=1, intermediate_size=64)
    (tmp_path / "config.json").write_text(json.dumps(config))
    bad = dict(state, **{PREFIX + "gate.weight": torch.zeros(8, 64, dtype=torch.int32)})
    save_file(bad, tmp_path / "model.safetensors")
    with pytest.raises(CheckpointError, match=rf"tensor '{PREFIX}gate\.weight' in model\.safetensors has dtype I32"):
        open_moe_layer(tmp_path, 1)
    unscaled = dict(state, **{PREFIX + "experts.0.down_proj.weight": torch.zeros(64, 32).to(torch.float8_e4m3fn)})
    save_file(unscaled, tmp_path / "model.safetensors")
    with pytest.raises(
        CheckpointError,
        match=rf"fp8 tensor '{PREFIX}experts\.0\.down_proj\.weight' in model\.safetensors has no block scales",
    ):
        open_moe_layer(tmp_path, 1)


def test_dense_and_absent_layers_are_refused(tmp_path):
    write(tmp_path)
    with pytest.raises(DenseLayerError, match="layer 0 of checkpoint .* is a dense MLP layer, not MoE"):
        open_moe_layer(tmp_path, 0)
    with pytest.raises(CheckpointError, match=r"layer 4 is not in checkpoint .* \(it holds layers 0\.\.1\)"):
        open_moe_layer(tmp_path, 4)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match="has no config.json"):
        open_moe_layer(tmp_path / "empty", 1)


@pytest.fixture
def demo_checkpoint(tmp_path, monkeypatch):
    monkeypatch.setenv("TTNN_MOE_WEIGHT_CACHE", str(tmp_path / "weight-cache"))
    write_random_checkpoint(tmp_path / "ckpt", TINY_8_COLUMNS, num_hidden_layers=3, first_k_dense_replace=1)
    return tmp_path / "ckpt"


def test_demo_runs_a_checkpoint_layer_and_reports_the_cache(demo_checkpoint, capsys):
    args = ["--checkpoint", str(demo_checkpoint), "--layer", "2", "--mesh", "t3k", "--tokens", "8"]
    assert demo.main(args) == 0
    first = capsys.readouterr().err
    # 8 devices x 2 shards (the fused w1_w3 and w2)
    assert "H=256, I=32, E=16, K=4" in first and "16 device expert shards converted, 0 from the cache" in first
    pcc_line = next(line for line in first.splitlines() if "PCC mesh vs reference_moe" in line)
    assert float(pcc_line.split("reference_moe: ")[1].split()[0]) >= LAYER_PCC_FLOOR["bfloat16"]
    assert demo.main(args) == 0
    assert "0 device expert shards converted, 16 from the cache" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--layer", "0"], "layer 0 of checkpoint"),
        (["--layer", "9"], "layer 9 is not in checkpoint"),
        (["--layer", "1", "--mesh", "dual"], "mesh 8x8 cannot hold layer 1"),
        ([], "--checkpoint needs --layer N"),
    ],
)
def test_demo_says_what_is_wrong_in_one_line(demo_checkpoint, capsys, args, message):
    assert demo.main(["--checkpoint", str(demo_checkpoint), *args]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]


def test_demo_names_a_missing_tensor_in_one_line(demo_checkpoint, capsys):
    name = "model.layers.1.mlp.shared_experts.up_proj.weight"
    rewrite_index(demo_checkpoint, lambda weight_map: weight_map.pop(name))
    assert demo.main(["--checkpoint", str(demo_checkpoint), "--layer", "1", "--mesh", "t3k"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and f"tensor '{name}' is missing" in lines[0]
