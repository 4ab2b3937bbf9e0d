"""DeepSeek-V3 MoE layer configuration and the mesh presets it runs on.

Field names and defaults are those of the official DeepSeek-V3 `config.json`,
so `DeepseekV3MoEConfig.from_hf_config(json.load(f))` reads a real checkpoint's
config unchanged.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

# Mesh name -> (rows, cols). Rows are the data-parallel / dispatch axis (0),
# columns the tensor-parallel axis (1).
MESH_PRESETS: dict[str, tuple[int, int]] = {
    "t3k": (1, 8),
    "tg": (4, 8),
    "galaxy": (4, 8),
    "dual": (8, 8),
    "quad": (16, 8),
}

# Mesh name -> the tt-fabric topology its hardware runs the dispatch line on (ttnn.Topology name).
# A QUAD is wired as a torus: tt-metal's DeepSeek-V3 opens it with FABRIC_1D_RING (its QUAD runs set
# USE_TORUS_MODE=1, which selects that config, and its QUAD-only MoE refuses any fabric but a ring),
# so each column of 16 devices is a ring. The other meshes run FABRIC_1D, a line.
MESH_FABRIC_TOPOLOGY: dict[str, str] = {name: "Ring" if name == "quad" else "Linear" for name in MESH_PRESETS}

SUPPORTED_SCORING_FUNCS = ("sigmoid",)
SUPPORTED_TOPK_METHODS = ("noaux_tc",)


def mesh_shape(name: str) -> tuple[int, int]:
    """(rows, cols) of a named mesh; ValueError for an unknown name."""
    if name not in MESH_PRESETS:
        raise ValueError(f"unknown mesh {name!r}; known meshes: {sorted(MESH_PRESETS)}")
    return MESH_PRESETS[name]


@dataclass(frozen=True)
class DeepseekV3MoEConfig:
    hidden_size: int = 7168
    moe_intermediate_size: int = 2048
    n_routed_experts: int = 256
    num_experts_per_tok: int = 8
    n_group: int = 8
    topk_group: int = 4
    routed_scaling_factor: float = 2.5
    norm_topk_prob: bool = True
    n_shared_experts: int = 1
    scoring_func: str = "sigmoid"
    topk_method: str = "noaux_tc"

    def __post_init__(self) -> None:
        for name in (
            "hidden_size",
            "moe_intermediate_size",
            "n_routed_experts",
            "num_experts_per_tok",
            "n_group",
            "topk_group",
            "n_shared_experts",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, got {value!r}")
            if value <= 0:
                raise ValueError(f"{name} must be positive, got {value}")
        if isinstance(self.routed_scaling_factor, bool) or not isinstance(self.routed_scaling_factor, (int, float)):
            raise TypeError(f"routed_scaling_factor must be a number, got {self.routed_scaling_factor!r}")
        if not isinstance(self.norm_topk_prob, bool):
            raise TypeError(f"norm_topk_prob must be a bool, got {self.norm_topk_prob!r}")
        if self.scoring_func not in SUPPORTED_SCORING_FUNCS:
            raise ValueError(
                f"scoring_func={self.scoring_func!r} is not supported; supported: {SUPPORTED_SCORING_FUNCS}"
            )
        if self.topk_method not in SUPPORTED_TOPK_METHODS:
            raise ValueError(f"topk_method={self.topk_method!r} is not supported; supported: {SUPPORTED_TOPK_METHODS}")
        if self.n_routed_experts % self.n_group != 0:
            raise ValueError(f"n_routed_experts={self.n_routed_experts} is not divisible by n_group={self.n_group}")
        if self.topk_group > self.n_group:
            raise ValueError(f"topk_group={self.topk_group} exceeds n_group={self.n_group}")
        # Group scores sum the top-2 biased scores of a group, so a group needs 2 experts.
        if self.experts_per_group < 2:
            raise ValueError(
                f"n_routed_experts={self.n_routed_experts} / n_group={self.n_group} leaves "
                f"{self.experts_per_group} expert per group; group scoring needs at least 2"
            )
        selectable = self.topk_group * self.experts_per_group
        if self.num_experts_per_tok > selectable:
            raise ValueError(
                f"num_experts_per_tok={self.num_experts_per_tok} exceeds the {selectable} experts in "
                f"topk_group={self.topk_group} groups of n_routed_experts/n_group="
                f"{self.n_routed_experts}/{self.n_group}"
            )

    @property
    def experts_per_group(self) -> int:
        return self.n_routed_experts // self.n_group

    @property
    def shared_intermediate_size(self) -> int:
        """The shared experts run as one SwiGLU MLP this wide."""
        return self.moe_intermediate_size * self.n_shared_experts

    @classmethod
    def from_hf_config(cls, hf_config: Mapping[str, Any] | Any) -> "DeepseekV3MoEConfig":
        """Reads the MoE fields of a DeepSeek-V3 config.json dict (or a transformers config);
        unrelated keys (attention, vocab, quantization, ...) are ignored, missing ones keep the default."""
        if hasattr(hf_config, "to_dict"):
            hf_config = hf_config.to_dict()
        if not isinstance(hf_config, Mapping):
            raise TypeError(f"hf_config must be a mapping or a transformers config, got {type(hf_config).__name__}")
        names = {field.name for field in dataclasses.fields(cls)}
        return cls(**{key: value for key, value in hf_config.items() if key in names})

    @classmethod
    def mini(cls, **overrides: Any) -> "DeepseekV3MoEConfig":
        """Scaled config for tests and the default demo: same expert count, top-k and
        group routing as DeepSeek-V3, small matrices.

        hidden 256 = 8 TP columns x one 32-wide tile each. Four shared experts of
        intermediate 64 give a shared MLP of width 256, which also splits into
        one tile per TP column (one shared expert of 64 would not).
        """
        sizes = dict(hidden_size=256, moe_intermediate_size=64, n_shared_experts=4)
        sizes.update(overrides)
        return cls(**sizes)
