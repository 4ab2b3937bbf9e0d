"""The optimized tt-metal flow's device weights, laid out as tt-metal's optimized DeepSeek-V3 MoE keeps them.

- routed experts: device d (row-major) owns experts [d*E_l, (d+1)*E_l), as in the classic flow; their W0 (gate),
  W1 (up) and W2 (down) prepared for moe_compute's matmul ring (prepare_w0_w1_tensor_for_moe_compute /
  prepare_w2_tensor_for_moe_compute) in bfloat4_b, the only expert format moe_compute reads, one shard per DRAM
  bank of each device;
- expert mapping (D, E) uint16: row d names the device of every expert, as every source device routes
  (tt-metal's `expert_mapping_tensor` of the optimized path), replicated;
- gate: the projection (H, E) bfloat16 and the score-correction bias broadcast to one row per token (B, E)
  bfloat16, as deepseek_grouped_gate takes it (the bias is a full tensor, not broadcast by the op);
- shared expert, tensor parallel over the C columns as tt-metal's MLP: w1, w3 (H, Is/C) split by output column,
  w2 (Is/C, H) split by input row, bfloat16.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from models.deepseek_v3.config import DeepseekV3MoEConfig
from models.deepseek_v3.tt.moe_weights import check_layer_fits_mesh
from models.deepseek_v3.tt.ttnn_api import ttnn

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class OptimizedMoEWeights:
    expert_mapping: ttnn.Tensor  # (D, E) uint16 ROW_MAJOR, replicated
    ring_weights: Sequence[Any]  # per device: its local experts prepared for moe_compute's ring
    experts_per_device: int
    gate_weight: ttnn.Tensor  # (H, E) bfloat16 TILE, replicated
    gate_bias: ttnn.Tensor  # (1, 1, B, E) bfloat16 TILE, replicated: the bias in every token's row
    shared_w1: ttnn.Tensor  # (H, Is/C) bfloat16 TILE, column c's slice
    shared_w3: ttnn.Tensor  # (H, Is/C)
    shared_w2: ttnn.Tensor  # (Is/C, H)


def load_optimized_weights(
    layer: Mapping[str, torch.Tensor],
    config: DeepseekV3MoEConfig,
    mesh_device: ttnn.MeshDevice,
    *,
    tokens_per_row: int,
    place_ring_weights,
) -> OptimizedMoEWeights:
    """Device tensors of a normalized layer (`weights.load_moe_layer`, or a lazy mapping with its keys such as
    `weights.RandomMoELayer`) on `mesh_device`, for `tokens_per_row` tokens per mesh row (the gate bias is one row
    per token). `place_ring_weights(mesh, device_experts)` places each device's experts for moe_compute, taking
    `device_experts(d)`'s (w0 (H, I), w1 (H, I), w2 (I, H)) one at a time: the layer is read expert by expert,
    device by device, and never held whole on the host."""
    import torch  # noqa: PLC0415  (host-side weights)

    mesh_shape = tuple(mesh_device.shape)
    check_layer_fits_mesh(config, mesh_shape)
    D = mesh_device.get_num_devices()
    E = config.n_routed_experts
    E_l = E // D

    def device_experts(d: int):  # device d's experts in slot order, each as x @ w
        for e in range(d * E_l, (d + 1) * E_l):
            yield tuple(layer[f"experts.{e}.{p}.weight"].T for p in ("gate_proj", "up_proj", "down_proj"))

    def replicated(t: torch.Tensor, dtype, layout) -> ttnn.Tensor:
        return ttnn.from_torch(t.contiguous(), dtype=dtype, layout=layout, device=mesh_device)

    def tp_shard(t: torch.Tensor, dim: int) -> ttnn.Tensor:
        return ttnn.from_torch(
            t.contiguous(),
            dtype=ttnn.bfloat16,
            layout=ttnn.TILE_LAYOUT,
            device=mesh_device,
            mesh_mapper=ttnn.ShardTensor2dMesh(mesh_device, mesh_shape, dims=(None, dim)),
        )

    mapping = (torch.arange(E) // E_l).repeat(D, 1).to(torch.int32)
    bias = layer["gate.e_score_correction_bias"].float().reshape(1, 1, 1, E).expand(1, 1, tokens_per_row, E)
    return OptimizedMoEWeights(
        expert_mapping=replicated(mapping, ttnn.uint16, ttnn.ROW_MAJOR_LAYOUT),
        ring_weights=place_ring_weights(mesh_device, device_experts),
        experts_per_device=E_l,
        gate_weight=replicated(layer["gate.weight"].float().T, ttnn.bfloat16, ttnn.TILE_LAYOUT),
        gate_bias=replicated(bias, ttnn.bfloat16, ttnn.TILE_LAYOUT),
        shared_w1=tp_shard(layer["shared_experts.gate_proj.weight"].T, dim=1),
        shared_w3=tp_shard(layer["shared_experts.up_proj.weight"].T, dim=1),
        shared_w2=tp_shard(layer["shared_experts.down_proj.weight"].T, dim=0),
    )
