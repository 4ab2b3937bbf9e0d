"""Weights of one DeepSeek-V3 MoE layer: loading any checkpoint layout into one normalized dict.

Accepted layouts (keys below `prefix`, e.g. "model.layers.3.mlp."):
- per-expert, bf16/fp32: `experts.{e}.{gate,up,down}_proj.weight`;
- per-expert float8_e4m3fn (the official checkpoint): the same keys plus
  `<key>_scale_inv` 128x128 block scales (see fp8.py);
- transformers 5.x fused: `experts.gate_up_proj` (E, 2I, H), rows [0, I) the gate
  projection and [I, 2I) the up projection (DeepseekV3Experts chunks the product
  in that order), and `experts.down_proj` (E, H, I).
In every layout: `gate.weight` (E, H), `gate.e_score_correction_bias` (E,),
`shared_experts.{gate,up,down}_proj.weight`.

The normalized dict (what `reference.py` reads) has the per-expert keys without
prefix, nn.Linear layout (out, in): gate/up (I, H), down (H, I); the bias is fp32.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

import torch
from ttnn_moe._C import weights as _weights

from models.deepseek_v3.config import DeepseekV3MoEConfig
from models.deepseek_v3.fp8 import FP8_DTYPE, dequantize_fp8_blockwise, quantize_fp8_blockwise

__all__ = ["RandomMoELayer", "load_moe_layer", "random_moe_state_dict", "quantize_fp8_blockwise"]

_PROJECTIONS = ("gate_proj", "up_proj", "down_proj")
SCALE_SUFFIX = "_scale_inv"


def _expert_shapes(hidden: int, intermediate: int) -> dict[str, tuple[int, int]]:
    return {"gate_proj": (intermediate, hidden), "up_proj": (intermediate, hidden), "down_proj": (hidden, intermediate)}


class _LayerReader:
    """Reads the keys of one layer below a prefix, dequantizing fp8, and tracks which keys were used."""

    def __init__(self, state_dict: Mapping[str, torch.Tensor], prefix: str):
        self.prefix = prefix
        self.tensors = {key[len(prefix) :]: value for key, value in state_dict.items() if key.startswith(prefix)}
        self.used: set[str] = set()

    def has(self, name: str) -> bool:
        return name in self.tensors

    def take(self, name: str, shape: tuple[int, ...]) -> torch.Tensor:
        """The tensor `name` checked against `shape`; fp8 is dequantized to fp32 with `<name>_scale_inv`."""
        key = self.prefix + name
        if name not in self.tensors:
            raise ValueError(f"missing weight {key!r}")
        tensor = self.tensors[name]
        self.used.add(name)
        if not isinstance(tensor, torch.Tensor) or not tensor.is_floating_point():
            kind = tensor.dtype if isinstance(tensor, torch.Tensor) else type(tensor).__name__
            raise TypeError(f"weight {key!r} must be a float tensor, got {kind}")
        if tuple(tensor.shape) != shape:
            raise ValueError(f"weight {key!r} must have shape {shape}, got {tuple(tensor.shape)}")
        if tensor.dtype != FP8_DTYPE:
            return tensor
        scale_name = name + SCALE_SUFFIX
        if scale_name not in self.tensors:
            raise ValueError(f"fp8 weight {key!r} has no block scales {self.prefix + scale_name!r}")
        self.used.add(scale_name)
        try:
            return dequantize_fp8_blockwise(tensor, self.tensors[scale_name])
        except ValueError as error:
            raise ValueError(f"{self.prefix + scale_name!r}: {error}") from None

    def check_all_used(self) -> None:
        unused = sorted(self.prefix + name for name in self.tensors if name not in self.used)
        if unused:
            raise ValueError(
                f"unexpected weights for this MoE layer config: {unused[:8]}"
                + (f" and {len(unused) - 8} more" if len(unused) > 8 else "")
            )


def load_moe_layer(
    state_dict: Mapping[str, torch.Tensor],
    config: DeepseekV3MoEConfig,
    *,
    prefix: str = "",
    dtype: torch.dtype | None = None,
) -> Mapping[str, torch.Tensor]:
    """Normalized weights of the MoE layer whose keys start with `prefix` (a `RandomMoELayer` of `config`, without
    prefix or dtype, is already normalized: itself).

    Shapes are checked against `config`; a missing, misshapen or unexpected key raises
    ValueError naming it. fp8 weights come out as fp32; `dtype`, if given, converts every
    weight except the score-correction bias (always fp32).
    """
    if isinstance(state_dict, RandomMoELayer) and not prefix and dtype is None and state_dict.config == config:
        # Already normalized, with this config's shapes; returned as is, so that its tensors are still generated
        # one at a time when looked up (a full-size layer is tens of GB).
        return state_dict
    E, H, I = config.n_routed_experts, config.hidden_size, config.moe_intermediate_size
    reader = _LayerReader(state_dict, prefix)
    layer = {
        "gate.weight": reader.take("gate.weight", (E, H)),
        "gate.e_score_correction_bias": reader.take("gate.e_score_correction_bias", (E,)).float(),
    }

    if reader.has("experts.gate_up_proj"):
        gate_up = reader.take("experts.gate_up_proj", (E, 2 * I, H))  # (E, 2I, H)
        down = reader.take("experts.down_proj", (E, H, I))  # (E, H, I)
        for e in range(E):
            layer[f"experts.{e}.gate_proj.weight"] = gate_up[e, :I]  # (I, H)
            layer[f"experts.{e}.up_proj.weight"] = gate_up[e, I:]  # (I, H)
            layer[f"experts.{e}.down_proj.weight"] = down[e]  # (H, I)
    else:
        for e in range(E):
            for proj, shape in _expert_shapes(H, I).items():
                name = f"experts.{e}.{proj}.weight"
                layer[name] = reader.take(name, shape)

    for proj, shape in _expert_shapes(H, config.shared_intermediate_size).items():
        name = f"shared_experts.{proj}.weight"
        layer[name] = reader.take(name, shape)

    reader.check_all_used()
    if dtype is not None:
        layer = {
            name: tensor if name == "gate.e_score_correction_bias" else tensor.to(dtype)
            for name, tensor in layer.items()
        }
    return layer


def tensor_seed(seed: int, key: str) -> int:
    """A 32-bit seed for one tensor (torch's CPU generator keeps only 32 bits of its seed)."""
    return int.from_bytes(hashlib.blake2b(f"{seed}:{key}".encode(), digest_size=4).digest(), "little")


class RandomMoELayer(Mapping):
    """Reproducible random weights of one MoE layer in the normalized layout, each tensor generated
    when it is looked up, from its own seed: code that touches one expert at a time (the device
    upload, `reference.reference_moe`) holds one expert at a time, so a full-size layer never
    exists on the host at once.

    Matrices are N(0, 1/fan_in) (`ttnn_moe._C.weights.random_normal`: a 1024-bin piecewise-uniform
    normal), so activations keep unit scale through every projection; the router's `gate.weight`
    holds bf16 values whatever `dtype` (a checkpoint stores it in bf16); the
    score-correction bias is N(0, 0.01^2) fp32, the size of the gaps between neighbouring sigmoid
    scores, so it changes some routing choices. A tensor's values depend only on (seed, its key).
    """

    def __init__(self, config: DeepseekV3MoEConfig, seed: int, dtype: torch.dtype = torch.bfloat16):
        if not isinstance(seed, int) or not 0 <= seed < 2**31:
            raise ValueError(f"seed must be an integer in [0, 2**31), got {seed!r}")
        self.config, self.seed, self.dtype = config, seed, dtype
        E, H, I = config.n_routed_experts, config.hidden_size, config.moe_intermediate_size
        self._shapes: dict[str, tuple[int, ...]] = {"gate.weight": (E, H), "gate.e_score_correction_bias": (E,)}
        for e in range(E):
            self._shapes |= {f"experts.{e}.{p}.weight": shape for p, shape in _expert_shapes(H, I).items()}
        shared = _expert_shapes(H, config.shared_intermediate_size)
        self._shapes |= {f"shared_experts.{p}.weight": shape for p, shape in shared.items()}

    def __iter__(self):
        return iter(self._shapes)

    def __len__(self) -> int:
        return len(self._shapes)

    def __contains__(self, key: object) -> bool:
        return key in self._shapes

    def __getitem__(self, key: str) -> torch.Tensor:
        shape = self._shapes[key]
        seed = tensor_seed(self.seed, key)
        if key == "gate.e_score_correction_bias":
            return 0.01 * torch.randn(shape, generator=torch.Generator().manual_seed(seed))
        # The matrices (billions of values at full size) come from the native counter-based
        # generator on both cores; a float32 layer holds the same values before bf16 rounding,
        # except the router's weight, bf16 values in every layer as in a checkpoint.
        as_bf16 = self.dtype == torch.bfloat16 or key == "gate.weight"
        values = torch.from_numpy(
            _weights.random_normal(seed, shape[0] * shape[1], shape[1] ** -0.5, "bfloat16" if as_bf16 else "float32")
        )
        values = values.view(torch.bfloat16) if as_bf16 else values
        return values.to(self.dtype).reshape(shape)

    def fingerprint(self) -> str:
        """Identity of these weights (for the converted-weight cache)."""
        return f"random-v2:seed{self.seed}:{self.config}:{self.dtype}"  # v: the generator scheme


def random_moe_state_dict(
    config: DeepseekV3MoEConfig, seed: int, dtype: torch.dtype = torch.bfloat16
) -> dict[str, torch.Tensor]:
    """`RandomMoELayer`'s weights, all of them in one dict."""
    return dict(RandomMoELayer(config, seed, dtype).items())
