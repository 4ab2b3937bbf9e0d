"""Micro-benchmark of the emulator's tile math (single-threaded).

Reports tile matmuls (32x32x32) per second for
- the bare fp32 kernel `matmul_tile_accumulate`, and
- the whole ComputeEngine path a matmul kernel drives: unpack two bf16 tiles, matmul, DST rounding,
  pack (k_tiles accumulation steps into 4 DST tiles per acquire), with a bf16 and an fp32 DST.

Usage: python benchmarks/tile_math.py [--iterations N] [--repeats R]
The best of R repeats is printed: the machine may be shared, and the best run is the least disturbed.
"""

import argparse

from ttnn_moe._C import numerics


def best_of(repeats: int, run) -> float:
    return max(run() for _ in range(repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=200_000, help="tile matmuls per bare-kernel run")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.iterations <= 0 or args.repeats <= 0:
        raise ValueError(f"iterations and repeats must be positive, got {args.iterations}, {args.repeats}")

    engine_iterations = max(1, args.iterations // 32)  # 8 k-steps x 4 tiles = 32 tile matmuls per iteration
    figures = {
        "matmul_tile_accumulate (fp32)": best_of(args.repeats, lambda: numerics.matmul_tile_benchmark(args.iterations)),
        "ComputeEngine, bf16 DST": best_of(
            args.repeats, lambda: numerics.engine_matmul_benchmark(engine_iterations, 8, False)
        ),
        "ComputeEngine, fp32 DST": best_of(
            args.repeats, lambda: numerics.engine_matmul_benchmark(engine_iterations, 8, True)
        ),
    }
    for name, tiles_per_second in figures.items():
        print(f"{name:32s} {tiles_per_second / 1e3:10.1f} k tile matmuls/s")


if __name__ == "__main__":
    main()
