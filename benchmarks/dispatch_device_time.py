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

The last column is counted from the routing alone: token rows crossing the busiest chip-to-chip
direction (all its links together) as the op sends them (one unicast per (token, remote
destination)) / as a fabric multicast would (one packet per side of the source over the members
that need the row): how far a multicast could shorten the busiest link's time on this routing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import torch
from dispatch import NUM_EXPERTS, dispatch_inputs, make_routing
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


def busiest_link_rows(ids: list[torch.Tensor], shape: tuple[int, int], ring: bool) -> tuple[int, int]:
    """Token rows crossing the busiest chip-to-chip direction (unicast, multicast) on the op's routes: Linear
    straight along the line; Ring the shorter way, the device opposite forward from even positions."""
    rows, cols = shape
    line_size = rows  # AXIS 0: a line is a column
    owner = torch.arange(NUM_EXPERTS) // (NUM_EXPERTS // (rows * cols))
    unicast: dict[tuple[int, int, int], int] = {}
    multicast: dict[tuple[int, int, int], int] = {}

    def cross(counts, column, source, forward, hops):
        step = 1 if forward else -1
        for h in range(hops):
            here = (source + step * h) % line_size
            key = (column, here, (here + step) % line_size)
            counts[key] = counts.get(key, 0) + 1

    for d, chosen in enumerate(ids):
        position, column = divmod(d, cols)
        for token in chosen.tolist():
            destinations = {int(owner[e]) // cols for e in token if int(owner[e]) % cols == column} - {position}
            farthest = {}
            for q in destinations:
                if ring:
                    ahead, behind = (q - position) % line_size, (position - q) % line_size
                    forward = ahead < behind or (ahead == behind and position % 2 == 0)
                    hops = ahead if forward else behind
                else:
                    forward, hops = q > position, abs(q - position)
                cross(unicast, column, position, forward, hops)
                farthest[forward] = max(farthest.get(forward, 0), hops)
            for forward, hops in farthest.items():
                cross(multicast, column, position, forward, hops)
    return max(unicast.values(), default=0), max(multicast.values(), default=0)


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
          f"{'link busy us':>13s} {'link rows uni/mcast':>20s}")  # fmt: skip
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
            uni, mcast = busiest_link_rows(ids, (rows, cols), topology == "Ring")
            print(
                f"{name:6s} {topology:7s} {hidden:6d} {record.device_ns() / 1e3:10.1f} {fabric_mb:10.2f} "
                f"{link_mb:12.2f} {busy_us:13.1f} {f'{uni}/{mcast}':>20s}"
            )


if __name__ == "__main__":
    sys.exit(main())
