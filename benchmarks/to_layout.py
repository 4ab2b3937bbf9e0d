"""Modeled device time of ttnn.to_layout on the emulator at DeepSeek-V3's hidden size (7168).

    python benchmarks/to_layout.py

One device, 8x8 worker grid, Wormhole B0 model, bfloat16. The layer's conversions: its x (B, H)
to ROW_MAJOR before dispatch (TG/QUAD decode B = 32, TG prefill B = 512 per mesh row), a row's
hidden slice (B, H/8), and the combined rows back to TILE. Each conversion runs once to build its
kernels, then once inside `ttnn_moe.profile`; the cores column is the work split's core count
(`ttnn_moe/python/ttnn_moe/emu/layout_work_split.py`).
"""

from __future__ import annotations

import argparse
import math
import tempfile

import torch
import ttnn_moe.emu as ttnn
from ttnn_moe.emu.layout_work_split import tilize_split, untilize_split

import ttnn_moe

HIDDEN, COLUMNS = 7168, 8


def measure(device, rows: int, width: int, to_rows: bool) -> tuple[float, int]:
    x = torch.randn(rows, width, generator=torch.Generator().manual_seed(0)).bfloat16()
    source = ttnn.from_torch(
        x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT if to_rows else ttnn.ROW_MAJOR_LAYOUT, device=device
    )
    target = ttnn.ROW_MAJOR_LAYOUT if to_rows else ttnn.TILE_LAYOUT
    ttnn.to_layout(source, target)  # builds the kernels
    with tempfile.TemporaryDirectory() as scratch, ttnn_moe.profile(scratch) as session:
        ttnn.to_layout(source, target)
    grid = device.compute_with_storage_grid_size()
    sizes = dict(tile_bytes=2048, cores=grid.x * grid.y, l1_bytes=device.device_limits().l1_bytes_per_core)
    tiles = (math.ceil(rows / 32), math.ceil(width / 32))
    if to_rows:
        split = untilize_split(*tiles, codegen_dtype=True, tile_aligned=rows % 32 == 0 and width % 32 == 0, **sizes)
    else:
        split = tilize_split(*tiles, **sizes)
    return session.ops[-1].device_ns() / 1e3, len(split)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decode-rows", type=int, default=32)
    parser.add_argument("--prefill-rows", type=int, default=512)
    args = parser.parse_args()
    device = ttnn.open_device(grid=(8, 8))
    cases = [
        ("x -> ROW_MAJOR, decode", args.decode_rows, HIDDEN, True),
        ("x -> ROW_MAJOR, prefill", args.prefill_rows, HIDDEN, True),
        ("hidden slice -> ROW_MAJOR, decode", args.decode_rows, HIDDEN // COLUMNS, True),
        ("hidden slice -> ROW_MAJOR, prefill", args.prefill_rows, HIDDEN // COLUMNS, True),
        ("routed rows -> TILE, decode", args.decode_rows, HIDDEN, False),
        ("routed rows -> TILE, prefill", args.prefill_rows, HIDDEN, False),
    ]
    print("ttnn.to_layout, bfloat16, one device, 8x8 worker grid, Wormhole B0 model")
    print(f"{'conversion':36s} {'shape':>12s} {'cores':>6s} {'device us':>10s}")
    for name, rows, width, to_rows in cases:
        us, cores = measure(device, rows, width, to_rows)
        print(f"{name:36s} {f'{rows}x{width}':>12s} {cores:6d} {us:10.2f}")


if __name__ == "__main__":
    main()
