"""One MoE layer of a safetensors checkpoint as a lazy state dict.

`open_moe_layer(path, layer)` checks everything the checkpoint's headers can tell (every tensor
of `model.layers.{layer}.mlp.` is there, with the shape and dtype the config implies, and nothing
else is) and returns a `CheckpointMoELayer`: a read-only mapping with the normalized keys of
`weights.load_moe_layer` (`gate.weight`, `gate.e_score_correction_bias`,
`experts.{e}.{gate,up,down}_proj.weight`, `shared_experts.{...}.weight`) whose values are read
from the memory-mapped files only when looked up, fp8 dequantized block by block to fp32. Code
that takes a state dict and touches only some experts (`reference.reference_moe`, the device
weight upload) therefore holds one expert at a time.

Accepted layouts below the prefix:
- official DeepSeek-V3: `experts.{e}.{proj}.weight` float8_e4m3fn plus `weight_scale_inv`
  (one fp32 scale per `quantization_config.weight_block_size` block, 128x128), the same for
  `shared_experts`; `gate.weight` bf16, `gate.e_score_correction_bias` fp32;
- transformers `save_pretrained`: the same names in bf16 (or fp32) without scales;
- transformers' fused expert tensors `experts.gate_up_proj` (E, 2I, H) and `experts.down_proj`
  (E, H, I), read one expert's slice at a time.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Iterator

import torch

from models.deepseek_v3.checkpoint import CheckpointError, SafetensorsCheckpoint
from models.deepseek_v3.config import DeepseekV3MoEConfig
from models.deepseek_v3.fp8 import FP8_BLOCK, FP8_DTYPE, dequantize_fp8_blockwise, fp8_scale_shape
from models.deepseek_v3.weights import SCALE_SUFFIX

PROJECTIONS = ("gate_proj", "up_proj", "down_proj")
FLOAT_DTYPES = (torch.bfloat16, torch.float16, torch.float32)
MATRIX_DTYPES = (FP8_DTYPE, *FLOAT_DTYPES)


class DenseLayerError(CheckpointError):
    """The layer asked for is a dense MLP, not a MoE layer."""


def layer_prefix(layer: int) -> str:
    return f"model.layers.{layer}.mlp."


def _mlp_shapes(hidden: int, intermediate: int) -> dict[str, tuple[int, int]]:
    return {"gate_proj": (intermediate, hidden), "up_proj": (intermediate, hidden), "down_proj": (hidden, intermediate)}


def moe_config_of(checkpoint: SafetensorsCheckpoint) -> DeepseekV3MoEConfig:
    """The MoE dimensions of the checkpoint's config.json."""
    try:
        return DeepseekV3MoEConfig.from_hf_config(checkpoint.config)
    except (TypeError, ValueError) as error:
        raise CheckpointError(f"{checkpoint.path / 'config.json'}: {error}") from None


def _block_size(checkpoint: SafetensorsCheckpoint) -> tuple[int, int]:
    quantization = checkpoint.config.get("quantization_config") or {}
    block = quantization.get("weight_block_size", FP8_BLOCK)
    if not (isinstance(block, (list, tuple)) and len(block) == 2 and all(isinstance(b, int) and b > 0 for b in block)):
        raise CheckpointError(
            f"{checkpoint.path / 'config.json'}: weight_block_size must be two positive ints, got {block!r}"
        )
    return tuple(block)


def check_moe_layer_index(checkpoint: SafetensorsCheckpoint, layer: int) -> None:
    """CheckpointError if `layer` is not in the checkpoint, DenseLayerError if it is a dense MLP
    (DeepSeek-V3's first `first_k_dense_replace` layers, and layers off `moe_layer_freq`)."""
    if isinstance(layer, bool) or not isinstance(layer, int) or layer < 0:
        raise CheckpointError(f"layer must be a non-negative int, got {layer!r}")
    if not checkpoint.names(f"model.layers.{layer}."):
        layers = sorted({int(name.split(".")[2]) for name in checkpoint.names("model.layers.")})
        held = f"layers {layers[0]}..{layers[-1]}" if layers else "no layers"
        raise CheckpointError(f"layer {layer} is not in checkpoint {str(checkpoint.path)!r} (it holds {held})")
    first_moe = checkpoint.config.get("first_k_dense_replace", 0)
    frequency = checkpoint.config.get("moe_layer_freq", 1)
    prefix = layer_prefix(layer)
    dense_by_config = layer < first_moe or layer % frequency != 0
    dense_by_tensors = not checkpoint.has(prefix + "gate.weight") and checkpoint.has(prefix + "gate_proj.weight")
    if dense_by_config or dense_by_tensors:
        raise DenseLayerError(
            f"layer {layer} of checkpoint {str(checkpoint.path)!r} is a dense MLP layer, not MoE "
            f"(first_k_dense_replace={first_moe}, moe_layer_freq={frequency}): choose a MoE layer"
        )


class CheckpointMoELayer(Mapping):
    """The normalized state dict of one MoE layer, read lazily from a checkpoint."""

    def __init__(self, checkpoint: SafetensorsCheckpoint, layer: int, config: DeepseekV3MoEConfig):
        self.checkpoint, self.layer, self.config = checkpoint, layer, config
        self.prefix = layer_prefix(layer)
        self.block = _block_size(checkpoint)
        E, H, I = config.n_routed_experts, config.hidden_size, config.moe_intermediate_size
        self.fused = checkpoint.has(self.prefix + "experts.gate_up_proj")
        self._stored: dict[str, str] = {}  # normalized key -> stored name
        self._expected: set[str] = set()  # every stored name this layer reads (incl. scales)
        self._expect("gate.weight", (E, H), FLOAT_DTYPES)
        self._expect("gate.e_score_correction_bias", (E,), FLOAT_DTYPES)
        if self.fused:
            self._expect("experts.gate_up_proj", (E, 2 * I, H), FLOAT_DTYPES, key=None)
            self._expect("experts.down_proj", (E, H, I), FLOAT_DTYPES, key=None)
            for e in range(E):
                for proj in PROJECTIONS:
                    self._stored[f"experts.{e}.{proj}.weight"] = "fused"
        else:
            for e in range(E):
                for proj, shape in _mlp_shapes(H, I).items():
                    self._expect(f"experts.{e}.{proj}.weight", shape, MATRIX_DTYPES)
        for proj, shape in _mlp_shapes(H, config.shared_intermediate_size).items():
            self._expect(f"shared_experts.{proj}.weight", shape, MATRIX_DTYPES)
        unexpected = sorted(set(checkpoint.names(self.prefix)) - self._expected)
        if unexpected:
            where = checkpoint.file_of(unexpected[0]).name
            raise CheckpointError(
                f"unexpected tensor {unexpected[0]!r} in {where} for a MoE layer of this config"
                + (f" (and {len(unexpected) - 1} more)" if len(unexpected) > 1 else "")
            )

    def _expect(self, name: str, shape: tuple[int, ...], dtypes, key: str | None = "") -> None:
        stored = self.prefix + name
        if not self.checkpoint.has(stored):
            raise CheckpointError(f"tensor {stored!r} is missing from checkpoint {str(self.checkpoint.path)!r}")
        dtype = self.checkpoint.check(stored, shape, dtypes)
        self._expected.add(stored)
        if key is not None:
            self._stored[name] = stored
        if dtype == FP8_DTYPE:
            scale = stored + SCALE_SUFFIX
            if not self.checkpoint.has(scale):
                raise CheckpointError(
                    f"fp8 tensor {stored!r} in {self.checkpoint.file_of(stored).name} has no block scales {scale!r}"
                )
            self.checkpoint.check(scale, fp8_scale_shape(shape, self.block), (torch.float32,))
            self._expected.add(scale)

    # --- Mapping ------------------------------------------------------------------------------
    def __iter__(self) -> Iterator[str]:
        return iter(self._stored)

    def __len__(self) -> int:
        return len(self._stored)

    def __contains__(self, key: object) -> bool:
        return key in self._stored

    def __getitem__(self, key: str) -> torch.Tensor:
        if key not in self._stored:
            raise KeyError(key)
        if self._stored[key] == "fused":
            return self._fused_slice(key)
        stored = self._stored[key]
        tensor = self.checkpoint.read(stored)
        if key == "gate.e_score_correction_bias":
            return tensor.float()
        if tensor.dtype == FP8_DTYPE:
            return dequantize_fp8_blockwise(tensor, self.checkpoint.read(stored + SCALE_SUFFIX), self.block)
        return tensor

    def _fused_slice(self, key: str) -> torch.Tensor:
        """One expert's projection out of the fused (E, 2I, H) / (E, H, I) tensors: gate rows first."""
        _, e, proj, _ = key.split(".")
        I = self.config.moe_intermediate_size
        if proj == "down_proj":
            return self.checkpoint.read(self.prefix + "experts.down_proj", int(e))  # (H, I)
        rows = slice(0, I) if proj == "gate_proj" else slice(I, 2 * I)
        return self.checkpoint.read(self.prefix + "experts.gate_up_proj", (int(e), rows))  # (I, H)

    def fingerprint(self) -> str:
        """Identity of the layer's source: the checkpoint's fingerprint and the layer index."""
        return f"{self.checkpoint.fingerprint()}:layer{self.layer}"


def open_moe_layer(checkpoint: str | Path | SafetensorsCheckpoint, layer: int) -> CheckpointMoELayer:
    """The MoE layer `layer` of a checkpoint, checked against its config.json (see module doc)."""
    if not isinstance(checkpoint, SafetensorsCheckpoint):
        checkpoint = SafetensorsCheckpoint(checkpoint)
    check_moe_layer_index(checkpoint, layer)
    return CheckpointMoELayer(checkpoint, layer, moe_config_of(checkpoint))
