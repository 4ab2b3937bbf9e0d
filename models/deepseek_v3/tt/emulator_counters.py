"""What the emulator counted during a forward pass, summed over the mesh, and the yardsticks it is
held against (tile matmuls the routing needs, token rows that must cross the fabric)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from models.deepseek_v3.tt.ttnn_api import ttnn, ttnn_moe

_TILE = 32


@dataclass(frozen=True)
class MeshCounters:
    tile_matmuls: int  # 32x32x32 tile products the kernels executed
    kernel_builds: int  # JIT compiler runs (cache misses)
    kernel_cache_hits: int
    fabric_packets: int
    fabric_bytes: int  # every packet's payload: token rows plus the routing-metadata exchange
    noc_bytes_read_dram: int

    @classmethod
    def since_reset(cls, mesh_device: ttnn.MeshDevice) -> "MeshCounters":
        per_device = mesh_device.counters()

        def total(key: str) -> int:
            return sum(int(c[key]) for c in per_device)

        return cls(
            tile_matmuls=total("tile_matmuls"),
            kernel_builds=total("kernel_builds"),
            kernel_cache_hits=total("kernel_cache_hits"),
            fabric_packets=sum(int(c["fabric"]["packets"]) for c in per_device),
            fabric_bytes=sum(int(c["fabric"]["bytes"]) for c in per_device),
            noc_bytes_read_dram=total("noc_bytes_read_dram"),
        )


def process_jit_stats() -> dict:
    """Kernel builds and cache hits of this process so far (every device, every op)."""
    return dict(ttnn_moe._C.emu.jit_stats())


def needed_expert_tile_matmuls(counts_per_device: list[torch.Tensor], hidden: int, intermediate: int) -> int:
    """Tile matmuls the routed experts' grouped moe_bmm calls need: each local expert's ceil(count / 32)
    row tiles times (H/32 x I/32) tiles for w1 and w3 each (one fused launch), and (I/32 x H/32) for w2."""
    row_tiles = sum(int(((c.reshape(-1).to(torch.int64) + _TILE - 1) // _TILE).sum()) for c in counts_per_device)
    return 3 * row_tiles * (hidden // _TILE) * (intermediate // _TILE)


def needed_shared_expert_tile_matmuls(
    num_devices: int, tokens_per_device: int, hidden: int, shared_intermediate_per_device: int
) -> int:
    """Tile matmuls the shared expert's two moe_bmm calls need: on every device, ceil(B / 32) token
    row tiles times (H/32 x Is_d/32) for its gate and up slices each and (Is_d/32 x H/32) for down."""
    return (
        num_devices
        * ((tokens_per_device + _TILE - 1) // _TILE)
        * 3
        * (hidden // _TILE)
        * (shared_intermediate_per_device // _TILE)
    )


def needed_gate_tile_matmuls(num_devices: int, tokens_per_device: int, num_experts: int, hidden: int) -> int:
    """Tile matmuls moe_gate needs: on every device, ceil(B / 32) token row tiles times (E/32 x H/32)."""
    return num_devices * ((tokens_per_device + _TILE - 1) // _TILE) * (num_experts // _TILE) * (hidden // _TILE)


def remote_token_rows(topk_indices: torch.Tensor, mesh_shape: tuple[int, int], experts_per_device: int) -> int:
    """Unique (token, destination device) pairs over all dispatch lines whose destination is not
    the token's own device: the token rows dense dispatch must send over the fabric. Device
    (r, c) sends only to the owners in its own column c (dispatch runs along axis 0).

    topk_indices (R*C, B, K): each device's routing, row-major device order."""
    _, cols = mesh_shape
    pairs = 0
    for device, ids in enumerate(topk_indices.to(torch.int64)):
        owners = ids // experts_per_device  # (B, K) owning device index
        for token_owners in owners.tolist():
            pairs += sum(1 for owner in set(token_owners) if owner % cols == device % cols and owner != device)
    return pairs
