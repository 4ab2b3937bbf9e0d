"""Benchmarks of the single-device MoE ops on the emulator (mini config), by counters.

    python benchmarks/ops.py            # every op
    python benchmarks/ops.py moe_bmm    # one op

Each op contributes one `bench_<op>(device) -> list[Row]` function registered in
BENCHMARKS; main() prints one table per op. Wall times are the emulator's (a CPU
running the kernels), useful to compare runs, not a hardware prediction; the
counters (tile matmuls, DRAM bytes) are what the kernels really asked for.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
import ttnn_moe.emu as ttnn

import ttnn_moe

# Mini config of the DeepSeek-V3 MoE layer on one device.
NUM_LOCAL_EXPERTS = 8
TOKENS = 128
HIDDEN = 1024
INTERMEDIATE = 256
NUM_EXPERTS = 256  # global experts; this device holds experts 0 .. NUM_LOCAL_EXPERTS - 1
TOP_K = 8
REPEATS = 3


@dataclass
class Row:
    case: str
    wall_ms: float
    tile_matmuls: int
    tile_matmuls_needed: int
    weight_bytes_read: int
    weight_bytes_distinct: int
    weight_bytes_active: int


def routing_counts(kind: str, seed: int = 0) -> list[int]:
    """Assignments per local expert when TOKENS tokens pick TOP_K of NUM_EXPERTS distinct experts.

    uniform: every expert equally likely (a few tokens per local expert, some get none);
    skewed: Zipf-like popularity 1/(e+1) with the popular experts on this device.
    """
    gen = torch.Generator().manual_seed(seed)
    if kind == "uniform":
        probs = torch.ones(NUM_EXPERTS)
    elif kind == "skewed":
        probs = 1.0 / torch.arange(1, NUM_EXPERTS + 1, dtype=torch.float32)
    else:
        raise ValueError(f"routing kind must be uniform or skewed, got {kind!r}")
    choice = torch.multinomial(probs.expand(TOKENS, -1), TOP_K, replacement=False, generator=gen)
    return torch.bincount(choice.reshape(-1), minlength=NUM_EXPERTS)[:NUM_LOCAL_EXPERTS].tolist()


def _timed(run: Callable[[], object]) -> tuple[float, dict]:
    """Median wall time (ms) of REPEATS runs after a warm-up (kernel builds), and the last counters."""
    run()
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), ttnn.last_run_counters()


def bench_moe_bmm(device) -> list[Row]:
    """w1/w3 shape (Kd=H, N=I) and w2 shape (Kd=I, N=H), uniform and skewed routing, plus the
    dense baseline: every expert on every token (count_l = T), i.e. a plain batched matmul.

    w read / w active: each core reads every weight column of its share once, so the excess
    over 1.00 is at most one column per boundary between two cores' shares."""
    rows = []
    gen = torch.Generator().manual_seed(1)
    for proj, kd, n in (("w1", HIDDEN, INTERMEDIATE), ("w2", INTERMEDIATE, HIDDEN)):
        x = ttnn.from_torch(
            torch.randn(NUM_LOCAL_EXPERTS, TOKENS, kd, generator=gen),
            dtype=ttnn.bfloat16,
            layout=ttnn.TILE_LAYOUT,
            device=device,
        )
        w = ttnn.from_torch(
            torch.randn(NUM_LOCAL_EXPERTS, kd, n, generator=gen),
            dtype=ttnn.bfloat16,
            layout=ttnn.TILE_LAYOUT,
            device=device,
        )
        w_arg = w.to_arg()
        kt, nt = kd // 32, n // 32
        for kind in ("uniform", "skewed", "dense"):
            counts = [TOKENS] * NUM_LOCAL_EXPERTS if kind == "dense" else routing_counts(kind)
            counts_d = ttnn.from_torch(
                torch.tensor(counts, dtype=torch.int32).reshape(-1, 1),
                dtype=ttnn.uint32,
                layout=ttnn.ROW_MAJOR_LAYOUT,
                device=device,
            )
            wall_ms, counters = _timed(lambda: ttnn_moe.moe_bmm(x, w, counts_d, strict=False))
            traffic = counters["dram_buffers"].get(w_arg.address, {"bytes_read": 0, "unique_pages_read": 0})
            active = sum(1 for c in counts if c > 0)
            rows.append(
                Row(
                    case=f"{proj} Kd={kd} N={n} {kind} counts={counts}",
                    wall_ms=wall_ms,
                    tile_matmuls=counters["tile_matmuls"],
                    tile_matmuls_needed=sum(math.ceil(c / 32) for c in counts) * kt * nt,
                    weight_bytes_read=traffic["bytes_read"],
                    weight_bytes_distinct=traffic["unique_pages_read"] * w_arg.page_size,
                    weight_bytes_active=active * kt * nt * w_arg.page_size,
                )
            )
    return rows


@dataclass
class DataRow:
    """A data-movement op: wall time and DRAM traffic, with the bytes its contract needs."""

    case: str
    wall_ms: float
    dram_bytes_read: int
    dram_bytes_written: int
    payload_bytes_read: int  # bytes of the main operand the op read (x rows / y rows)
    payload_bytes_needed: int  # bytes of that operand the assignments need


# The routing ops run on one device (a 1x1 mesh), which then holds all of its E experts: here
# the E_l experts above, each token picking ROUTING_TOP_K of them.
ROUTING_TOP_K = 2


def _routing_tables(kind: str, seed: int = 0):
    """(T, ROUTING_TOP_K) ids over the device's E_l experts, bf16 weights, and the (1, 1, E_l, 1) mapping."""
    gen = torch.Generator().manual_seed(seed)
    probs = torch.ones(NUM_LOCAL_EXPERTS) if kind == "uniform" else 1.0 / torch.arange(1, NUM_LOCAL_EXPERTS + 1).float()
    ids = torch.multinomial(probs.expand(TOKENS, -1), ROUTING_TOP_K, replacement=False, generator=gen).int()
    weights = torch.rand(TOKENS, ROUTING_TOP_K, generator=gen).bfloat16()
    return ids, weights, ttnn_moe.expert_mapping(NUM_LOCAL_EXPERTS, 1)


def bench_routing_ops(device) -> list[DataRow]:
    """prepare_moe_routing_tensors, scatter_moe_input and local_reduce_moe_output, uniform and skewed.

    payload: x rows read by scatter vs assignments * H * 2; y rows read by local_reduce vs the
    same (1.00 = only assigned rows are touched: work linear in assignments)."""
    rows = []

    def rm(t, dtype):
        return ttnn.from_torch(t, dtype=dtype, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)

    for kind in ("uniform", "skewed"):
        ids, weights, mapping = _routing_tables(kind)
        ids_d, weights_d, mapping_d = rm(ids, ttnn.uint32), rm(weights, ttnn.bfloat16), rm(mapping, ttnn.int32)
        tables = ttnn_moe.prepare_moe_routing_tensors(ids_d, weights_d, mapping_d, strict=False)
        counts, tokens, token_weights, idx_map, _ = tables
        assignments = int(ttnn.to_torch(counts).sum())
        needed = assignments * HIDDEN * 2
        x = rm(torch.randn(TOKENS, HIDDEN).bfloat16(), ttnn.bfloat16)
        y = rm(torch.randn(NUM_LOCAL_EXPERTS, TOKENS, HIDDEN).bfloat16(), ttnn.bfloat16)
        cases = (
            (
                "prepare_moe_routing_tensors",
                None,
                lambda: ttnn_moe.prepare_moe_routing_tensors(ids_d, weights_d, mapping_d, strict=False),
            ),
            ("scatter_moe_input", x, lambda: ttnn_moe.scatter_moe_input(x, counts, tokens)),
            (
                "local_reduce_moe_output",
                y,
                lambda: ttnn_moe.local_reduce_moe_output(y, idx_map, token_weights, counts, num_out_rows=TOKENS),
            ),
        )
        for name, payload, run in cases:
            wall_ms, counters = _timed(run)
            payload_read = 0
            if payload is not None:
                payload_read = counters["dram_buffers"].get(payload.to_arg().address, {"bytes_read": 0})["bytes_read"]
            rows.append(
                DataRow(
                    case=f"{name} {kind} assignments={assignments}",
                    wall_ms=wall_ms,
                    dram_bytes_read=counters["noc_bytes_read_dram"],
                    dram_bytes_written=counters["noc_bytes_written_dram"],
                    payload_bytes_read=payload_read,
                    payload_bytes_needed=needed if payload is not None else 0,
                )
            )
    return rows


BENCHMARKS: dict[str, Callable] = {"moe_bmm": bench_moe_bmm, "routing_ops": bench_routing_ops}


def print_data_table(name: str, rows: list[DataRow]) -> None:
    print(
        f"\n== {name} (E_l=E={NUM_LOCAL_EXPERTS} on one device, T={TOKENS}, H={HIDDEN}, top-{ROUTING_TOP_K}, 8x8 cores)"
    )
    print(f"{'case':<62} {'wall ms':>8} {'DRAM rd KB':>10} {'DRAM wr KB':>10} {'payload rd/needed':>18}")
    for r in rows:
        ratio = f"{r.payload_bytes_read / r.payload_bytes_needed:.2f}" if r.payload_bytes_needed else "-"
        print(
            f"{r.case:<62} {r.wall_ms:8.1f} {r.dram_bytes_read / 1e3:10.1f} {r.dram_bytes_written / 1e3:10.1f} "
            f"{ratio:>18}"
        )


def print_table(name: str, rows: list[Row]) -> None:
    if rows and isinstance(rows[0], DataRow):
        print_data_table(name, rows)
        return
    print(
        f"\n== {name} (E_l={NUM_LOCAL_EXPERTS} of E={NUM_EXPERTS}, T={TOKENS}, H={HIDDEN}, I={INTERMEDIATE}, "
        f"top-{TOP_K}, 8x8 cores)"
    )
    print(
        f"{'case':<62} {'wall ms':>8} {'matmuls':>8} {'needed':>8} {'ratio':>6} "
        f"{'w read MB':>9} {'w distinct MB':>13} {'w active MB':>11} {'read/active':>11}"
    )
    for r in rows:
        ratio = r.tile_matmuls / r.tile_matmuls_needed if r.tile_matmuls_needed else float("nan")
        w_ratio = r.weight_bytes_read / r.weight_bytes_active if r.weight_bytes_active else float("nan")
        print(
            f"{r.case:<62} {r.wall_ms:8.1f} {r.tile_matmuls:8d} {r.tile_matmuls_needed:8d} {ratio:6.2f} "
            f"{r.weight_bytes_read / 1e6:9.3f} {r.weight_bytes_distinct / 1e6:13.3f} "
            f"{r.weight_bytes_active / 1e6:11.3f} {w_ratio:11.2f}"
        )


def main(argv: list[str]) -> int:
    names = argv or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s) {unknown}; known: {list(BENCHMARKS)}", file=sys.stderr)
        return 2
    device = ttnn.open_device(grid=(8, 8))
    try:
        for name in names:
            print_table(name, BENCHMARKS[name](device))
    finally:
        ttnn.close_device(device)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
