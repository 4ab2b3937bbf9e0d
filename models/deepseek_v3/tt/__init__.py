"""DeepSeek-V3 MoE layer on (emulated) Tenstorrent meshes, in tt-metal model style.

`TtMoE` holds the layer's weights as device tensors and runs the layer's mesh
flow (all-gather, gate, dense dispatch, experts, local reduce, combine, shared
expert, reduce-scatter) with the ttnn_moe device ops; `mesh_io` moves
activations between torch and the mesh; `ttnn_api` is where `ttnn` comes from.
"""

from models.deepseek_v3.tt.moe import TtMoE


def __getattr__(name: str):
    # mesh_io converts torch tensors: imported on first use, so the layer itself imports without torch.
    if name in ("device_values", "input_to_mesh", "output_to_torch"):
        from models.deepseek_v3.tt import mesh_io  # noqa: PLC0415

        return getattr(mesh_io, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["TtMoE", "device_values", "input_to_mesh", "output_to_torch"]
