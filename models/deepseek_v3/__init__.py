"""DeepSeek-V3 Mixture-of-Experts layer: config, torch references, weight loading, demo.

`reference.moe_gate` / `reference.reference_moe` are the single-device fp32
references; `tt.TtMoE` is the layer on a mesh (the one mesh flow, see
docs/deepseek_v3_moe.md).
"""

from models.deepseek_v3.config import MESH_PRESETS, DeepseekV3MoEConfig, mesh_shape

__all__ = ["MESH_PRESETS", "DeepseekV3MoEConfig", "mesh_shape"]
