"""DeepSeek-V3's MoE layer at full dimensions on emulated meshes: wall time, peak memory, bytes.

    .venv/bin/python benchmarks/full_scale.py [--mesh tg quad] [--tokens 32 256]
                                              [--expert-dtype bfloat8_b] [--config full]

Each (mesh, tokens) case runs the demo's layer (random weights generated expert by expert, the
streaming fp32 reference) in its own process, so its peak resident memory is its own. Prints per
case: wall time, CPU time (all threads), peak RSS, the routed experts' converted bytes per device,
tile-matmuls executed vs needed, the layer's PCC against the reference, and how often the
file-backed emulated DRAM dropped its resident pages (ttnn_moe/cpp/emu/README.md, "DRAM";
TTNN_MOE_DRAM_FILES=0 keeps DRAM in memory, for comparison). The demo's progress lines pass through.
Targets (full dims, TG 32 tokens, bfloat8_b / bfloat4_b): wall <= 120 s, peak RSS <= 16 GB.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the models package
RESULT_PREFIX = "full_scale result: "
# Bytes per weight element on the device (block floats: one shared exponent byte per 16 values).
BYTES_PER_ELEMENT = {"bfloat16": 2.0, "bfloat8_b": 1088 / 1024, "bfloat4_b": 576 / 1024}


def run_case(mesh: str, config_name: str, tokens: int, expert_dtype: str, seed: int) -> dict:
    """In this process: the demo's layer once, then the figures as a dict."""
    import torch  # noqa: PLC0415  (the parent process only starts children)
    from loguru import logger  # noqa: PLC0415
    from ttnn_moe._C import emu  # noqa: PLC0415

    from models.deepseek_v3.config import mesh_shape  # noqa: PLC0415
    from models.deepseek_v3.demo import CONFIGS, run_demo  # noqa: PLC0415
    from models.deepseek_v3.tt.emulator_counters import (  # noqa: PLC0415
        needed_expert_tile_matmuls,
        needed_gate_tile_matmuls,
        needed_shared_expert_tile_matmuls,
    )

    torch.set_num_threads(1)
    logger.remove()
    logger.add(sys.stderr, format="{time:HH:mm:ss} {message}", level="INFO")
    config = CONFIGS[config_name]()
    rows, cols = mesh_shape(mesh)
    devices = rows * cols
    start, cpu_start = time.perf_counter(), time.process_time()
    result = run_demo(mesh, config_name, tokens, seed, allow_large=True, expert_dtype=expert_dtype)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    H, I = config.hidden_size, config.moe_intermediate_size
    tokens_per_device = tokens // rows // cols if tokens % (rows * cols) == 0 else -(-tokens // rows // cols)
    needed = (
        needed_expert_tile_matmuls([result.expert_load.reshape(-1, 1)], H, I)
        + needed_gate_tile_matmuls(devices, tokens_per_device, config.n_routed_experts, H)
        + needed_shared_expert_tile_matmuls(devices, tokens_per_device, H, config.shared_intermediate_size // cols)
    )
    experts_per_device = config.n_routed_experts // devices
    expert_bytes = experts_per_device * 3 * H * I * BYTES_PER_ELEMENT[expert_dtype]
    return {
        "wall_s": wall,
        "cpu_s": cpu,  # every thread's; on a shared, loaded host wall time says little without it
        "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,  # KiB on Linux
        "expert_bytes_per_device": int(expert_bytes),
        "tile_matmuls": result.counters.tile_matmuls,
        "tile_matmuls_needed": needed,
        "pcc": result.pcc,
        "dram_files": emu.dram_files()["enabled"],
        "dram_file_drops": emu.dram_files()["releases"],
        "passed": result.passed,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mesh", nargs="+", default=["tg", "quad"])
    parser.add_argument("--tokens", nargs="+", type=int, default=[32, 256], help="tokens per mesh")
    parser.add_argument("--expert-dtype", default="bfloat8_b", choices=sorted(BYTES_PER_ELEMENT))
    parser.add_argument("--config", default="full", help="demo config: full (DeepSeek-V3) or mini")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--case", nargs=2, metavar=("MESH", "TOKENS"), help=argparse.SUPPRESS)  # one child
    args = parser.parse_args()

    if args.case:
        figures = run_case(args.case[0], args.config, int(args.case[1]), args.expert_dtype, args.seed)
        print(RESULT_PREFIX + json.dumps(figures), flush=True)
        return 0

    rows = []
    for mesh in args.mesh:
        for tokens in args.tokens:
            print(f"== {mesh}, {tokens} tokens, {args.config} config, {args.expert_dtype} experts", flush=True)
            child = [sys.executable, __file__, "--case", mesh, str(tokens)]
            child += ["--config", args.config, "--expert-dtype", args.expert_dtype, "--seed", str(args.seed)]
            done = subprocess.run(child, cwd=ROOT, stdout=subprocess.PIPE, text=True)  # stderr: progress
            lines = [line for line in done.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
            if done.returncode != 0 or not lines:
                print(f"{mesh} {tokens} tokens: failed with exit code {done.returncode}", flush=True)
                rows.append((mesh, tokens, None))
                continue
            rows.append((mesh, tokens, json.loads(lines[-1][len(RESULT_PREFIX) :])))

    print()
    print(f"{'mesh':<6}{'tokens':>7}{'wall s':>9}{'CPU s':>8}{'peak RSS GiB':>14}{'experts MiB/dev':>17}"
          f"{'tile-matmuls':>14}{'needed':>12}{'ratio':>7}{'PCC':>10}{'DRAM drops':>12}")  # fmt: skip
    for mesh, tokens, f in rows:
        if f is None:
            print(f"{mesh:<6}{tokens:>7}  failed")
            continue
        ratio = f["tile_matmuls"] / max(f["tile_matmuls_needed"], 1)
        print(
            f"{mesh:<6}{tokens:>7}{f['wall_s']:>9.1f}{f['cpu_s']:>8.1f}{f['peak_rss_gib']:>14.2f}"
            f"{f['expert_bytes_per_device'] / 2**20:>17.1f}{f['tile_matmuls']:>14}{f['tile_matmuls_needed']:>12}"
            f"{ratio:>7.2f}{f['pcc']:>10.5f}{f['dram_file_drops'] if f['dram_files'] else 'off':>12}"
            f"{'' if f['passed'] else '  below the bar'}"
        )
    return 0 if all(f is not None and f["passed"] for _, _, f in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
