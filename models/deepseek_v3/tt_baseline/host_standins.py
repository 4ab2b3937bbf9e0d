"""Host stand-ins for the tt-metal ops of the classic MoE flow that the backend cannot run as device
programs yet: each reads its inputs back from every device (`ttnn.to_torch`, which the emulator counts
as device reads), computes ttnn 0.81.1's documented result in torch and uploads it.

They exist so that the flow runs end to end and its device ops can be measured; their work never
appears in modeled device time, which flatters the tt-metal flow. Semantics:

- repeat, permute, sum(dim, keepdim): torch's, per device (layout glue with no device program here).
"""

from __future__ import annotations

import torch

from models.deepseek_v3.tt.ttnn_api import ttnn


def shards(t: ttnn.Tensor) -> list[torch.Tensor]:
    """Each device's values (row-major device order), read back to the host."""
    mesh = t.device()
    stacked = ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
    return list(torch.chunk(stacked, mesh.get_num_devices(), dim=0))


def upload(values: list[torch.Tensor], mesh, dtype, layout) -> ttnn.Tensor:
    """Per-device values (equal shapes) -> one mesh tensor, device d holding values[d]."""
    return ttnn.from_torch(
        torch.cat(values, dim=0),
        dtype=dtype,
        layout=layout,
        device=mesh,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
    )


class HostStandIns:
    """The stand-ins of one layer."""

    def repeat(self, t: ttnn.Tensor, repetition_vector) -> ttnn.Tensor:
        reps = [int(r) for r in repetition_vector]
        return upload([s.repeat(*reps) for s in shards(t)], t.device(), t.dtype, t.layout)

    def permute(self, t: ttnn.Tensor, dims) -> ttnn.Tensor:
        return upload([s.permute(*dims).contiguous() for s in shards(t)], t.device(), t.dtype, t.layout)

    def sum(self, t: ttnn.Tensor, dim: int, keepdim: bool = False) -> ttnn.Tensor:
        values = [s.float().sum(dim=dim, keepdim=keepdim) for s in shards(t)]
        return upload(values, t.device(), t.dtype, t.layout)
