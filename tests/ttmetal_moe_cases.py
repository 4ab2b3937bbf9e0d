"""Routings, meshes and tensor set-up shared by the tests of Tenstorrent's MoE data-movement ops."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import ttnn_moe.emu as ttnn

# One shape for every case, so each (mesh, axis, topology) builds its kernels once.
B, S, K, H = 2, 3, 4, 64
T = B * S
EXPERTS_PER_DEVICE = 2


@dataclass
class Routing:
    """Per device: tokens [T, H] bf16 and top-k expert ids [T, K]; expert e lives on device e // E_l."""

    xs: list[torch.Tensor]
    indices: list[torch.Tensor]
    mapping: torch.Tensor  # [E, D] one-hot


def block_mapping(devices: int) -> torch.Tensor:
    experts = devices * EXPERTS_PER_DEVICE
    mapping = torch.zeros(experts, devices, dtype=torch.int64)
    mapping[torch.arange(experts), torch.arange(experts) // EXPERTS_PER_DEVICE] = 1
    return mapping


def make_routing(kind: str, devices: int, seed: int = 0) -> Routing:
    """kind: 'random' (distinct experts per token, some experts get none), 'one_expert' (every token's
    k choices include expert 1, the rest on device 0's other expert and a repeat of expert 1),
    'same_device' (each token picks both experts of one device, plus two more)."""
    g = torch.Generator().manual_seed(seed)
    experts = devices * EXPERTS_PER_DEVICE
    xs = [torch.randn(T, H, generator=g).to(torch.bfloat16) for _ in range(devices)]
    indices = []
    for _ in range(devices):
        if kind == "random":
            # experts drawn from all but the last device's, so that device's experts get no tokens
            pool = max(experts - EXPERTS_PER_DEVICE, K)
            rows = [torch.randperm(pool, generator=g)[:K] for _ in range(T)]
        elif kind == "one_device":
            rows = [torch.tensor([1, 0, 1, 0][:K]) for _ in range(T)]
        elif kind == "same_device":
            rows = []
            for _ in range(T):
                d = int(torch.randint(devices, (1,), generator=g))
                others = torch.randperm(experts, generator=g)[:K]
                pair = [d * EXPERTS_PER_DEVICE, d * EXPERTS_PER_DEVICE + 1]
                rest = [int(e) for e in others if int(e) not in pair][: K - 2]
                rows.append(torch.tensor(pair + rest))
        else:
            raise ValueError(kind)
        indices.append(torch.stack(rows).to(torch.int64))
    return Routing(xs, indices, block_mapping(devices))


def open_mesh(rows: int, cols: int, topology=None):
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(rows, cols))
    if topology is not None:
        mesh.fabric_topology = topology
    return mesh


def per_device(mesh, shards, dtype):
    """One tensor per device (row-major), as a mesh tensor; each shard keeps its shape."""
    return ttnn.from_torch(
        torch.cat(list(shards), dim=0),
        dtype=dtype,
        layout=ttnn.ROW_MAJOR_LAYOUT,
        device=mesh,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
    )


def replicated(mesh, tensor, dtype):
    return ttnn.from_torch(
        tensor, dtype=dtype, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh)
    )


def dispatch_inputs(mesh, routing: Routing):
    """x [B, S, 1, H], indices [B, S, 1, K] per device, mapping [1, 1, E, D] replicated."""
    x = per_device(mesh, [t.reshape(B, S, 1, H) for t in routing.xs], ttnn.bfloat16)
    idx = per_device(mesh, [t.reshape(B, S, 1, K) for t in routing.indices], ttnn.uint16)
    e, d = routing.mapping.shape
    mapping = replicated(mesh, routing.mapping.reshape(1, 1, e, d), ttnn.uint16)
    return x, idx, mapping
