"""Modeled device time of tt-metal's moe_compute (ttnn.experimental.moe_compute, 0.81.1) on the emulator.

    python benchmarks/ttmetal_moe_compute_device_time.py [--rows 4 --cols 8 --axis 0 --tokens 32 --hidden 7168
                                                          --intermediate 2048 --experts-per-device 8 --k 8]
                                                         [--skip-stage --skip-one-device --skip-fullccl]

Three figures, all with the wheel's kernels unmodified and the Wormhole B0 time model (slowest device):
- the tilize stage on the given mesh (defaults: DeepSeek-V3's decode on a TG 4x8, 32 tokens per device
  dispatched down the column, a group of 128 tokens, hidden 7168, top-8 of 256 experts, 8 per device, drawn
  uniformly), with a stand-in for the ring (tests/kernels/emu/moe_chunk_sink.cpp, not storing the chunks) that
  answers the handshake at once: the op's front end with a ring that never holds a chunk back;
- the whole op on one device (LocalOutput: its dispatch group is itself), `--tokens` tokens each choosing all of
  its `--experts-per-device` experts (top-k = experts: every expert gets every token, the most a decode batch
  loads one device), hidden and intermediate as given, bfloat4_b weights prepared for the 12-core ring;
- the whole op on the FullCcl path on the given mesh (the decode: the ring stages every token's rows on the
  combine cores and selective_reduce_combine's kernels, in the same program, send them over the fabric to the
  token's device), the tilize stage's routing (top-k of all the mesh's experts, drawn uniformly), the same
  weights on every device, output_height_shard_dim 4, one link. At the defaults (TG, DeepSeek-V3's decode sizes)
  this takes about 11 minutes of wall time on a loaded 2-core host.
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
from ttmetal_moe_cases import per_device, replicated  # noqa: E402
from ttmetal_moe_compute_cases import GRID, routing, run_moe_compute, run_tilize_stage  # noqa: E402
from ttnn_moe._C import program as pd  # noqa: E402
from ttnn_moe.emu.generic_op import last_run_counters  # noqa: E402
from ttnn_moe.emu.ttmetal import moe_compute as mc  # noqa: E402
from ttnn_moe.emu.ttmetal import use_wheel  # noqa: E402

from tools.tt_wheel import ensure_ttnn_wheel  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4)
    parser.add_argument("--cols", type=int, default=8)
    parser.add_argument("--axis", type=int, default=0)
    parser.add_argument("--tokens", type=int, default=32, help="tokens per device")
    parser.add_argument("--hidden", type=int, default=7168)
    parser.add_argument("--intermediate", type=int, default=2048)
    parser.add_argument("--experts-per-device", type=int, default=8)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--skip-stage", action="store_true", help="leave out the tilize stage figure")
    parser.add_argument("--skip-one-device", action="store_true", help="leave out the one-device whole op figure")
    parser.add_argument("--skip-fullccl", action="store_true", help="leave out the FullCcl figure")
    args = parser.parse_args()
    rows, cols, axis = args.rows, args.cols, args.axis
    devices = rows * cols
    group = rows if axis == 0 else cols
    use_wheel(ensure_ttnn_wheel())
    mesh = emu.open_mesh_device(emu.MeshShape(rows, cols), grid=GRID)
    indices, scores, mapping = routing(rows, cols, axis, args.tokens, devices * args.experts_per_device, args.k, 1)
    x = torch.randn(devices, args.tokens * group, args.hidden).to(torch.bfloat16)
    if not args.skip_stage:
        tilize_stage(mesh, x, indices, scores, mapping, args)
    if not args.skip_one_device:
        whole_op(args.tokens, args.hidden, args.intermediate, args.experts_per_device)
    if not args.skip_fullccl:
        full_ccl(mesh, x, indices, scores, mapping, args)


def tilize_stage(mesh, x, indices, scores, mapping, args) -> None:
    rows, cols, axis = args.rows, args.cols, args.axis
    group = rows if axis == 0 else cols
    with tempfile.TemporaryDirectory() as scratch:
        with ttnn_moe.profile(scratch) as session:
            run_tilize_stage(mesh, x, indices, scores, mapping, axis=axis, local_experts=args.experts_per_device,
                             store_chunks=False)  # fmt: skip
    (record,) = session.ops
    print(f"moe_compute tilize stage, {rows}x{cols} axis {axis}, {args.tokens * group} tokens per group, "
          f"hidden {args.hidden}, {args.experts_per_device} experts per device, top-{args.k}")  # fmt: skip
    print(f"  modeled device time: {record.device_ns() / 1e3:.1f} us (slowest device)")


def whole_op(tokens: int, hidden: int, intermediate: int, experts: int) -> None:
    mesh = emu.open_mesh_device(emu.MeshShape(1, 1), grid=GRID)
    gen = torch.Generator().manual_seed(2)
    indices = torch.stack([torch.randperm(experts, generator=gen) for _ in range(tokens)]).unsqueeze(0)
    scores = torch.rand(1, tokens, experts, generator=gen).to(torch.bfloat16)
    # DeepSeek-V3's 256 experts: this device's first `experts`, the rest on other devices (which the tokens here do
    # not choose).
    mapping = (torch.arange(256) >= experts).to(torch.int64).unsqueeze(0)
    x = torch.randn(1, tokens, hidden, generator=gen).to(torch.bfloat16)
    w0, w1 = (torch.randn(1, 1, experts, hidden, intermediate, generator=gen) / hidden**0.5 for _ in range(2))
    w2 = torch.randn(1, 1, experts, intermediate, hidden, generator=gen) / intermediate**0.5
    with tempfile.TemporaryDirectory() as scratch:
        with ttnn_moe.profile(scratch) as session:
            _, _, _, counters = run_moe_compute(mesh, x, indices, scores, mapping, w0, w1, w2)
    (record,) = session.ops
    print(f"moe_compute whole op, one device, {tokens} tokens x {experts} experts (every expert every token), "
          f"hidden {hidden}, intermediate {intermediate}, bfloat4_b weights")  # fmt: skip
    print(f"  modeled device time: {record.device_ns() / 1e3:.1f} us, {counters['tile_matmuls']} tile matmuls")


def full_ccl(mesh, x, indices, scores, mapping, args) -> None:
    rows, cols, axis = args.rows, args.cols, args.axis
    gen = torch.Generator().manual_seed(3)
    shape = (1, 1, args.experts_per_device, args.hidden, args.intermediate)
    w0, w1 = (torch.randn(*shape, generator=gen) / args.hidden**0.5 for _ in range(2))
    w2 = torch.randn(1, 1, args.experts_per_device, args.intermediate, args.hidden, generator=gen)
    w2 = w2 / args.intermediate**0.5
    weights = mc.place_same_weights(mesh, w0[0], w1[0], w2[0])
    tensors = [
        per_device(mesh, x.unsqueeze(1), emu.bfloat16),
        per_device(mesh, indices.unsqueeze(1).to(torch.int32), emu.uint16),
        per_device(mesh, scores.unsqueeze(1), emu.bfloat16),
        replicated(mesh, mapping.to(torch.int32), emu.uint16),
    ]
    mux = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(1, 0), pd.CoreCoord(3, 1))])
    with tempfile.TemporaryDirectory() as scratch:
        with ttnn_moe.profile(scratch) as session:
            mc.moe_compute_full_ccl(*tensors, weights, cluster_axis=axis, mux_core_range_set=mux)
        counters = last_run_counters()
    (record,) = session.ops
    group = rows if axis == 0 else cols
    print(f"moe_compute FullCcl, {rows}x{cols} axis {axis}, {args.tokens * group} tokens per group, hidden "
          f"{args.hidden}, intermediate {args.intermediate}, {args.experts_per_device} experts per device, "
          f"top-{args.k}, bfloat4_b weights")  # fmt: skip
    print(f"  modeled device time: {record.device_ns() / 1e3:.1f} us (slowest device), "
          f"{counters['tile_matmuls']} tile matmuls")  # fmt: skip


if __name__ == "__main__":
    main()
