"""Modeled device time of the tilize stage of tt-metal's moe_compute (ttnn.experimental.moe_compute, 0.81.1).

    python benchmarks/ttmetal_moe_compute_device_time.py [--rows 4 --cols 8 --axis 0 --tokens 32 --hidden 7168
                                                          --experts-per-device 8 --k 8]

The defaults are DeepSeek-V3's decode on a TG 4x8: 32 tokens per device dispatched down the column (axis 0, a
dispatch group of 128 tokens), hidden 7168, top-8 of 256 experts, 8 per device (expert e on device e // 8). The
tokens' experts are drawn uniformly from all 256, so a device's stage sees the tokens of its group that chose one
of its experts through its own column.

Only the tilize stage runs (the matmul ring's compute kernel does not build on the emulator yet): the wheel's
tilize_reader / tilize_writer / tilize_compute on the 4 tilize cores, chunks multicast to the 12 ring cores, where
a stand-in (tests/kernels/emu/moe_chunk_sink.cpp, not storing the chunks) answers the handshake at once. The
printed time is the stage's modeled device time (Wormhole B0 time model, slowest device): a lower bound of the
op's front end, with a ring that never holds a chunk back.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import torch

import ttnn_moe
from ttnn_moe import emu

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # tools (the wheel), and the stage's runner and routing
from ttmetal_moe_compute_cases import GRID, routing, run_tilize_stage  # noqa: E402
from ttnn_moe.emu.ttmetal import use_wheel  # noqa: E402

from tools.tt_wheel import ensure_ttnn_wheel  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4)
    parser.add_argument("--cols", type=int, default=8)
    parser.add_argument("--axis", type=int, default=0)
    parser.add_argument("--tokens", type=int, default=32, help="tokens per device")
    parser.add_argument("--hidden", type=int, default=7168)
    parser.add_argument("--experts-per-device", type=int, default=8)
    parser.add_argument("--k", type=int, default=8)
    args = parser.parse_args()
    rows, cols, axis = args.rows, args.cols, args.axis
    devices = rows * cols
    group = rows if axis == 0 else cols
    use_wheel(ensure_ttnn_wheel())
    mesh = emu.open_mesh_device(emu.MeshShape(rows, cols), grid=GRID)
    indices, scores, mapping = routing(rows, cols, axis, args.tokens, devices * args.experts_per_device, args.k, 1)
    x = torch.randn(devices, args.tokens * group, args.hidden).to(torch.bfloat16)
    with tempfile.TemporaryDirectory() as scratch:
        with ttnn_moe.profile(scratch) as session:
            run_tilize_stage(mesh, x, indices, scores, mapping, axis=axis, local_experts=args.experts_per_device,
                             store_chunks=False)  # fmt: skip
    (record,) = session.ops
    print(f"moe_compute tilize stage, {rows}x{cols} axis {axis}, {args.tokens * group} tokens per group, "
          f"hidden {args.hidden}, {args.experts_per_device} experts per device, top-{args.k}")  # fmt: skip
    print(f"  modeled device time: {record.device_ns() / 1e3:.1f} us (slowest device)")


if __name__ == "__main__":
    main()
