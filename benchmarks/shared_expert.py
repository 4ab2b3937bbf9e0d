"""Modeled device time of the DeepSeek-V3 shared expert's moe_bmm launches on one TG device.

    python benchmarks/shared_expert.py                    # decode (32 rows) and prefill (2048 rows)
    python benchmarks/shared_expert.py --rows 512 --hidden 1024

Per device of a TG row (8 columns): x (B, H) the row's tokens, the shared w1/w3 (H, 2 Is/C) gate and up
interleaved (Is = 2048, so Is/C = 256), SwiGLU fused, one expert taking every row (counts [[B]],
offsets [[0]]); then w2 (Is/C, H) adding the routed share (B, H). The routed share arrives from the
combine ROW_MAJOR: the table shows the down projection with that addend as it is (tilized in the op)
and, for comparison, the older way, ttnn.to_layout to TILE followed by the launch with a TILE addend.
For each launch: modeled time (Wormhole B0 model, 8x8 grid), its binding resource and lower bound,
and the weight bytes read from DRAM against the weights' size (1.00: each weight tile read once).
"""

from __future__ import annotations

import argparse
import sys
import tempfile

import torch
from ttnn_moe.profiler.bounds import op_bounds

import ttnn_moe
from ttnn_moe import emu

HIDDEN = 7168
SHARED_PER_DEVICE = 2048 // 8  # DeepSeek-V3's shared intermediate over the 8 columns of a row
ROWS = {"decode": 32, "prefill": 2048}


def _launches(device, rows: int, hidden: int) -> dict[str, int]:
    """Runs the launches; returns the DRAM address of the weights each one reads."""
    g = torch.Generator().manual_seed(0)
    tile = lambda t: emu.from_torch(t, dtype=emu.bfloat16, layout=emu.TILE_LAYOUT, device=device)  # noqa: E731
    column = lambda v: emu.from_torch(  # noqa: E731
        torch.tensor([[v]], dtype=torch.int32), dtype=emu.uint32, layout=emu.ROW_MAJOR_LAYOUT, device=device
    )
    every_row, at_row_0 = column(rows), column(0)
    x = tile(torch.randn(rows, hidden, generator=g))
    w1_w3 = tile(torch.randn(1, hidden, 2 * SHARED_PER_DEVICE, generator=g) * 0.02)
    w2 = tile(torch.randn(1, SHARED_PER_DEVICE, hidden, generator=g) * 0.02)
    routed = emu.from_torch(
        torch.randn(1, rows, hidden, generator=g), dtype=emu.bfloat16, layout=emu.ROW_MAJOR_LAYOUT, device=device
    )
    hidden_rows = ttnn_moe.moe_bmm(x, w1_w3, every_row, expert_offsets=at_row_0, activation="swiglu", strict=False)
    ttnn_moe.moe_bmm(hidden_rows, w2, every_row, expert_offsets=at_row_0, addend=routed, strict=False)
    routed_tiles = emu.to_layout(emu.reshape(routed, (rows, hidden)), emu.TILE_LAYOUT)
    ttnn_moe.moe_bmm(hidden_rows, w2, every_row, expert_offsets=at_row_0, addend=routed_tiles, strict=False)
    return {"w1_w3": w1_w3.to_arg().address, "w2": w2.to_arg().address}


def print_table(phase: str, rows: int, hidden: int) -> None:
    device = emu.open_device(device_id=0, grid=(8, 8))
    with tempfile.TemporaryDirectory() as directory, ttnn_moe.profile(directory) as session:
        addresses = _launches(device, rows, hidden)
    labels = [
        ("moe_bmm shared w1/w3 + SwiGLU", "w1_w3", 2 * SHARED_PER_DEVICE),
        ("moe_bmm shared w2 + RM addend", "w2", hidden),
        ("ttnn.to_layout routed -> TILE", None, 0),
        ("moe_bmm shared w2 + TILE addend", "w2", hidden),
    ]
    print(f"\n{phase}: {rows} rows, H={hidden}, Is/C={SHARED_PER_DEVICE}, bf16 weights, Wormhole B0 model, 8x8 grid")
    header = f"{'launch':<34}{'modeled us':>11}{'bound':>9}{'lower us':>10}{'w read / w':>12}"
    print(header)
    print("-" * len(header))
    for op, (label, weight, cols) in zip(session.ops, labels):
        top = op_bounds(op, session.params)[0]
        ratio = ""
        if weight is not None:
            kd = hidden if weight == "w1_w3" else SHARED_PER_DEVICE
            read = op.devices[0].counters["dram_buffers"][addresses[weight]]["bytes_read"]
            ratio = f"{read / (kd * cols * 2):.2f}"
        print(f"{label:<34}{op.device_ns() / 1e3:>11.2f}{top.resource:>9}{top.lower_ns / 1e3:>10.2f}{ratio:>12}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, help="one row count instead of decode and prefill")
    parser.add_argument("--hidden", type=int, default=HIDDEN, help="H (DeepSeek-V3: 7168)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    phases = {"rows": args.rows} if args.rows else ROWS
    for phase, rows in phases.items():
        print_table(phase, rows, args.hidden)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
