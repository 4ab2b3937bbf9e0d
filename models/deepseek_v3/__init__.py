"""DeepSeek-V3 Mixture-of-Experts layer: config, torch references, weight loading, demo.

`reference.moe_gate` / `reference.reference_moe` are the single-device fp32
references; `reference.reference_moe_mesh` runs the same layer as the mesh
flow of SPEC section 5 on a pluggable op backend (`backends`).
"""

from models.deepseek_v3.config import MESH_PRESETS, DeepseekV3MoEConfig, mesh_shape

__all__ = ["MESH_PRESETS", "DeepseekV3MoEConfig", "mesh_shape"]
