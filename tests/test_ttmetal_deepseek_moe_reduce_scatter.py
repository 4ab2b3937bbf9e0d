"""Tenstorrent's deepseek_moe_reduce_scatter (ttnn 0.81.1 reader / reduction / writer kernels, unmodified) on
emulated rings of 8 (T3K 1x8, TG 4x8 and QUAD 16x8 along axis 1; QUAD's axis 0 has 16 devices, which the op
refuses), against a torch golden of its dataflow.

Exactness: the op adds bf16 tiles with a 16-bit DST, so every step of the ring rounds its sum to bf16; the
golden sums each slice in the ring order the op uses (a shard going forward starts at the next device and ends
at its owner, one going backward the other way round) and rounds after every add, so outputs are compared bit
for bit. PCC against the float64 sum shows what the rounding costs.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import ttnn_moe.emu as ttnn
from ttmetal_moe_cases import open_mesh
from ttnn_moe._C import program as pd
from ttnn_moe.emu.tensor import device_shards
from ttnn_moe.emu.ttmetal import deepseek_moe_reduce_scatter as rs

Topology = ttnn.Topology
RING = 8

pytestmark = pytest.mark.usefixtures("wheel")


def ring_sum_golden(x: torch.Tensor, ring_index: int, width: int) -> torch.Tensor:
    """x: [8 ring devices, 8 slices, 32, W] bf16. Slice `ring_index` summed over the ring as the op does: shard w
    (columns w * width ..) goes forward if w is odd (devices r+1, r+2, .., r+7, then r), else backward."""
    r = ring_index
    out = torch.empty(x.shape[2:], dtype=torch.bfloat16)
    for w in range(x.shape[-1] // width):
        cols = slice(w * width, (w + 1) * width)
        step = 1 if w % 2 else -1
        acc = x[(r + step) % RING, r, :, cols]
        for j in range(2, RING + 1):
            acc = (x[(r + step * j) % RING, r, :, cols].float() + acc.float()).bfloat16()
        out[:, cols] = acc
    return out


def pcc(got: torch.Tensor, want: torch.Tensor) -> float:
    return float(np.corrcoef(got.flatten().double().numpy(), want.flatten().double().numpy())[0, 1])


def run(mesh, x: torch.Tensor, width: int, cores, memory_config=ttnn.DRAM_MEMORY_CONFIG, **kwargs):
    """x: [devices (row-major), 8 slices, 32, W]."""
    inputs = [
        ttnn.from_torch(x[:, k].reshape(-1, 1, 32, x.shape[-1]), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                        device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
        for k in range(RING)
    ]  # fmt: skip
    args = {"cluster_axis": 1, "topology": Topology.Ring, **kwargs}
    shards = rs.InputShards(width, tuple(cores))
    return rs.deepseek_moe_reduce_scatter(inputs, memory_config, -1, input_shards=shards, **args)


def check(out, x: torch.Tensor, rows: int, cols: int, width: int) -> None:
    got = device_shards(out)
    for row in range(rows):
        ring = x[row * cols : (row + 1) * cols]
        for col in range(cols):
            want = ring_sum_golden(ring, col, width)
            g = got[row * cols + col].reshape(want.shape)
            assert torch.equal(g, want), f"device ({row}, {col}): {(g != want).sum()} values differ"
            exact = ring[:, col].double().sum(0)
            assert pcc(g, exact) > 0.9999


def cores(n):
    return [pd.CoreCoord(i % 8, i // 8) for i in range(n)]


@pytest.mark.parametrize(
    "rows, cols, shards, width",
    [
        (1, 8, 2, 64),  # T3K: one link, a forward and a backward worker
        (4, 8, 4, 128),  # TG: two links, four shards of four tiles
        (1, 8, 3, 64),  # an odd shard count: a supplemental core joins as link 2's forward worker
    ],
)
def test_ring_sum_is_exact(rows, cols, shards, width):
    mesh = open_mesh(rows, cols, Topology.Ring)
    x = torch.randn(rows * cols, RING, 32, shards * width, generator=torch.Generator().manual_seed(rows + shards))
    x = (x * 2).bfloat16()
    out = run(mesh, x, width, cores(shards))
    check(out, x, rows, cols, width)


def test_l1_output():
    mesh = open_mesh(1, 8, Topology.Ring)
    x = torch.randn(8, RING, 32, 128, generator=torch.Generator().manual_seed(5)).bfloat16()
    out = run(mesh, x, 64, cores(2), memory_config=ttnn.L1_MEMORY_CONFIG)
    assert out.memory_config().buffer_type == ttnn.BufferType.L1
    check(out, x, 1, 8, 64)


def test_quad_rings_along_axis_1():
    mesh = open_mesh(16, 8, Topology.Ring)
    x = torch.randn(128, RING, 32, 128, generator=torch.Generator().manual_seed(16)).bfloat16()
    check(run(mesh, x, 64, cores(2)), x, 16, 8, 64)


@pytest.mark.parametrize(
    "mesh_shape, kwargs, width, n_shards, message",
    [
        ((16, 8), {"cluster_axis": 0}, 64, 4, "hardcoded for 8 devices, but has 16 along cluster_axis 0"),
        ((1, 8), {"topology": Topology.Linear}, 64, 4, "hardcoded for Topology.Ring"),
        ((1, 8), {}, 32, 8, "shards have an even number pages, got 1"),
        ((1, 8), {"num_links": 1}, 64, 4, "1 links available, but 2 requested"),
        ((1, 8), {"dim": 2}, 64, 4, "only supports scattering on the last dim, but has dim 2"),
    ],
)
def test_rejects_bad_arguments_naming_them(mesh_shape, kwargs, width, n_shards, message):
    mesh = open_mesh(*mesh_shape, Topology.Ring)
    x = torch.zeros(mesh_shape[0] * mesh_shape[1], RING, 32, 256).bfloat16()
    dim = kwargs.pop("dim", -1)
    inputs = [
        ttnn.from_torch(x[:, k].reshape(-1, 1, 32, 256), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                        device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
        for k in range(RING)
    ]  # fmt: skip
    args = {"cluster_axis": 1, "topology": Topology.Ring, **kwargs}
    with pytest.raises(ValueError, match=message):
        rs.deepseek_moe_reduce_scatter(inputs, ttnn.DRAM_MEMORY_CONFIG, dim,
                                       input_shards=rs.InputShards(width, tuple(cores(n_shards))), **args)  # fmt: skip


def test_rejects_seven_inputs_and_two_shards_on_one_core():
    mesh = open_mesh(1, 8, Topology.Ring)
    x = torch.zeros(8, RING, 32, 128).bfloat16()
    inputs = [
        ttnn.from_torch(x[:, k].reshape(-1, 1, 32, 128), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                        device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
        for k in range(RING)
    ]  # fmt: skip
    args = {"cluster_axis": 1, "topology": Topology.Ring}
    with pytest.raises(ValueError, match="requires 8 input tensors, but has 7"):
        rs.deepseek_moe_reduce_scatter(inputs[:7], ttnn.DRAM_MEMORY_CONFIG, -1,
                                       input_shards=rs.InputShards(64, tuple(cores(2))), **args)  # fmt: skip
    same_core = (pd.CoreCoord(1, 1), pd.CoreCoord(1, 1))
    with pytest.raises(ValueError, match="each of the 2 shards to be located on a different core"):
        rs.deepseek_moe_reduce_scatter(inputs, ttnn.DRAM_MEMORY_CONFIG, -1,
                                       input_shards=rs.InputShards(64, same_core), **args)  # fmt: skip
