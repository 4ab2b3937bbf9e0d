"""Host stand-ins for the tt-metal ops of the classic MoE flow that the backend cannot run as device
programs yet: each reads its inputs back from every device (`ttnn.to_torch`, which the emulator counts
as device reads), computes ttnn 0.81.1's documented result in torch and uploads it.

They exist so that the flow runs end to end and its device ops can be measured; their work never
appears in modeled device time, which flatters the tt-metal flow. Semantics, per device of a
(R, C) mesh, devices numbered row-major, B tokens per device, S = 1, K top-k, E experts, E_l per device:

- all_to_all_dispatch(x (B,1,S,H) RM, indices (B,1,S,K), mapping (1,1,E,R*C), cluster_axis):
  the n devices of the line along cluster_axis gather their tokens; device d's output (1, n*B, S, H)
  holds token b of line member j at row j*B + b if one of its K experts lives on d (else zero);
  the metadata (1, n*B, S, K) is every member's indices.
- moe_expert_token_remap(mask (1, n*B, S, E), mapping, metadata, reduction_size): per device, the mask
  at the (token, local expert) pairs the metadata selects (1, n*B, S, E_l), and the sparsity
  (1, 1, n*B*S / reduction_size, E_l): 1 where a block of reduction_size tokens uses a local expert.
- sparse_matmul(a, b, sparsity, is_input_a_sparse, is_input_b_sparse): b sparse: a (1, nb, M, K) x
  b (1, E_l, K, N) -> (nb, E_l, M, N); a sparse: a (nb, E_l, M, K) x b (1, E_l, K, N) -> (nb, E_l, M, N);
  blocks whose sparsity is 0 are not computed (zero here). The real op's rank-6 output for b sparse is
  given squeezed, as tt-metal's experts reshape it.
- all_to_all_combine(expert_out (E_l, n*B, S, H) RM, metadata, mapping, cluster_axis): device d's
  (K, B, S, H): slot k of token b is the output of its k-th expert if that expert lives on a device of
  d's line (its row j*B + b there, j = d's place in the line), else zero.
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


def _line(device: int, mesh_shape: tuple[int, int], cluster_axis: int) -> list[int]:
    rows, cols = mesh_shape
    r, c = divmod(device, cols)
    if cluster_axis == 0:
        return [rr * cols + c for rr in range(rows)]
    if cluster_axis == 1:
        return [r * cols + cc for cc in range(cols)]
    raise ValueError(f"cluster_axis must be 0 or 1, got {cluster_axis!r}")


def _owners(mapping: ttnn.Tensor) -> torch.Tensor:
    """(E,) the device of each expert, from the replicated one-hot (1, 1, E, D) mapping."""
    return shards(mapping)[0][0, 0].float().argmax(dim=-1)


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

    def all_to_all_dispatch(self, x, indices, mapping, *, cluster_axis: int, **_config):
        mesh = x.device()
        mesh_shape = tuple(mesh.shape)
        tokens, chosen, owner = shards(x), [s.long() for s in shards(indices)], _owners(mapping)
        B, _, S, H = tokens[0].shape
        outputs, metadata = [], []
        for d in range(mesh.get_num_devices()):
            members = _line(d, mesh_shape, cluster_axis)
            out = torch.zeros(1, len(members) * B, S, H, dtype=tokens[0].dtype)
            for j, m in enumerate(members):
                here = (owner[chosen[m]] == d).any(dim=-1)  # (B, 1, S)
                rows = tokens[m][:, 0]  # (B, S, H)
                out[0, j * B : (j + 1) * B][here[:, 0]] = rows[here[:, 0]]
            outputs.append(out)
            metadata.append(torch.cat([chosen[m] for m in members], dim=0).reshape(1, len(members) * B, S, -1))
        return (
            upload(outputs, mesh, ttnn.bfloat16, ttnn.ROW_MAJOR_LAYOUT),
            upload(metadata, mesh, ttnn.uint16, ttnn.ROW_MAJOR_LAYOUT),
        )

    def moe_expert_token_remap(self, topk_mask, mapping, metadata, *, reduction_size: int = 32):
        mesh = topk_mask.device()
        owner = _owners(mapping)
        E = owner.numel()
        remapped, sparsity = [], []
        for d, (mask, meta) in enumerate(zip(shards(topk_mask), shards(metadata))):
            local = (owner == d).nonzero()[:, 0]
            selected = torch.nn.functional.one_hot(meta.long(), E).amax(dim=-2).bool()  # (1, T, S, E)
            values = torch.where(selected, mask.float(), torch.zeros(())).index_select(-1, local)  # (1, T, S, E_l)
            tokens = values.shape[1] * values.shape[2]
            if tokens % reduction_size:
                raise ValueError(f"{tokens} tokens do not split into blocks of reduction_size={reduction_size}")
            blocks = (values != 0).reshape(1, tokens // reduction_size, reduction_size, -1).any(dim=2)
            remapped.append(values)
            sparsity.append(blocks.float().unsqueeze(0))  # (1, 1, T*S/reduction_size, E_l)
        return (
            upload(remapped, mesh, ttnn.bfloat16, ttnn.ROW_MAJOR_LAYOUT),
            upload(sparsity, mesh, ttnn.bfloat16, ttnn.ROW_MAJOR_LAYOUT),
        )

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

    def all_to_all_combine(self, expert_out, metadata, mapping, *, cluster_axis: int, **_config):
        mesh = expert_out.device()
        mesh_shape = tuple(mesh.shape)
        outs, owner = shards(expert_out), _owners(mapping)
        slot = torch.zeros_like(owner)
        for d in range(mesh.get_num_devices()):
            local = (owner == d).nonzero()[:, 0]
            slot[local] = torch.arange(local.numel())
        combined = []
        for d, meta in enumerate(shards(metadata)):
            members = _line(d, mesh_shape, cluster_axis)
            j = members.index(d)
            T, S = meta.shape[1], meta.shape[2]
            B = T // len(members)
            experts = meta[0, j * B : (j + 1) * B].long()  # (B, S, K)
            stacked = torch.stack([outs[m] for m in members])  # (n, E_l, T, S, H)
            place = torch.tensor([members.index(int(o)) if int(o) in members else -1 for o in owner])  # (E,)
            where = place[experts]  # (B, S, K): line position of each choice's device, -1 off the line
            rows = (torch.arange(B) + j * B)[:, None, None]
            seqs = torch.arange(S)[None, :, None]
            picked = stacked[where.clamp(min=0), slot[experts], rows, seqs]  # (B, S, K, H)
            out = (picked * (where >= 0)[..., None]).permute(2, 0, 1, 3).contiguous()  # (K, B, S, H)
            combined.append(out)
        return upload(combined, mesh, ttnn.bfloat16, ttnn.ROW_MAJOR_LAYOUT)
