"""The DeepSeek-V3 router as one HOST BUILT-IN, NOT A KERNEL.

The gate is sigmoid(x Wg^T), a bias-corrected top-2 score per group, a top-4 of
8 groups, a top-8 of the experts left, normalized and scaled weights
(`reference.moe_gate`). The group-limited selection (a mask built from group
indices) has no plain ttnn built-in, so the whole gate is one host step here: it
reads each device's x and gate weights, runs the fp32 reference gate on the host
and writes the routing tables back to the same device. On hardware its place is
taken by tt-metal's DeepSeek-V3 gate, a generic_op kernel of its own
(models/demos/deepseek_v3/tt/deepseek_moe_gate).
"""

from __future__ import annotations

import torch

from models.deepseek_v3.config import DeepseekV3MoEConfig
from models.deepseek_v3.reference import moe_gate as reference_moe_gate
from models.deepseek_v3.tt.mesh_io import device_values
from models.deepseek_v3.tt.ttnn_api import ttnn


def moe_gate(
    x: ttnn.Tensor, gate_weight: ttnn.Tensor, e_score_correction_bias: ttnn.Tensor, config: DeepseekV3MoEConfig
) -> tuple[ttnn.Tensor, ttnn.Tensor]:
    """Host built-in, not a kernel: per device x (B, H), gate_weight (E, H), bias (1, E) fp32
    -> topk_indices (B, 1, K) uint32 ROW_MAJOR, topk_weights (B, 1, K) bfloat16 ROW_MAJOR,
    in the (B, S, K) layout all_to_all_dispatch_dense takes (S = 1: decode)."""
    mesh = x.device()
    if not isinstance(mesh, ttnn.MeshDevice):
        raise ValueError(f"moe_gate needs tensors on a mesh device, got {x!r}")
    indices, weights = [], []
    for x_d, w_d, b_d in zip(device_values(x), device_values(gate_weight), device_values(e_score_correction_bias)):
        topk_indices, topk_weights = reference_moe_gate(x_d.float(), w_d, b_d.reshape(-1), config)  # (B, K)
        indices.append(topk_indices.to(torch.int32).unsqueeze(1))  # (B, 1, K)
        weights.append(topk_weights.unsqueeze(1))  # (B, 1, K)
    shard = ttnn.ShardTensorToMesh(mesh, dim=0)
    return (
        ttnn.from_torch(
            torch.cat(indices), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh, mesh_mapper=shard
        ),
        ttnn.from_torch(
            torch.cat(weights), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh, mesh_mapper=shard
        ),
    )
