"""Activations between torch and the mesh: rows of the mesh split the tokens, columns the hidden dim."""

from __future__ import annotations

import torch

from models.deepseek_v3.tt.ttnn_api import ttnn


def input_to_mesh(x: torch.Tensor, mesh_device: ttnn.MeshDevice) -> ttnn.Tensor:
    """x (T, H) -> per device (B, H/C) bfloat16 TILE: device (r, c) holds rows [r*B, (r+1)*B) and hidden
    slice [c*H/C, (c+1)*H/C)."""
    if x.dim() != 2:
        raise ValueError(f"x must be (T, H), got {tuple(x.shape)}")
    mesh_shape = tuple(mesh_device.shape)
    return ttnn.from_torch(
        x,
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=mesh_device,
        mesh_mapper=ttnn.ShardTensor2dMesh(mesh_device, mesh_shape, dims=(0, 1)),
    )


def output_to_torch(y: ttnn.Tensor) -> torch.Tensor:
    """Inverse of `input_to_mesh`: per device (B, H/C) -> (T, H) float32."""
    mesh_device = y.device()
    composer = ttnn.ConcatMesh2dToTensor(mesh_device, tuple(mesh_device.shape), dims=(0, 1))
    return ttnn.to_torch(y, mesh_composer=composer).float()


def device_values(t: ttnn.Tensor) -> list[torch.Tensor]:
    """A mesh tensor -> each device's values (row-major device order), read to the host."""
    mesh_device = t.device()
    stacked = ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(mesh_device, dim=0))
    return list(torch.chunk(stacked, mesh_device.get_num_devices(), dim=0))
