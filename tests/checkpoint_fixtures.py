"""Tiny DeepSeek-V3 checkpoints for the checkpoint tests, and an independent reader of them.

TINY fits a 2x2 mesh and every demo mesh's 8 columns is too much for it; TINY_8_COLUMNS fits the
demo meshes (hidden and shared intermediate 256 = 8 columns x one tile).
"""

import json
from pathlib import Path

import torch
from safetensors.torch import load_file

from models.deepseek_v3.config import DeepseekV3MoEConfig

TINY = DeepseekV3MoEConfig(
    hidden_size=64, moe_intermediate_size=32, n_routed_experts=8, num_experts_per_tok=2, n_group=4, topk_group=2,
    n_shared_experts=2,
)  # fmt: skip
TINY_8_COLUMNS = DeepseekV3MoEConfig(
    hidden_size=256, moe_intermediate_size=32, n_routed_experts=16, num_experts_per_tok=4, n_group=4, topk_group=2,
    n_shared_experts=8,
)  # fmt: skip


def raw_tensors(path: Path) -> dict[str, torch.Tensor]:
    """Every tensor of a checkpoint directory, read whole with safetensors' plain loader."""
    tensors = {}
    for file in sorted(Path(path).glob("*.safetensors")):
        tensors.update(load_file(str(file)))
    return tensors


def hand_dequantize(w8: torch.Tensor, scale_inv: torch.Tensor) -> torch.Tensor:
    """Block by block: W[i, j] = float(W8[i, j]) * scale_inv[i // 128, j // 128]."""
    out = torch.empty(w8.shape)
    for bi in range(scale_inv.shape[0]):
        for bj in range(scale_inv.shape[1]):
            rows, cols = slice(128 * bi, 128 * (bi + 1)), slice(128 * bj, 128 * (bj + 1))
            out[rows, cols] = w8[rows, cols].float() * scale_inv[bi, bj]
    return out


def dequantized_layer(path: Path, layer: int) -> dict[str, torch.Tensor]:
    """A layer's normalized state dict from the raw files: fp8 weights dequantized by hand, fp32."""
    prefix = f"model.layers.{layer}.mlp."
    raw = {k[len(prefix) :]: v for k, v in raw_tensors(path).items() if k.startswith(prefix)}
    layer_dict = {}
    for name, tensor in raw.items():
        if name.endswith("_scale_inv"):
            continue
        if tensor.dtype == torch.float8_e4m3fn:
            tensor = hand_dequantize(tensor, raw[name + "_scale_inv"])
        layer_dict[name] = tensor.float()
    return layer_dict


def rewrite_index(path: Path, edit) -> None:
    index_file = Path(path) / "model.safetensors.index.json"
    index = json.loads(index_file.read_text())
    edit(index["weight_map"])
    index_file.write_text(json.dumps(index))
