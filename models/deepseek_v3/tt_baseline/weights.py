"""The classic tt-metal flow's device weights, laid out as tt-metal's DeepSeek-V3 model keeps them.

- routed experts: device d (row-major) owns experts [d*E_l, (d+1)*E_l), the placement of our
  `ttnn_moe.expert_mapping`; w1 (gate) and w3 (up) as (1, E_l, H, I), w2 (down) as (1, E_l, I, H),
  TILE, in the expert dtype (tt-metal: bfloat4_b w1/w3, bfloat8_b w2), uploaded device by device;
- expert mapping (1, 1, E, R*C) uint16 one-hot, replicated, and the remap mask (1, R, 1, E) of ones
  that `moe_expert_token_remap` weighs the selected experts with;
- gate: the same fp32 weight and score-correction bias as `TtMoE`'s (routing is identical);
- shared expert, tensor parallel over the C columns as tt-metal's MLP: w1, w3 (H, Is/C) split by
  output column, w2 (Is/C, H) split by input row, bfloat16.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

from models.deepseek_v3.config import DeepseekV3MoEConfig
from models.deepseek_v3.tt.moe_weights import EXPERT_DTYPES, check_layer_fits_mesh
from models.deepseek_v3.tt.ttnn_api import ttnn, ttnn_moe

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class ClassicMoEWeights:
    expert_mapping: ttnn.Tensor  # (1, 1, E, D) uint16 ROW_MAJOR, replicated
    remap_topk_mask: ttnn.Tensor  # (1, R, 1, E) bfloat16 ROW_MAJOR ones, replicated
    w1: ttnn.Tensor  # (1, E_l, H, I) TILE per device
    w3: ttnn.Tensor  # (1, E_l, H, I) TILE per device
    w2: ttnn.Tensor  # (1, E_l, I, H) TILE per device
    gate_weight: ttnn.Tensor  # (E, H) float32 TILE, replicated
    gate_bias: ttnn.Tensor  # (1, E) float32 ROW_MAJOR, replicated
    shared_w1: ttnn.Tensor  # (H, Is/C) bfloat16 TILE, column c's slice
    shared_w3: ttnn.Tensor  # (H, Is/C)
    shared_w2: ttnn.Tensor  # (Is/C, H)

    @property
    def experts_per_device(self) -> int:
        return int(self.w2.shape[1])


def load_classic_weights(
    layer: Mapping[str, torch.Tensor], config: DeepseekV3MoEConfig, mesh_device: ttnn.MeshDevice, *, expert_dtype
) -> ClassicMoEWeights:
    """Device tensors of a normalized layer (`weights.load_moe_layer`) on `mesh_device`."""
    if expert_dtype not in EXPERT_DTYPES.values():
        raise ValueError(f"expert_dtype must be one of {', '.join(EXPERT_DTYPES)}, got {expert_dtype!r}")
    mesh_shape = tuple(mesh_device.shape)
    check_layer_fits_mesh(config, mesh_shape)
    rows, cols = mesh_shape
    D = mesh_device.get_num_devices()
    E, H, I = config.n_routed_experts, config.hidden_size, config.moe_intermediate_size
    E_l = E // D
    mapping = ttnn_moe.expert_mapping(E, D)  # (1, 1, E, D), expert e on device e // E_l

    def experts(projection: str, shape: tuple[int, int]) -> ttnn.Tensor:  # (1, E_l, *shape) per device
        tensor = ttnn.allocate_tensor_on_device(
            ttnn.Shape([1, E_l, *shape]), expert_dtype, ttnn.TILE_LAYOUT, mesh_device
        )
        for d, view in enumerate(ttnn.get_device_tensors(tensor)):
            pieces = [
                ttnn.from_torch(
                    layer[f"experts.{e}.{projection}.weight"].T.reshape(1, 1, *shape),
                    dtype=expert_dtype,
                    layout=ttnn.TILE_LAYOUT,
                )
                for e in range(d * E_l, (d + 1) * E_l)
            ]
            ttnn.copy_host_to_device_tensor(ttnn.concat(pieces, dim=1), view)
        return tensor

    def replicated(t: torch.Tensor, dtype, layout) -> ttnn.Tensor:
        return ttnn.from_torch(t, dtype=dtype, layout=layout, device=mesh_device)

    def tp_shard(t: torch.Tensor, dim: int) -> ttnn.Tensor:
        return ttnn.from_torch(
            t.contiguous(),
            dtype=ttnn.bfloat16,
            layout=ttnn.TILE_LAYOUT,
            device=mesh_device,
            mesh_mapper=ttnn.ShardTensor2dMesh(mesh_device, mesh_shape, dims=(None, dim)),
        )

    gate_bias = layer["gate.e_score_correction_bias"].float().reshape(1, -1)
    return ClassicMoEWeights(
        expert_mapping=replicated(mapping, ttnn.uint16, ttnn.ROW_MAJOR_LAYOUT),
        remap_topk_mask=replicated(gate_bias.new_ones(1, rows, 1, E), ttnn.bfloat16, ttnn.ROW_MAJOR_LAYOUT),
        w1=experts("gate_proj", (H, I)),
        w3=experts("up_proj", (H, I)),
        w2=experts("down_proj", (I, H)),
        gate_weight=replicated(layer["gate.weight"].float(), ttnn.float32, ttnn.TILE_LAYOUT),
        gate_bias=replicated(gate_bias, ttnn.float32, ttnn.ROW_MAJOR_LAYOUT),
        shared_w1=tp_shard(layer["shared_experts.gate_proj.weight"].T, dim=1),
        shared_w3=tp_shard(layer["shared_experts.up_proj.weight"].T, dim=1),
        shared_w2=tp_shard(layer["shared_experts.down_proj.weight"].T, dim=0),
    )
