"""Writes checkpoints in the official DeepSeek-V3 layout: sharded safetensors, fp8 MLP weights.

The layout `checkpoint_layer.open_moe_layer` reads: `config.json` (with the official
`quantization_config`: fp8 e4m3, dynamic activations, 128x128 weight blocks),
`model-0000k-of-0000N.safetensors` shards and `model.safetensors.index.json`. Every MLP
projection matrix (`*_proj.weight`) is stored float8_e4m3fn with its `weight_scale_inv` block
scales, the router `gate.weight` bf16, its `e_score_correction_bias` fp32.

Tensors are consumed from an iterator and a shard is written as soon as it is full, so a
checkpoint of any size is written holding one shard at a time. `write_random_checkpoint`
generates a model's MLP layers expert by expert from a seed (for tests, the demo and
benchmarks); it writes only the MLP tensors, not attention or embeddings.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterable, Iterator, Mapping

import torch
from safetensors.torch import save_file

from models.deepseek_v3.checkpoint import CONFIG_FILE, INDEX_FILE
from models.deepseek_v3.checkpoint_layer import PROJECTIONS, SCALE_SUFFIX, layer_prefix
from models.deepseek_v3.config import DeepseekV3MoEConfig
from models.deepseek_v3.fp8 import FP8_BLOCK, quantize_fp8_blockwise

DEFAULT_SHARD_BYTES = 1 << 30
QUANTIZATION_CONFIG = {
    "activation_scheme": "dynamic",
    "fmt": "e4m3",
    "quant_method": "fp8",
    "weight_block_size": list(FP8_BLOCK),
}


def hf_config_dict(
    config: DeepseekV3MoEConfig, *, num_hidden_layers: int, first_k_dense_replace: int, intermediate_size: int
) -> dict:
    """config.json of a DeepSeek-V3 model with these MoE dimensions (the MoE and layer-plan fields)."""
    return {
        "architectures": ["DeepseekV3ForCausalLM"],
        "model_type": "deepseek_v3",
        "hidden_size": config.hidden_size,
        "intermediate_size": intermediate_size,
        "moe_intermediate_size": config.moe_intermediate_size,
        "n_routed_experts": config.n_routed_experts,
        "n_shared_experts": config.n_shared_experts,
        "num_experts_per_tok": config.num_experts_per_tok,
        "n_group": config.n_group,
        "topk_group": config.topk_group,
        "routed_scaling_factor": config.routed_scaling_factor,
        "norm_topk_prob": config.norm_topk_prob,
        "scoring_func": config.scoring_func,
        "topk_method": config.topk_method,
        "num_hidden_layers": num_hidden_layers,
        "first_k_dense_replace": first_k_dense_replace,
        "moe_layer_freq": 1,
        "torch_dtype": "bfloat16",
    }


def _stored_form(name: str, tensor: torch.Tensor) -> Iterator[tuple[str, torch.Tensor]]:
    """How the official checkpoint stores a tensor: projections fp8 + scales, router bf16, bias fp32."""
    if name.endswith("_proj.weight"):
        w8, scale_inv = quantize_fp8_blockwise(tensor)
        yield name, w8
        yield name + SCALE_SUFFIX, scale_inv
    elif name.endswith("e_score_correction_bias"):
        yield name, tensor.float()
    else:
        yield name, tensor.to(torch.bfloat16)


def write_official_checkpoint(
    path: str | Path,
    hf_config: Mapping,
    tensors: Iterable[tuple[str, torch.Tensor]],
    *,
    max_shard_bytes: int = DEFAULT_SHARD_BYTES,
) -> None:
    """Writes `tensors` (full names, fp32/bf16 values in nn.Linear layout) in the official layout."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    shard: dict[str, torch.Tensor] = {}
    shard_bytes, written, weight_map, total = 0, [], {}, 0

    def flush() -> None:
        nonlocal shard, shard_bytes
        if shard:
            partial = path / f"shard-{len(written)}.partial"
            save_file(shard, str(partial), metadata={"format": "pt"})
            written.append((partial, list(shard)))
            shard, shard_bytes = {}, 0

    for name, tensor in tensors:
        for stored_name, stored in _stored_form(name, tensor):
            if stored_name in weight_map or stored_name in shard:
                raise ValueError(f"tensor {stored_name!r} is written twice")
            size = stored.numel() * stored.element_size()
            if shard and shard_bytes + size > max_shard_bytes:
                flush()
            shard[stored_name] = stored.contiguous()
            shard_bytes += size
            total += size
    flush()

    for k, (partial, names) in enumerate(written):
        final = f"model-{k + 1:05d}-of-{len(written):05d}.safetensors"
        os.replace(partial, path / final)
        weight_map.update({name: final for name in names})
    index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
    (path / INDEX_FILE).write_text(json.dumps(index, indent=2))
    (path / CONFIG_FILE).write_text(json.dumps({**hf_config, "quantization_config": QUANTIZATION_CONFIG}, indent=2))


def moe_layer_tensors(state_dict: Mapping[str, torch.Tensor], layer: int) -> Iterator[tuple[str, torch.Tensor]]:
    """A normalized MoE state dict (`weights.load_moe_layer` keys) under layer `layer`'s names."""
    for name, tensor in state_dict.items():
        yield layer_prefix(layer) + name, tensor


def _random_matrix(rows: int, cols: int, seed: int) -> torch.Tensor:
    """N(0, 1/cols): activations keep unit scale through the projection."""
    return torch.randn(rows, cols, generator=torch.Generator().manual_seed(seed)) / cols**0.5


def random_layer_tensors(
    config: DeepseekV3MoEConfig, layer: int, *, dense: bool, intermediate_size: int, seed: int
) -> Iterator[tuple[str, torch.Tensor]]:
    """Random weights of one MLP layer, one matrix at a time, each from its own seed (so any
    expert can be regenerated alone): a dense SwiGLU MLP, or router + experts + shared experts."""
    H, I, E = config.hidden_size, config.moe_intermediate_size, config.n_routed_experts
    prefix = layer_prefix(layer)
    base = (seed * 1000 + layer) * 4 * (E + 2)

    def mlp(name: str, intermediate: int, slot: int) -> Iterator[tuple[str, torch.Tensor]]:
        shapes = {"gate_proj": (intermediate, H), "up_proj": (intermediate, H), "down_proj": (H, intermediate)}
        for p, proj in enumerate(PROJECTIONS):
            yield f"{prefix}{name}{proj}.weight", _random_matrix(*shapes[proj], base + 4 * slot + p)

    if dense:
        yield from mlp("", intermediate_size, 0)
        return
    # Seed slots: 0 the router (a dense layer's MLP in a dense layer), 1 the shared experts, 2.. the experts.
    yield prefix + "gate.weight", _random_matrix(E, H, base)
    bias = 0.01 * torch.randn(E, generator=torch.Generator().manual_seed(base + 1))
    yield prefix + "gate.e_score_correction_bias", bias
    for e in range(E):
        yield from mlp(f"experts.{e}.", I, e + 2)
    yield from mlp("shared_experts.", config.shared_intermediate_size, 1)


def write_random_checkpoint(
    path: str | Path,
    config: DeepseekV3MoEConfig,
    *,
    num_hidden_layers: int = 2,
    first_k_dense_replace: int = 1,
    seed: int = 0,
    max_shard_bytes: int = DEFAULT_SHARD_BYTES,
) -> None:
    """A checkpoint in the official layout whose MLP layers hold seeded random weights: the first
    `first_k_dense_replace` layers dense (intermediate 2 x the MoE intermediate), the rest MoE."""
    intermediate = 2 * config.moe_intermediate_size
    hf_config = hf_config_dict(
        config,
        num_hidden_layers=num_hidden_layers,
        first_k_dense_replace=first_k_dense_replace,
        intermediate_size=intermediate,
    )

    def tensors() -> Iterator[tuple[str, torch.Tensor]]:
        for layer in range(num_hidden_layers):
            dense = layer < first_k_dense_replace
            yield from random_layer_tensors(config, layer, dense=dense, intermediate_size=intermediate, seed=seed)

    write_official_checkpoint(path, hf_config, tensors(), max_shard_bytes=max_shard_bytes)
