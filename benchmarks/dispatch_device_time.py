"""Modeled device time of all_to_all_dispatch_dense alone, on a whole TG or QUAD mesh.

    python benchmarks/dispatch_device_time.py [--mesh tg quad] [--tokens 32] [--hidden 7168]
                                              [--topology Linear Ring] [--profile DIR]

The op as the layer runs it: every device of the rows x cols mesh holds `--tokens` tokens (32 at
decode, 512 at prefill) with DeepSeek-V3 routing (256 experts in row-major mesh order, 8 per device
on TG 4x8, 2 on QUAD 16x8, top-8 drawn uniformly per token), dispatched along axis 0 (each column
is a line of 4 or 16 devices), the default capacity, 8x8 worker grid, 4 links, the fabric Linear
(a line: the far end is 15 hops away on QUAD) or Ring (the line closed, as a torus-wired QUAD runs
it: rows go the shorter way round, at most 8 hops). Every output is checked against
ttnn_moe.golden (metadata exactly, every block row of `tokens` bit for bit). Each case runs once to
build the kernels, then once inside a `ttnn_moe.profile` session (Wormhole B0 time model): device
time (slowest device), fabric bytes, the busiest link direction's bytes and its busy time.
`--profile DIR` keeps each case's ops_perf_results.csv and trace.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import torch
from dispatch import dispatch_inputs, make_routing
from ttnn_moe.emu.tensor import device_shards

import ttnn_moe
from ttnn_moe import emu, golden

LINKS = 4
AXIS = 0
MESHES = {"tg": (4, 8), "quad": (16, 8)}
TOPOLOGIES = ("Linear", "Ring")


def run(mesh, shape: tuple[int, int], ids: list[torch.Tensor], hidden: int):
    """Dispatch on the mesh's own fabric topology, every output checked against the golden."""
    x, topk, weights, mapping = dispatch_inputs(mesh, ids, hidden)
    out = ttnn_moe.all_to_all_dispatch_dense(x, topk, weights, mapping, cluster_axis=AXIS)
    want = golden.all_to_all_dispatch_dense(
        device_shards(x), device_shards(topk), device_shards(weights), device_shards(mapping)[0], shape, AXIS,
        capacity=int(out.tokens.shape[0]),
    )  # fmt: skip
    checks = {
        "num_routed_tokens": out.num_routed_tokens,
        "expert_offsets": out.expert_offsets,
        "token_idx_map": out.token_idx_map,
        "routed_token_weights": out.routed_token_weights,
    }
    for name, tensor in checks.items():
        for d, (got, expected) in enumerate(zip(device_shards(tensor), want)):
            if not torch.equal(got.reshape(-1), getattr(expected, name).reshape(-1).to(got.dtype)):
                raise SystemExit(f"H={hidden}: device {d}'s {name} differs from the golden")
    for d, (got, expected) in enumerate(zip(device_shards(out.tokens), want)):
        last_count, last_offset = int(expected.num_routed_tokens[-1]), int(expected.expert_offsets[-1])
        rows = last_offset + (last_count + 31) // 32 * 32  # the blocks; rows past them are not written
        if not torch.equal(got[:rows], expected.tokens[:rows].to(got.dtype)):
            raise SystemExit(f"H={hidden}: device {d}'s token blocks differ from the golden")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mesh", nargs="+", choices=sorted(MESHES), default=["tg", "quad"])
    parser.add_argument("--tokens", type=int, default=32, help="tokens per device (32 decode, 512 prefill)")
    parser.add_argument("--hidden", type=int, nargs="+", default=[7168])
    parser.add_argument("--topology", nargs="+", choices=TOPOLOGIES, default=list(TOPOLOGIES))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", type=Path, help="keep each case's profile (csv, trace) under this folder")
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(
        f"all_to_all_dispatch_dense on the whole mesh along axis {AXIS}, {args.tokens} tokens per device, "
        f"{LINKS} links, Wormhole B0 model; outputs checked against the golden"
    )
    print(f"{'mesh':6s} {'fabric':7s} {'H':>6s} {'device us':>10s} {'fabric MB':>10s} {'link max MB':>12s} "
          f"{'link busy us':>13s}")  # fmt: skip
    for name in args.mesh:
        rows, cols = MESHES[name]
        ids = make_routing(rows * cols, args.tokens, seed=args.seed)
        mesh = emu.open_mesh_device(emu.MeshShape(rows, cols))
        mesh._mesh.set_fabric_num_links(LINKS)
        for topology, hidden in [(t, h) for t in args.topology for h in args.hidden]:
            mesh.fabric_topology = getattr(emu.Topology, topology)
            run(mesh, (rows, cols), ids, hidden)  # builds the kernels
            with tempfile.TemporaryDirectory() as scratch:
                case = f"{name}_{topology.lower()}_h{hidden}_t{args.tokens}"
                folder = args.profile / case if args.profile else Path(scratch)
                with ttnn_moe.profile(folder) as session:
                    run(mesh, (rows, cols), ids, hidden)
            (record,) = [r for r in session.ops if r.name == "all_to_all_dispatch_dense"]
            links = [link for d in record.devices for link in d.timing["links"]]
            fabric_mb = sum(d.counters["fabric"]["bytes"] for d in record.devices) / 1e6
            busiest = max(links, key=lambda link: link["busy_cycles"], default=None)
            link_mb = busiest["wire_bytes"] / 1e6 if busiest else 0.0
            busy_us = busiest["busy_cycles"] / record.devices[0].clock_ghz / 1e3 if busiest else 0.0
            print(
                f"{name:6s} {topology:7s} {hidden:6d} {record.device_ns() / 1e3:10.1f} {fabric_mb:10.2f} "
                f"{link_mb:12.2f} {busy_us:13.1f}"
            )


if __name__ == "__main__":
    sys.exit(main())
