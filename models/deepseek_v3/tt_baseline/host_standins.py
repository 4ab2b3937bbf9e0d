"""Host stand-ins for the tt-metal ops of the classic MoE flow that the backend cannot run as device
programs yet: each reads its inputs back from every device (`ttnn.to_torch`, which the emulator counts
as device reads), computes ttnn 0.81.1's documented result in torch and uploads it.

They exist so that the flow runs end to end and its device ops can be measured; their work never
appears in modeled device time, which flatters the tt-metal flow. Semantics, per device of a
(R, C) mesh, E_l experts per device, nb blocks of M tokens:

- sparse_matmul(a, b, sparsity, is_input_a_sparse, is_input_b_sparse): b sparse: a (1, nb, M, K) x
  b (1, E_l, K, N) -> (nb, E_l, M, N); a sparse: a (nb, E_l, M, K) x b (1, E_l, K, N) -> (nb, E_l, M, N);
  blocks whose sparsity is 0 are not computed (zero here). The real op's rank-6 output for b sparse is
  given squeezed, as tt-metal's experts reshape it.
- repeat, permute, sum(dim, keepdim): torch's, per device (layout glue with no device program here).

sparse_matmul reads each device's expert weights back once per call, one device at a time, so a
full-size layer never sits on the host at once.
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

    def sparse_matmul(
        self, a, b, *, sparsity, is_input_a_sparse: bool = False, is_input_b_sparse: bool = True, **_config
    ):
        if is_input_a_sparse == is_input_b_sparse:
            raise ValueError("sparse_matmul stand-in: exactly one of is_input_a_sparse, is_input_b_sparse")
        outputs = []
        for x, w, mask in zip(shards(a), ttnn.get_device_tensors(b), shards(sparsity)):
            w = ttnn.to_torch(w)[0].float()  # (E_l, K, N): one device's experts at a time
            active = mask[0, 0].bool()  # (nb, E_l)
            x = x.float()
            if is_input_b_sparse:  # x (1, nb, M, K): every block against every local expert
                y = torch.einsum("bmk,ekn->bemn", x[0], w)
            else:  # x (nb, E_l, M, K): block i of expert e against expert e
                y = torch.einsum("bemk,ekn->bemn", x, w)
            outputs.append(y * active[:, :, None, None])
        return upload(outputs, a.device(), ttnn.bfloat16, ttnn.TILE_LAYOUT)
