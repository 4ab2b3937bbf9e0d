"""Long run of the MoE layer: many decode steps with changing routings, watching for growth.

    python benchmarks/soak.py [--mesh tg] [--config mini] [--steps 500] [--tokens 32] [--report-every 50]

One TtMoE on an emulated mesh runs `--steps` decode steps, each on fresh random tokens (so the
routing, the counts per expert and the dispatch plan change every step). Every `--report-every`
steps it prints: the process's resident memory now and at its peak, the ops' program-cache hits
and misses so far, the emulator's live DRAM buffers and their bytes over the mesh, the state it
keeps between runs (kernel builds loaded, L1 pool slots in use, the DRAM buffers its cumulative
per-device counters track), and the wall time per step. After warm-up, a flat resident memory and
constant buffer and state counts say nothing accumulates; the summary line gives the growth from
the first report after warm-up to the last. Then the steps named by `--check-steps` are run again
in a fresh process, which must give bitwise the same output: a step's result depends on its
inputs alone, not on the steps before it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from models.deepseek_v3.config import MESH_PRESETS, DeepseekV3MoEConfig, mesh_shape  # noqa: E402
from models.deepseek_v3.tt import TtMoE, input_to_mesh, output_to_torch  # noqa: E402
from models.deepseek_v3.tt.ttnn_api import ttnn, ttnn_moe  # noqa: E402
from models.deepseek_v3.weights import random_moe_state_dict  # noqa: E402

CONFIGS = {"mini": DeepseekV3MoEConfig.mini, "full": DeepseekV3MoEConfig}
OPS = (
    "moe_gate",
    "all_to_all_dispatch_dense",
    "moe_bmm",
    "local_reduce_moe_output",
    "all_to_all_combine_dense",
)


def step_input(step: int, seed: int, tokens: int, hidden: int) -> torch.Tensor:
    """Step `step`'s tokens: its own generator, so any process can rebuild any step."""
    generator = torch.Generator().manual_seed(seed * 1_000_003 + step)
    return torch.randn(tokens, hidden, generator=generator).bfloat16().float()


def output_digest(y: torch.Tensor) -> str:
    return hashlib.sha256(y.contiguous().numpy().tobytes()).hexdigest()


def resident_mib() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 2**20


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def program_cache_totals() -> tuple[int, int]:
    infos = [getattr(ttnn_moe._C.ops, op).program_cache_info() for op in OPS]
    return sum(int(i["hits"]) for i in infos), sum(int(i["misses"]) for i in infos)


def emulator_dram(mesh_device) -> tuple[int, int]:
    chips = mesh_device.chip_mesh.devices()
    return sum(c.dram_buffers for c in chips), sum(c.dram_occupied_bytes for c in chips)


def emulator_state(mesh_device) -> tuple[int, int, int]:
    """Kernel builds loaded, L1 slots in use (none between runs), DRAM buffers the devices' cumulative
    counters hold traffic records of."""
    state = ttnn_moe._C.emu.runtime_state()
    counted = sum(len(c.counters()["dram_buffers"]) for c in mesh_device.chip_mesh.devices())
    return int(state["kernels_loaded"]), int(state["l1_slots"]) - int(state["l1_slots_free"]), counted


def run_steps(args: argparse.Namespace, steps: list[int], report: bool) -> dict[int, str]:
    """Runs the given steps on one layer; returns each step's output digest."""
    rows, cols = mesh_shape(args.mesh)
    config = CONFIGS[args.config]()
    state_dict = random_moe_state_dict(config, args.seed)
    mesh_device = ttnn.open_mesh_device(ttnn.MeshShape(rows, cols))
    digests = {}
    reports = []
    try:
        layer = TtMoE(state_dict, config, mesh_device)
        del state_dict
        start = time.perf_counter()
        for done, step in enumerate(steps, start=1):
            x = input_to_mesh(step_input(step, args.seed, args.tokens, config.hidden_size), mesh_device)
            y = layer.forward(x)
            digests[step] = output_digest(output_to_torch(y))
            ttnn.deallocate(x)
            ttnn.deallocate(y)
            if report and (done % args.report_every == 0 or done == len(steps)):
                hits, misses = program_cache_totals()
                buffers, dram_bytes = emulator_dram(mesh_device)
                kernels, slots_in_use, counted = emulator_state(mesh_device)
                per_step = (time.perf_counter() - start) / done
                reports.append((resident_mib(), peak_mib(), hits, misses, buffers, kernels, slots_in_use, counted))
                print(
                    f"step {step + 1:5d}: RSS {resident_mib():8.1f} MiB (peak {peak_mib():8.1f}), "
                    f"program cache {hits} hits / {misses} misses ({hits / max(1, hits + misses):.1%}), "
                    f"emulator DRAM {buffers} buffers {dram_bytes / 2**20:.1f} MiB, "
                    f"state {kernels} kernels loaded, {slots_in_use} L1 slots in use, {counted} counted buffers, "
                    f"{per_step:.3f} s/step",
                    flush=True,
                )
    finally:
        ttnn.close_mesh_device(mesh_device)
    if len(reports) >= 3:
        summarize(reports)
    return digests


def summarize(reports: list[tuple]) -> None:
    """Growth from the second report (the first is warm-up: builds, first allocations) to the last."""
    first, last = reports[1], reports[-1]
    hits, misses = last[2] - first[2], last[3] - first[3]
    print(
        f"after warm-up: RSS {last[0] - first[0]:+.1f} MiB, peak {last[1] - first[1]:+.1f} MiB, "
        f"program cache {hits} hits / {misses} misses ({hits / max(1, hits + misses):.1%}), "
        f"DRAM buffers {last[4] - first[4]:+d}, kernels loaded {last[5] - first[5]:+d}, "
        f"L1 slots in use {last[6] - first[6]:+d}, counted buffers {last[7] - first[7]:+d}",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mesh", choices=sorted(MESH_PRESETS), default="tg")
    parser.add_argument("--config", choices=sorted(CONFIGS), default="mini")
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--tokens", type=int, default=32, help="tokens per step, split over the mesh rows")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--report-every", type=int, default=50)
    parser.add_argument(
        "--check-steps", default="", help="comma-separated steps re-run in a fresh process (default: first and last)"
    )
    parser.add_argument("--only-steps", help=argparse.SUPPRESS)  # the fresh process's side: prints JSON digests
    args = parser.parse_args(argv)
    if args.steps < 1 or args.report_every < 1:
        parser.error(f"--steps and --report-every must be positive, got {args.steps} and {args.report_every}")
    torch.set_num_threads(1)

    if args.only_steps:
        steps = [int(s) for s in args.only_steps.split(",")]
        print(json.dumps(run_steps(args, steps, report=False)))
        return 0

    print(f"soak: {args.steps} decode steps of {args.tokens} tokens on {args.mesh} ({args.config})", flush=True)
    digests = run_steps(args, list(range(args.steps)), report=True)
    check = [int(s) for s in args.check_steps.split(",") if s] or sorted({0, args.steps - 1})
    unknown = [s for s in check if s not in digests]
    if unknown:
        parser.error(f"--check-steps {unknown} are outside the {args.steps} steps run")
    fresh = subprocess.run(
        [
            sys.executable,
            __file__,
            *(argv if argv is not None else sys.argv[1:]),
            "--only-steps",
            ",".join(map(str, check)),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    again = {int(k): v for k, v in json.loads(fresh.stdout.strip().splitlines()[-1]).items()}
    same = [s for s in check if again[s] == digests[s]]
    print(f"fresh process, steps {check}: {len(same)} of {len(check)} bitwise equal", flush=True)
    return 0 if len(same) == len(check) else 1


if __name__ == "__main__":
    sys.exit(main())
