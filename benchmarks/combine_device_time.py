"""Modeled device time of all_to_all_combine_dense alone, on one dispatch line of a TG or QUAD mesh.

    python benchmarks/combine_device_time.py [--mesh tg quad] [--tokens 32] [--hidden 256 7168]
                                             [--topology Linear Ring] [--profile DIR]

A column of the mesh is one dispatch line (axis 0) and runs alone: the other columns run the same
program on their own tokens at the same time, so one column's time is the op's. The slots are those
DeepSeek-V3 routing gives: 256 experts, 8 per device on TG 4x8 (32 per column), 2 per device on QUAD
16x8 (32 per column), top-8 drawn uniformly per token among all 256; every device of the column
holds `--tokens` tokens (32 at decode, 512 at prefill), and a device holds one slot per (source
position, token) that chose one of its experts, in ascending (position, token) as dispatch lays them
out. Rows are random bfloat16; the output is checked against ttnn_moe.golden. 8x8 worker grid,
4 links, the fabric Linear (a line: the far end is 15 hops away on QUAD) or Ring (the line closed,
as a torus-wired QUAD runs it: rows go the shorter way round, at most 8 hops). Each case runs once
to build the kernels, then once inside a `ttnn_moe.profile` session (Wormhole B0 time model): device
time (slowest device), fabric payload, the busiest link direction's bytes and the fabric bound (its
busy time), and the slots per device.
`--profile DIR` keeps the profiled sessions' ops_perf_results.csv and trace, one folder per case.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import torch
from ttnn_moe.emu.tensor import device_shards

import ttnn_moe
from ttnn_moe import emu, golden

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from combine_inputs import combine_inputs  # noqa: E402

NUM_EXPERTS = 256
TOP_K = 8
LINKS = 4
MESHES = {"tg": (4, 8), "quad": (16, 8)}
TOPOLOGIES = ("Linear", "Ring")


def column_slots(rows: int, cols: int, tokens: int, seed: int) -> list[torch.Tensor]:
    """Per device of column 0: its used slots, (source position, token) in ascending order."""
    g = torch.Generator().manual_seed(seed)
    per_device = NUM_EXPERTS // (rows * cols)
    chosen = torch.stack([torch.randperm(NUM_EXPERTS, generator=g)[:TOP_K] for _ in range(rows * tokens)])
    owner = chosen // per_device  # row-major device index, column (owner % cols)
    holders = []
    for position in range(rows):
        holds = ((owner % cols == 0) & (owner // cols == position)).any(dim=1)  # (rows * tokens,)
        pairs = holds.nonzero()[:, 0]
        holders.append(torch.stack([pairs // tokens, pairs % tokens], dim=1).to(torch.int32))
    return holders


def run(mesh, rows: int, tokens: int, hidden: int, used: list[torch.Tensor]) -> None:
    """Combine on the mesh's own fabric topology (the handle names none), checked against the golden."""
    handle, reduced_mesh, reduced, sources, counts = combine_inputs(
        mesh, used, tokens, cluster_axis=0, links=LINKS, hidden=hidden, seed=hidden
    )
    out = ttnn_moe.all_to_all_combine_dense(reduced_mesh, handle, strict=False)
    want = golden.all_to_all_combine_dense(reduced, sources, counts, (rows, 1), 0, 1, tokens)
    for d, (got, expected) in enumerate(zip(device_shards(out.output), want)):
        if not torch.equal(got, expected.to(torch.bfloat16)):
            raise SystemExit(f"H={hidden}: device {d}'s combine output differs from the golden")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mesh", nargs="+", choices=sorted(MESHES), default=["tg", "quad"])
    parser.add_argument("--tokens", type=int, default=32, help="tokens per device (32 decode, 512 prefill)")
    parser.add_argument("--hidden", type=int, nargs="+", default=[256, 7168])
    parser.add_argument("--topology", nargs="+", choices=TOPOLOGIES, default=list(TOPOLOGIES))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", type=Path, help="keep each case's profile (csv, trace) under this folder")
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(
        f"all_to_all_combine_dense on one column, {args.tokens} tokens per device, top-{TOP_K} of {NUM_EXPERTS}, "
        f"{LINKS} links, Wormhole B0 model; output checked against the golden"
    )
    print(f"{'mesh':6s} {'fabric':7s} {'H':>6s} {'slots/dev':>10s} {'device us':>10s} {'fabric MB':>10s} "
          f"{'link max MB':>12s} {'link busy us':>13s}")  # fmt: skip
    for name in args.mesh:
        rows, cols = MESHES[name]
        used = column_slots(rows, cols, args.tokens, args.seed)
        mesh = emu.open_mesh_device(emu.MeshShape(rows, 1))
        mesh._mesh.set_fabric_num_links(LINKS)
        for topology, hidden in [(t, h) for t in args.topology for h in args.hidden]:
            mesh.fabric_topology = getattr(emu.Topology, topology)
            run(mesh, rows, args.tokens, hidden, used)  # builds the kernels
            with tempfile.TemporaryDirectory() as scratch:
                case = f"{name}_{topology.lower()}_h{hidden}_t{args.tokens}"
                folder = args.profile / case if args.profile else Path(scratch)
                with ttnn_moe.profile(folder) as session:
                    run(mesh, rows, args.tokens, hidden, used)
            (record,) = [r for r in session.ops if r.name == "all_to_all_combine_dense"]
            links = [link for d in record.devices for link in d.timing["links"]]
            fabric_mb = sum(d.counters["fabric"]["bytes"] for d in record.devices) / 1e6
            busiest = max(links, key=lambda link: link["busy_cycles"], default=None)
            link_mb = busiest["wire_bytes"] / 1e6 if busiest else 0.0
            busy_us = busiest["busy_cycles"] / record.devices[0].clock_ghz / 1e3 if busiest else 0.0
            slots = sum(u.shape[0] for u in used) / rows
            print(
                f"{name:6s} {topology:7s} {hidden:6d} {slots:10.1f} {record.device_ns() / 1e3:10.1f} {fabric_mb:10.2f} "
                f"{link_mb:12.2f} {busy_us:13.1f}"
            )


if __name__ == "__main__":
    sys.exit(main())
