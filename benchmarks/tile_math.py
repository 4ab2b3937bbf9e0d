"""Micro-benchmark of the emulator's tile math (single-threaded).

Reports tile matmuls (32x32x32) per second for
- the bare fp32 kernel `matmul_tile_accumulate`,
- the same product through prepared bf16 operands (the bf16 pair kernel, VDPBF16PS, on hosts with
  AVX512_BF16; the same bits), and
- the whole ComputeEngine path a matmul kernel drives: unpack two bf16 tiles, matmul, DST rounding,
  pack (8 accumulation steps into 4 DST tiles per acquire), with a bf16 and an fp32 DST.

Two rates per line: by wall-clock time and by this process's CPU time. On a shared machine the wall
rate drops with the load; the CPU-time rate estimates what one free core does. The best of --repeats
runs is printed.

Usage: python benchmarks/tile_math.py [--iterations N] [--repeats R]
"""

import argparse
import time

import ttnn_moe_numerics_testing as numerics_testing

ENGINE_K_TILES = 8
ENGINE_TILES_PER_ITERATION = ENGINE_K_TILES * 4  # k steps x output tiles


def measure(repeats: int, tile_matmuls: int, run) -> tuple[float, float]:
    """(best wall-clock rate, best CPU-time rate) of `run`, which returns its wall-clock rate."""
    best_wall, best_cpu = 0.0, 0.0
    for _ in range(repeats):
        cpu_start = time.process_time()
        wall_rate = run()
        cpu_seconds = time.process_time() - cpu_start
        best_wall = max(best_wall, wall_rate)
        best_cpu = max(best_cpu, tile_matmuls / cpu_seconds if cpu_seconds > 0 else 0.0)
    return best_wall, best_cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=300_000, help="tile matmuls per run")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.iterations <= 0 or args.repeats <= 0:
        raise ValueError(f"iterations and repeats must be positive, got {args.iterations}, {args.repeats}")

    engine_iterations = max(1, args.iterations // ENGINE_TILES_PER_ITERATION)
    engine_matmuls = engine_iterations * ENGINE_TILES_PER_ITERATION
    figures = {
        "matmul_tile_accumulate (fp32)": measure(
            args.repeats, args.iterations, lambda: numerics_testing.matmul_tile_benchmark(args.iterations)
        ),
        "prepared bf16 operands": measure(
            args.repeats, args.iterations, lambda: numerics_testing.matmul_prepared_benchmark(args.iterations)
        ),
        "ComputeEngine, bf16 DST": measure(
            args.repeats,
            engine_matmuls,
            lambda: numerics_testing.engine_matmul_benchmark(engine_iterations, ENGINE_K_TILES, False),
        ),
        "ComputeEngine, fp32 DST": measure(
            args.repeats,
            engine_matmuls,
            lambda: numerics_testing.engine_matmul_benchmark(engine_iterations, ENGINE_K_TILES, True),
        ),
    }
    print(f"{'':32s} {'wall':>12s} {'cpu time':>12s}   (k tile matmuls/s)")
    for name, (wall, cpu) in figures.items():
        print(f"{name:32s} {wall / 1e3:12.1f} {cpu / 1e3:12.1f}")


if __name__ == "__main__":
    main()
