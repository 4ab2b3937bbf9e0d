"""Benchmark of all_to_all_dispatch_dense on emulated meshes, by fabric counters.

    python benchmarks/dispatch.py             # decode and prefill on 4x8 and 16x8
    python benchmarks/dispatch.py decode      # one phase

DeepSeek-V3 sizes: H = 7168, 256 experts placed e // (E / devices) in row-major mesh
order, top-8 distinct experts per token drawn uniformly, dispatch along axis 0 (the
mesh rows; each column of the mesh is a dispatch line), Linear fabric. Per case:

- wall time of the op in the emulator (a CPU running the kernels: compare runs, do not
  read it as a hardware prediction; kernels are built once by a warm-up run first);
- fabric token payload (plain writes) against (unique (token, remote destination device)
  pairs) x H x 2 bytes, counted independently from the routing;
- routing metadata (fused write + increment packets, reported separately);
- bytes per physical link hop (max and mean over the links that carried traffic);
- the sparse layout of ttnn.all_to_all_dispatch for the same routing: it also sends a
  token once per destination device (same payload), its metadata is every token's K
  uint16 indices to every other device of the line, and every device holds B*D rows
  of H (all of the line's tokens), where the dense layout holds its expert blocks only.

capacity = the tile-aligned rows the busiest device needs for this routing. The combine
columns send the dispatched rows straight back (all_to_all_combine_dense with the tokens as
the reduced slot rows): its wall time and its payload (one row per slot).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import torch
from ttnn_moe.emu.tensor import from_shards
from ttnn_moe.golden import group_of

import ttnn_moe
from ttnn_moe import emu

HIDDEN = 7168
NUM_EXPERTS = 256
TOP_K = 8
AXIS = 0
PHASES = {"decode": 32, "prefill": 512}
MESHES = [(4, 8), (16, 8)]
MB = 1e6


@dataclass
class Row:
    case: str
    wall_s: float
    payload_mb: float
    payload_ratio: float  # payload bytes / (unique remote pairs x H x 2)
    metadata_kb: float
    link_max_mb: float
    link_mean_mb: float
    dense_rows: int  # capacity per device
    sparse_rows: int  # B*D rows per device in ttnn.all_to_all_dispatch's output
    sparse_metadata_kb: float
    combine_s: float
    combine_payload_mb: float


def make_routing(num_devices: int, tokens: int, seed: int = 0) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [
        torch.stack([torch.randperm(NUM_EXPERTS, generator=g)[:TOP_K] for _ in range(tokens)]).to(torch.int32)
        for _ in range(num_devices)
    ]


def routing_facts(ids: list[torch.Tensor], shape: tuple[int, int]) -> tuple[int, int]:
    """(unique (token, remote destination) pairs, tile-aligned rows of the busiest device)."""
    rows, cols = shape
    owner = torch.arange(NUM_EXPERTS) // (NUM_EXPERTS // (rows * cols))
    pairs = 0
    per_expert = torch.zeros(NUM_EXPERTS, dtype=torch.int64)
    for d, chosen in enumerate(ids):
        line = set(group_of(d, shape, AXIS))
        dest = owner[chosen.to(torch.int64)]  # (T, K)
        in_line = torch.tensor([[int(o) in line for o in row] for row in dest.tolist()])
        for row, keep in zip(dest.tolist(), in_line.tolist()):
            pairs += len({o for o, k in zip(row, keep) if k and o != d})
        per_expert += torch.bincount(chosen.to(torch.int64)[in_line], minlength=NUM_EXPERTS)
    blocks = (per_expert + 31) // 32 * 32
    busiest = int(torch.bincount(owner, weights=blocks.double(), minlength=rows * cols).max())
    return pairs, max(busiest, 32)


def dispatch_inputs(mesh: "emu.MeshDevice", ids: list[torch.Tensor], hidden: int) -> tuple:
    """Random bf16 tokens (1, T, hidden) and top-k weights beside the routing `ids`, and the expert
    mapping, one shard per device: the inputs of all_to_all_dispatch_dense."""
    n, tokens = len(ids), ids[0].shape[0]
    g = torch.Generator().manual_seed(1)
    x = from_shards(
        [torch.randn(1, tokens, hidden, generator=g).to(torch.bfloat16) for _ in range(n)],
        emu.bfloat16,
        emu.ROW_MAJOR_LAYOUT,
        mesh,
    )
    topk = from_shards([i.reshape(1, tokens, TOP_K) for i in ids], emu.uint32, emu.ROW_MAJOR_LAYOUT, mesh)
    weights = from_shards(
        [torch.rand(1, tokens, TOP_K, generator=g).to(torch.bfloat16) for _ in range(n)],
        emu.bfloat16,
        emu.ROW_MAJOR_LAYOUT,
        mesh,
    )
    mapping = from_shards([ttnn_moe.expert_mapping(NUM_EXPERTS, n)] * n, emu.int32, emu.ROW_MAJOR_LAYOUT, mesh)
    return x, topk, weights, mapping


def bench(shape: tuple[int, int], tokens: int, phase: str) -> Row:
    rows, cols = shape
    n = rows * cols
    line_size = shape[AXIS]
    ids = make_routing(n, tokens)
    pairs, capacity = routing_facts(ids, shape)
    mesh = emu.open_mesh_device(emu.MeshShape(rows, cols), grid=(1, 1))
    x, topk, weights, mapping = dispatch_inputs(mesh, ids, HIDDEN)
    start = time.perf_counter()
    out = ttnn_moe.all_to_all_dispatch_dense(x, topk, weights, mapping, cluster_axis=AXIS, capacity=capacity)
    wall = time.perf_counter() - start
    fabric = emu.last_run_counters()["fabric"]
    start = time.perf_counter()
    ttnn_moe.all_to_all_combine_dense(out.tokens, out.handle)
    combine_wall = time.perf_counter() - start
    combine_payload = sum(f["bytes"] for f in emu.last_run_counters()["fabric"]["flows"] if f["type"] == "write")
    by_type: dict[str, int] = {}
    for flow in fabric["flows"]:
        by_type[flow["type"]] = by_type.get(flow["type"], 0) + flow["bytes"]
    link_bytes = [t["bytes"] for t in fabric["links"].values() if t["bytes"]]
    payload = by_type.get("write", 0)
    return Row(
        case=f"{phase} {rows}x{cols} T={tokens}",
        wall_s=wall,
        payload_mb=payload / MB,
        payload_ratio=payload / (pairs * HIDDEN * 2) if pairs else float("nan"),
        metadata_kb=by_type.get("fused_write_atomic_inc", 0) / 1e3,
        link_max_mb=max(link_bytes, default=0) / MB,
        link_mean_mb=sum(link_bytes) / len(link_bytes) / MB if link_bytes else 0.0,
        dense_rows=capacity,
        sparse_rows=line_size * tokens,
        sparse_metadata_kb=n * (line_size - 1) * tokens * TOP_K * 2 / 1e3,
        combine_s=combine_wall,
        combine_payload_mb=combine_payload / MB,
    )


def warm_up() -> None:
    """Builds the kernels (shape-independent) so the timed runs measure execution only."""
    bench((1, 2), 4, "warm-up")


def main(argv: list[str]) -> None:
    phases = argv or list(PHASES)
    for phase in phases:
        if phase not in PHASES:
            raise SystemExit(f"unknown phase {phase!r}; choose from {sorted(PHASES)}")
    torch.set_num_threads(1)
    warm_up()
    header = (
        f"{'case':<24}{'wall s':>8}{'payload MB':>12}{'/pairsxHx2':>11}{'meta KB':>9}{'link max MB':>12}"
        f"{'link mean MB':>13}{'dense rows':>11}{'sparse rows':>12}{'sparse meta KB':>15}{'combine s':>10}"
        f"{'combine MB':>11}"
    )
    print(header)
    print("-" * len(header))
    for phase in phases:
        for shape in MESHES:
            r = bench(shape, PHASES[phase], phase)
            print(
                f"{r.case:<24}{r.wall_s:>8.2f}{r.payload_mb:>12.2f}{r.payload_ratio:>11.2f}{r.metadata_kb:>9.1f}"
                f"{r.link_max_mb:>12.2f}{r.link_mean_mb:>13.2f}{r.dense_rows:>11}{r.sparse_rows:>12}"
                f"{r.sparse_metadata_kb:>15.1f}{r.combine_s:>10.2f}{r.combine_payload_mb:>11.2f}"
            )
    print(
        "payload bytes of the sparse ttnn.all_to_all_dispatch layout are the same (one send per token and "
        "destination device); its output holds 'sparse rows' x H per device."
    )


if __name__ == "__main__":
    main(sys.argv[1:])
