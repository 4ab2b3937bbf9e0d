"""Emulator benchmark: tile matmuls per second and the launch overhead of an empty program.

    .venv/bin/python benchmarks/emulator.py [--size 1024]

Matmul: C = A @ B, bf16, size x size x size, output tiles split over the 8x8
grid, with the reader/compute/writer kernels of tests/kernels/emu.
Launch: a program whose 64 cores each run an empty kernel (builds cached).
"""

import argparse
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from emu_programs import TILE_BYTES, matmul_program, tilize  # noqa: E402
from ttnn_moe._C import emu  # noqa: E402
from ttnn_moe._C import program as pd  # noqa: E402

EMPTY_KERNEL = '#include "api/dataflow/dataflow_api.h"\nvoid kernel_main() {}\n'


def bench_matmul(size: int) -> float:
    tiles = size // 32
    dev = emu.open_device(grid=(8, 8))
    A = torch.randn(size, size).to(torch.bfloat16)
    B = torch.randn(size, size).to(torch.bfloat16)
    nbytes = tiles * tiles * TILE_BYTES
    a, b, c = (dev.allocate(nbytes, TILE_BYTES) for _ in range(3))
    dev.write(a, TILE_BYTES, tilize(A))
    dev.write(b, TILE_BYTES, tilize(B))
    cores = [(x, y) for y in range(8) for x in range(8)]
    program = matmul_program(a, b, c, tiles, tiles, tiles, cores)
    emu.run_program(dev, matmul_program(a, b, c, 1, 1, 1, cores[:1]))  # build outside the timing
    start = time.perf_counter()
    counters = emu.run_program(dev, program)
    elapsed = time.perf_counter() - start
    rate = counters["tile_matmuls"] / elapsed
    print(
        f"matmul {size}^3 bf16 on 8x8: {counters['tile_matmuls']} tile matmuls in {elapsed:.2f} s "
        f"= {rate:,.0f} tile matmuls/s"
    )
    return rate


def bench_launch(repeats: int = 20) -> float:
    dev = emu.open_device(grid=(8, 8))
    grid = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(0, 0), pd.CoreCoord(7, 7))])
    k = pd.KernelDescriptor(
        kernel_source=EMPTY_KERNEL,
        source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
        core_ranges=grid,
        config=pd.ReaderConfigDescriptor(),
    )
    program = pd.ProgramDescriptor(kernels=[k])
    emu.run_program(dev, program)  # build
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        emu.run_program(dev, program)
        times.append(time.perf_counter() - start)
    best = min(times) * 1e3
    median = sorted(times)[len(times) // 2] * 1e3
    print(f"launch of an empty 64-core program: median {median:.2f} ms, best {best:.2f} ms")
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=1024, help="matmul size (multiple of 32)")
    args = parser.parse_args()
    if args.size % 32:
        raise ValueError(f"--size must be a multiple of 32, got {args.size}")
    bench_matmul(args.size)
    bench_launch()


if __name__ == "__main__":
    main()
