"""Modeled device time of the emulated ttnn.all_gather / ttnn.reduce_scatter on a line of 8.

    python benchmarks/collectives.py                 # the layer's decode and prefill shapes
    python benchmarks/collectives.py --links 1       # force a link count

The DeepSeek-V3 layer's TP collectives (mesh axis 1, a line of 8 on TG 4x8 and QUAD 16x8), run on a
1x8 mesh with a Linear fabric, bf16 TILE:
- reduce_scatter of (T, 7168) partials along dim 1 (each device keeps (T, 896));
- all_gather of (T, 896) slices along dim 1 (each device gets (T, 7168)).

Each op is recorded by `ttnn_moe.profile` (Wormhole B0 time model); printed: the modeled device
time (slowest device), the fabric payload, the most wire bytes (payload, headers, Ethernet framing)
one link direction carried, and the bandwidth bound: (N - 1) / N of the tensor (what the busiest
link direction of a line carries when each slice crosses each link at most once per direction,
for both ops) at 12.5 GB/s per link (WH Ethernet, 100 Gbps per direction) over the links used.
"""

from __future__ import annotations

import argparse
import tempfile

import torch
from ttnn_moe.emu.tensor import from_shards

import ttnn_moe
from ttnn_moe import emu

HIDDEN = 7168
LINE = 8
LINK_BYTES_PER_US = 12.5e3  # 100 Gbps per direction per link
PHASES = {"decode": 32, "prefill": 512}


def _busiest_link_mb(record) -> float:
    """The most wire bytes (payload, headers, framing) one link direction carried."""
    return max((link["wire_bytes"] for d in record.devices for link in d.timing["links"]), default=0) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--links", type=int, default=None, help="num_links of both ops (default: ttnn's)")
    args = parser.parse_args()
    mesh = emu.open_mesh_device(emu.MeshShape(1, LINE))
    mesh.fabric_topology = emu.Topology.Linear
    links = args.links or mesh.chip_mesh.fabric_num_links
    g = torch.Generator().manual_seed(0)
    cases = []  # (label, op, per-device shards, bytes of the full (T, H) tensor)
    for tokens in PHASES.values():
        partials = [torch.randn(tokens, HIDDEN, generator=g).to(torch.bfloat16) for _ in range(LINE)]
        slices = [torch.randn(tokens, HIDDEN // LINE, generator=g).to(torch.bfloat16) for _ in range(LINE)]
        cases.append((f"reduce_scatter ({tokens}, {HIDDEN})", emu.reduce_scatter, partials, tokens * HIDDEN * 2))
        cases.append((f"all_gather ({tokens}, {HIDDEN // LINE})", emu.all_gather, slices, tokens * HIDDEN * 2))

    with tempfile.TemporaryDirectory() as scratch:
        # A first pass builds every kernel; the profiled pass measures the same programs.
        for profiled in (False, True):
            session = ttnn_moe.profile(scratch) if profiled else None
            recording = session.__enter__() if session else None
            for _, op, shards, _ in cases:
                op(from_shards(shards, emu.bfloat16, emu.TILE_LAYOUT, mesh), 1, cluster_axis=1, num_links=args.links)
            if session:
                session.__exit__(None, None, None)
    records = [r for r in recording.ops if r.name in ("reduce_scatter", "all_gather")]
    print(f"1x{LINE} line, Linear fabric, bf16 TILE, {links} link(s) per direction, Wormhole B0 model")
    print(f"{'op':32s} {'device us':>10s} {'fabric MB':>10s} {'link max MB':>12s} {'bound us':>9s}")
    for (name, _, _, full_bytes), record in zip(cases, records):
        busiest = _busiest_link_mb(record)
        bound_us = full_bytes * (LINE - 1) / LINE / links / LINK_BYTES_PER_US
        payload = sum(d.counters["fabric"]["bytes"] for d in record.devices) / 1e6
        print(f"{name:32s} {record.device_ns() / 1e3:10.1f} {payload:10.2f} {busiest:12.3f} {bound_us:9.1f}")
    emu.close_mesh_device(mesh)


if __name__ == "__main__":
    main()
