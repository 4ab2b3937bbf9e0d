"""Modeled device time of tt-metal's selective_reduce_combine (the optimized decode path's combine) at TG decode.

    python benchmarks/selective_combine_device_time.py [--rows 4 --cols 8 --axis 0 --tokens 32 --hidden 256 7168]

The classic flow's geometry (`benchmarks/vs_ttmetal.py`): a TG 4x8 mesh, 32 tokens per mesh row, which every
device of the row holds after the TP all-gather, dispatched down the columns (axis 0: 4 devices, 128 tokens per
group); 256 experts, 8 per device, top-8, each token's choices among all 256 experts (the ones in its column are
this column's to combine). The op runs as tt-metal's 6U / TG tests configure it: a 4x4 grid of worker cores
(token-parallel 4 x data-parallel 4), 4 links, 8 mux cores. Each hidden size is run once to build the kernels,
then once inside a `ttnn_moe.profile` session (Wormhole B0 time model): the printed time is the op's modeled
device time (slowest device), and its fabric payload.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # tools, and the routing helpers of the golden

import ttmetal_selective_combine_golden as routing  # noqa: E402
from ttnn_moe._C import program as pd  # noqa: E402
from ttnn_moe.emu import fabric as emu_fabric  # noqa: E402
from ttnn_moe.emu.tensor import device_shards, from_shards  # noqa: E402
from ttnn_moe.emu.ttmetal import selective_reduce_combine as src  # noqa: E402
from ttnn_moe.emu.ttmetal import use_wheel  # noqa: E402

import ttnn_moe  # noqa: E402
from tools.tt_wheel import ensure_ttnn_wheel  # noqa: E402
from ttnn_moe import emu  # noqa: E402

TOP_K = 8
EXPERTS_PER_DEVICE = 8
TOKEN_PARALLEL = DATA_PARALLEL = 4
LINKS = 4
WORKERS = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(0, 0), pd.CoreCoord(3, 3))])
MUX = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(4, 0), pd.CoreCoord(5, 3))])


def run(mesh, rows, cols, axis, tokens_per_device, hidden):
    devices = rows * cols
    experts = devices * EXPERTS_PER_DEVICE
    group = rows if axis == 0 else cols
    tokens = tokens_per_device * group
    g = torch.Generator().manual_seed(hidden)
    chosen = routing.random_routing(rows, cols, axis, tokens, experts, TOP_K, g)
    contributions = torch.randn(devices, EXPERTS_PER_DEVICE, tokens, hidden, generator=g).bfloat16()
    segments = src.data_parallel_split(hidden * 2, int(emu_fabric.fabric_max_payload_size), DATA_PARALLEL)
    shape = src.CombineShape(tokens, group, EXPERTS_PER_DEVICE, TOP_K, hidden, TOKEN_PARALLEL, tuple(segments))
    inputs = src.dense_inputs_from_routing(contributions, chosen, shape, 2 * EXPERTS_PER_DEVICE + 4)
    names = ("dense_input", "dense_activations", "dense_token_maps", "dense_token_counts")
    tensors = [
        from_shards(list(inputs[n].chunk(devices)), emu.bfloat16 if n == "dense_input" else emu.uint32,
                    emu.ROW_MAJOR_LAYOUT, mesh)
        for n in names
    ]  # fmt: skip
    out = src.selective_reduce_combine(
        *tensors, hidden, tokens, 1, TOP_K, experts, axis, topology=emu.Topology.Linear, num_links=LINKS,
        token_parallel_core_dim=TOKEN_PARALLEL, data_parallel_core_dim=DATA_PARALLEL, worker_cores=WORKERS,
        mux_core_range_set=MUX,
    )  # fmt: skip
    want = routing.combine_golden(contributions, chosen, rows, cols, axis, TOP_K)
    got = torch.stack(device_shards(out))
    if not torch.equal(got, want):
        raise SystemExit(f"H={hidden}: the combine's output differs from the golden")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4)
    parser.add_argument("--cols", type=int, default=8)
    parser.add_argument("--axis", type=int, default=0)
    parser.add_argument("--tokens", type=int, default=32, help="tokens per device")
    parser.add_argument("--hidden", type=int, nargs="+", default=[256, 7168])
    args = parser.parse_args()
    use_wheel(ensure_ttnn_wheel())
    mesh = emu.open_mesh_device(emu.MeshShape(args.rows, args.cols))
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        for hidden in args.hidden:
            run(mesh, args.rows, args.cols, args.axis, args.tokens, hidden)  # builds the kernels
            with ttnn_moe.profile(scratch) as session:
                run(mesh, args.rows, args.cols, args.axis, args.tokens, hidden)
            (record,) = [r for r in session.ops if r.name == "selective_reduce_combine"]
            fabric_mb = sum(d.counters["fabric"]["bytes"] for d in record.devices) / 1e6
            results.append((hidden, record.device_ns() / 1e3, fabric_mb))
    print(
        f"{args.rows}x{args.cols} mesh, axis {args.axis}, {args.tokens} tokens per device, top-{TOP_K}, "
        f"{EXPERTS_PER_DEVICE} experts per device, tp {TOKEN_PARALLEL} x dp {DATA_PARALLEL} workers, {LINKS} links, "
        "Linear fabric, Wormhole B0 model; output checked against the golden"
    )
    print(f"{'op':40s} {'H':>6s} {'device us':>10s} {'fabric MB':>10s}")
    for hidden, us, mb in results:
        print(f"{'selective_reduce_combine':40s} {hidden:6d} {us:10.1f} {mb:10.2f}")


if __name__ == "__main__":
    main()
