"""Modeled device time of tt-metal's DeepSeek-V3 decode expert reduction on a ring of 8, beside ttnn.reduce_scatter.

    python benchmarks/deepseek_moe_reduce_scatter.py

The optimized decode path ends with ttnn.experimental.deepseek_moe_fast_reduce_nc (each device sums its
K = 8 expert slots of (32, 7168) and splits the sum into eight (32, 896) slices) and
ttnn.experimental.deepseek_moe_reduce_scatter (a ring of 8 along mesh axis 1 sums slice r onto ring device r),
both run here with the wheel's kernels (ttnn_moe.emu.ttmetal). Beside them, the emulated ttnn.reduce_scatter of
the same (32, 7168) partials on the same ring, and ttnn.experimental.deepseek_moe_fast_reduce_nc_fused, which
weights each slot by its token's score as it sums (the FPU's multiply-accumulate into DST: one
mul_tiles_bcast_cols per slot where the unfused op adds one tile), so that no separate weighting precedes the
sum. One 1x8 ring stands for each row of TG 4x8 / QUAD 16x8 (the rows run the same programs at once). The
reduce-scatter's inputs are sharded as on the decode path: 7 shards of 128 columns (4 tiles, even as the op
requires) per slice, on 7 cores plus the supplemental 8th, 4 links.
Recorded by `ttnn_moe.profile` (Wormhole B0 time model): modeled device time of the slowest device, the fabric
payload, and the most wire bytes one link direction carried.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import torch
from ttnn_moe._C import program as pd
from ttnn_moe.emu.tensor import from_shards
from ttnn_moe.emu.ttmetal import deepseek_moe_fast_reduce_nc as fast_reduce
from ttnn_moe.emu.ttmetal import deepseek_moe_fast_reduce_nc_fused as fused_reduce
from ttnn_moe.emu.ttmetal import deepseek_moe_reduce_scatter as moe_rs
from ttnn_moe.emu.ttmetal import use_wheel

import ttnn_moe
from ttnn_moe import emu

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tools package
from tools.tt_wheel import ensure_ttnn_wheel  # noqa: E402

HIDDEN, TOKENS, K, RING, EXPERTS = 7168, 32, 8, 8, 256
SHARD_WIDTH = 128
LINKS = 4


def _busiest_link_mb(record) -> float:
    return max((link["wire_bytes"] for d in record.devices for link in d.timing["links"]), default=0) / 1e6


def main() -> None:
    use_wheel(ensure_ttnn_wheel())
    mesh = emu.open_mesh_device(emu.MeshShape(1, RING))
    mesh.fabric_topology = emu.Topology.Ring
    g = torch.Generator().manual_seed(0)
    experts = torch.randn(RING * K, 1, TOKENS, HIDDEN, generator=g).bfloat16()
    partials = [experts[d * K : (d + 1) * K].float().sum(0)[0].bfloat16() for d in range(RING)]
    slice_width = HIDDEN // RING
    shards = moe_rs.InputShards(SHARD_WIDTH, tuple(pd.CoreCoord(i, 0) for i in range(slice_width // SHARD_WIDTH)))

    shard = {"mesh_mapper": emu.ShardTensorToMesh(mesh, dim=0)}
    scores = emu.from_torch(torch.rand(RING * TOKENS, 1, 1, K, generator=g).bfloat16(), dtype=emu.bfloat16,
                            layout=emu.ROW_MAJOR_LAYOUT, device=mesh, **shard)  # fmt: skip
    ids = torch.stack([torch.randperm(EXPERTS, generator=g)[:K] for _ in range(RING * TOKENS)])
    indices = emu.from_torch(ids.reshape(RING, 1, TOKENS, K).to(torch.int16), dtype=emu.uint16,
                             layout=emu.ROW_MAJOR_LAYOUT, device=mesh, **shard)  # fmt: skip
    owners = (torch.arange(EXPERTS) // (EXPERTS // RING)).reshape(1, EXPERTS).to(torch.int16)  # 32 per device
    mapping = emu.from_torch(owners, dtype=emu.uint16, layout=emu.ROW_MAJOR_LAYOUT, device=mesh,
                             mesh_mapper=emu.ReplicateTensorToMesh(mesh))  # fmt: skip

    def run_all() -> None:
        t = emu.from_torch(experts, dtype=emu.bfloat16, layout=emu.TILE_LAYOUT, device=mesh, **shard)
        slices = fast_reduce.deepseek_moe_fast_reduce_nc(t, 0, split_size=slice_width)
        fused_reduce.deepseek_moe_fast_reduce_nc_fused(t, indices, mapping, 0, split_size=slice_width, cluster_axis=1,
                                                       scores_tensor=scores)  # fmt: skip
        moe_rs.deepseek_moe_reduce_scatter(slices, emu.DRAM_MEMORY_CONFIG, -1, num_links=LINKS, cluster_axis=1,
                                           topology=emu.Topology.Ring, input_shards=shards)  # fmt: skip
        emu.reduce_scatter(from_shards(partials, emu.bfloat16, emu.TILE_LAYOUT, mesh), 1, cluster_axis=1)

    with tempfile.TemporaryDirectory() as scratch:
        run_all()  # builds every kernel; the profiled pass measures the same programs
        with ttnn_moe.profile(scratch) as recording:
            run_all()
    names = (
        "deepseek_moe_fast_reduce_nc",
        "deepseek_moe_fast_reduce_nc_fused",
        "deepseek_moe_reduce_scatter",
        "reduce_scatter",
    )
    records = {r.name: r for r in recording.ops if r.name in names}
    print(f"1x{RING} ring (a row of TG 4x8 / QUAD 16x8), bf16 TILE, decode ({TOKENS} tokens), Wormhole B0 model")
    print(f"{'op':58s} {'device us':>10s} {'fabric MB':>10s} {'link max MB':>12s}")
    labels = {
        "deepseek_moe_fast_reduce_nc": f"deepseek_moe_fast_reduce_nc ({K}, 1, {TOKENS}, {HIDDEN}) dim 0",
        "deepseek_moe_fast_reduce_nc_fused": f"deepseek_moe_fast_reduce_nc_fused, ({TOKENS}, {K}) scores",
        "deepseek_moe_reduce_scatter": f"deepseek_moe_reduce_scatter 8 x ({TOKENS}, {slice_width}), {LINKS} links",
        "reduce_scatter": f"ttnn.reduce_scatter ({TOKENS}, {HIDDEN}) dim 1",
    }
    for name in names:
        record = records[name]
        payload = sum(d.counters.get("fabric", {}).get("bytes", 0) for d in record.devices) / 1e6
        print(f"{labels[name]:58s} {record.device_ns() / 1e3:10.1f} {payload:10.2f} {_busiest_link_mb(record):12.3f}")
    emu.close_mesh_device(mesh)


if __name__ == "__main__":
    main()
