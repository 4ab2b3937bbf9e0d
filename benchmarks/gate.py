"""Modeled device time of the DeepSeek-V3 router: our moe_gate against tt-metal's deepseek_grouped_gate.

    python benchmarks/gate.py [--decode-tokens 32] [--prefill-tokens 512]

Per device, DeepSeek-V3 routing (256 experts, 8 groups, top-4 groups, top-8). Every device of a mesh row routes
the row's tokens with the same program, so one device's time is the mesh's: TG (4x8) and QUAD (16x8) alike
route 32 tokens per row at decode and, at a 2048-token TG prefill, 512. Our moe_gate takes x (T, 7168) and the
gate weight and runs the gate matmul itself, with the weight in bfloat16 (a checkpoint's router weight, what
the model's layer passes) and in float32; ttnn.experimental.deepseek_grouped_gate (tt-metal 0.81.1's kernels
from the wheel) takes the logits, so its time excludes the matmul that produces them (its ttnn.linear is not
run here: the last line of each phase is that matmul's floor, the bf16 gate weight and x read once at the
chip's DRAM bandwidth). Our op with H = 32 (one tile of x, the smallest matmul it runs) shows what its routing
costs without the matmul. Each op is recorded by `ttnn_moe.profile` (Wormhole B0 time model, an 8x8 worker
grid) after a first pass that builds the kernels; DRAM MB is what its kernels read from DRAM, and the floor
the largest of its compute, DRAM and NOC-port bounds (ttnn_moe.profiler.bounds).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import torch
import ttnn_moe.emu as ttnn
from ttnn_moe.emu.ttmetal import use_wheel
from ttnn_moe.emu.ttmetal.deepseek_grouped_gate import deepseek_grouped_gate
from ttnn_moe.profiler.bounds import op_bounds

import ttnn_moe

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tools package
from tools.tt_wheel import ensure_ttnn_wheel  # noqa: E402

EXPERTS, HIDDEN = 256, 7168
# Wormhole B0's whole-chip DRAM bandwidth in the model (ttnn_moe/cpp/emu/timing/wormhole_b0.cpp), bytes per ns.
DRAM_BYTES_PER_NS = 267.0
ROUTING = {"n_group": 8, "topk_group": 4, "top_k": 8, "routed_scaling_factor": 2.5}


def run_ours(device, tokens: int, hidden: int, weight_dtype, gen: torch.Generator) -> None:
    x = torch.randn(tokens, hidden, generator=gen).bfloat16()
    w = torch.randn(EXPERTS, hidden, generator=gen) / hidden**0.5
    bias = 0.02 * torch.randn(EXPERTS, generator=gen)
    ttnn_moe.moe_gate(
        ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device),
        ttnn.from_torch(w, dtype=weight_dtype, layout=ttnn.TILE_LAYOUT, device=device),
        ttnn.from_torch(bias, dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device),
        **ROUTING,
    )


def run_theirs(device, tokens: int, gen: torch.Generator) -> None:
    scores = torch.randn(1, 1, tokens, EXPERTS, generator=gen)
    bias = (0.02 * torch.randn(EXPERTS, generator=gen)).expand(1, 1, tokens, EXPERTS)
    to_device = lambda t: ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)  # noqa: E731
    deepseek_grouped_gate(to_device(scores), to_device(bias), route_scale=ROUTING["routed_scaling_factor"])


def gate_matmul_dram_bound_us(tokens: int) -> float:
    """The least a gate matmul producing the logits can take: reading the bf16 gate weight and x once at the
    chip's DRAM bandwidth (what tt-metal's ttnn.linear adds before deepseek_grouped_gate; not run here)."""
    return (EXPERTS * HIDDEN + tokens * HIDDEN) * 2 / DRAM_BYTES_PER_NS / 1e3


def measure(tokens: int) -> list[tuple[str, float, float, str]]:
    """(op, modeled us, DRAM MB read, its floor) per case, the floor of our op's full matmul."""
    device = ttnn.open_device(grid=(8, 8))
    cases = [
        (
            f"moe_gate (ours, x {tokens}x{HIDDEN}, bf16 weight)",
            lambda g: run_ours(device, tokens, HIDDEN, ttnn.bfloat16, g),
        ),
        (
            f"moe_gate (ours, x {tokens}x{HIDDEN}, fp32 weight)",
            lambda g: run_ours(device, tokens, HIDDEN, ttnn.float32, g),
        ),
        (
            f"moe_gate (ours, x {tokens}x32: routing + 1-tile matmul)",
            lambda g: run_ours(device, tokens, 32, ttnn.bfloat16, g),
        ),
        (f"deepseek_grouped_gate (tt-metal, logits {tokens}x{EXPERTS})", lambda g: run_theirs(device, tokens, g)),
    ]
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        for name, run in cases:
            run(torch.Generator().manual_seed(0))  # builds the kernels
            with ttnn_moe.profile(scratch) as session:
                run(torch.Generator().manual_seed(0))
            op = session.ops[-1]
            bound = op_bounds(op, session.params)[0]
            dram_mb = max(d.counters["noc_bytes_read_dram"] for d in op.devices) / 1e6
            results.append((name, op.device_ns() / 1e3, dram_mb, f"{bound.resource} {bound.lower_ns / 1e3:.1f}"))
    floor_name = f"  + gate matmul for theirs: DRAM-bound floor (not run) {tokens}x{HIDDEN}"
    matmul_mb = (EXPERTS * HIDDEN + tokens * HIDDEN) * 2 / 1e6
    results.append((floor_name, gate_matmul_dram_bound_us(tokens), matmul_mb, ""))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decode-tokens", type=int, default=32, help="tokens per device at TG decode")
    parser.add_argument("--prefill-tokens", type=int, default=512, help="tokens per device of a prefill chunk")
    args = parser.parse_args()
    use_wheel(ensure_ttnn_wheel())
    print("DeepSeek-V3 router, one device, 8x8 worker grid, Wormhole B0 model: modeled device time")
    print(f"{'phase':8s} {'op':62s} {'device us':>10s} {'DRAM MB':>8s}  floor us")
    for phase, tokens in (("decode", args.decode_tokens), ("prefill", args.prefill_tokens)):
        for name, us, dram_mb, floor in measure(tokens):
            print(f"{phase:8s} {name:62s} {us:10.1f} {dram_mb:8.2f}  {floor}")


if __name__ == "__main__":
    main()
