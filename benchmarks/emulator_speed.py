"""Emulator compute speed: tile-matmuls per second (CPU and wall) by weight format and size.

    .venv/bin/python benchmarks/emulator_speed.py [--sizes 256 512 1024] [--repeats 3] [--matmul-thread on off]

C = A @ B on an 8x8 grid with the reader/compute/writer kernels of tests/kernels/emu: A bf16,
B (the weights) bf16, bfloat8_b or bfloat4_b, C bf16, fp32 DST. Each case runs once cold (its
kernels built beforehand) and then `--repeats` times; the table gives the first run and the
best repeat. CPU time is the process's (every thread); "sched CPU" is the calling thread's alone,
the scheduler's (with the matmul thread on, the critical path once the second core is free for the
matmuls; the wall rate tends to it on an idle 2-core host); "sched us" and "worker us" are the
scheduler's and the matmul thread's CPU microseconds per tile matmul in the repeat with the least
scheduler CPU (the matmul thread's include its spinning while it waits for jobs; "-" when the
matmuls stay on the scheduler thread). `--matmul-thread`: the tile matmuls on a
second host thread (on, the emulator's default) or on the scheduler thread (off); by default each
case runs both ways, alternating. With it off, CPU time is all the emulator's work on one thread,
the steadiest figure on a busy host. For reference, the host's own rate: torch's
fp32 matmul of the same sizes on all the threads torch uses, counted in 32x32x32 tile products.
"""

import argparse
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from emu_programs import matmul_program  # noqa: E402
from ttnn_moe._C import emu, numerics  # noqa: E402
from ttnn_moe._C import program as pd  # noqa: E402

FORMATS = {
    "bf16": pd.DataFormat.Float16_b,
    "bfloat8_b": pd.DataFormat.Bfp8_b,
    "bfloat4_b": pd.DataFormat.Bfp4_b,
}
GRID = (8, 8)
MATMUL_THREAD_NAME = "emu-matmul"  # the emulator's matmul thread (MatmulWorker::kThreadName)


def matmul_thread_cpu() -> float | None:
    """CPU seconds of the emulator's matmul thread so far (the kernel's schedstat, in ns), or None."""
    for task in Path("/proc/self/task").iterdir():
        try:
            if (task / "comm").read_text().strip() == MATMUL_THREAD_NAME:
                return int((task / "schedstat").read_text().split()[0]) / 1e9
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
    return None


def timed(run) -> tuple[float, float, float, float | None, object]:
    """Process CPU, wall, calling-thread CPU and matmul-thread CPU seconds of run(), and its result."""
    cpu, wall, thread, worker = time.process_time(), time.perf_counter(), time.thread_time(), matmul_thread_cpu()
    result = run()
    worker_after = matmul_thread_cpu()
    worker_cpu = None if worker_after is None else worker_after - (worker or 0.0)
    return time.process_time() - cpu, time.perf_counter() - wall, time.thread_time() - thread, worker_cpu, result


def bench_emulator(size: int, name: str, repeats: int, matmul_thread: bool) -> dict:
    emu.set_matmul_thread(matmul_thread)
    tiles = size // 32
    b_format = FORMATS[name]
    dev = emu.open_device(grid=GRID)
    generator = torch.Generator().manual_seed(size)
    A = torch.randn(size, size, generator=generator)
    B = torch.randn(size, size, generator=generator)
    a_pages = numerics.tilize(pd.DataFormat.Float16_b, A.numpy())
    b_pages = numerics.tilize(b_format, B.numpy())
    bf16_tile, b_tile = pd.tile_size_bytes(pd.DataFormat.Float16_b), pd.tile_size_bytes(b_format)
    a = dev.allocate(a_pages.size, bf16_tile)
    b = dev.allocate(b_pages.size, b_tile)
    c = dev.allocate(tiles * tiles * bf16_tile, bf16_tile)
    dev.write(a, bf16_tile, a_pages)
    dev.write(b, b_tile, b_pages)
    cores = [(x, y) for y in range(GRID[1]) for x in range(GRID[0])]
    emu.run_program(dev, matmul_program(a, b, c, 1, 1, 1, cores[:1], b_format))  # kernel builds outside the timing
    program = matmul_program(a, b, c, tiles, tiles, tiles, cores, b_format)
    cpu, wall, _, _, counters = timed(lambda: emu.run_program(dev, program))
    count = counters["tile_matmuls"]
    if count != tiles**3:
        raise RuntimeError(f"{size}^3 {name}: {count} tile matmuls counted, expected {tiles**3}")
    first = (count / cpu, count / wall)
    runs = [timed(lambda: emu.run_program(dev, program))[:4] for _ in range(repeats)]
    best = tuple(min(run[i] for run in runs) for i in range(3))
    least_sched = min(runs, key=lambda run: run[2])
    # With the matmuls inline, a matmul thread left from an earlier case only sleeps.
    worker = least_sched[3] / count * 1e6 if matmul_thread and least_sched[3] is not None else None
    return {
        "first": first,
        "repeat": tuple(count / seconds for seconds in best),
        "us": (least_sched[2] / count * 1e6, worker),
    }


def bench_torch(size: int, repeats: int) -> tuple[float, float]:
    generator = torch.Generator().manual_seed(size)
    A, B = torch.randn(size, size, generator=generator), torch.randn(size, size, generator=generator)
    count = (size // 32) ** 3
    times = [timed(lambda: A @ B)[:2] for _ in range(repeats + 1)][1:]  # the first warms up
    cpu, wall = min(times)
    return count / cpu, count / wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", type=int, default=[256, 512, 1024], help="matmul sizes (x 32)")
    parser.add_argument("--formats", nargs="+", default=list(FORMATS), choices=list(FORMATS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--matmul-thread", nargs="+", default=["off", "on"], choices=["on", "off"])
    args = parser.parse_args()
    for size in args.sizes:
        if size % 32 or size <= 0:
            raise ValueError(f"--sizes: {size} is not a positive multiple of 32")

    print(f"tile-matmuls/s (32x32x32 products), {GRID[0]}x{GRID[1]} grid, A and C bf16, fp32 DST")
    header = f"{'size':>6} {'B format':<10} {'matmuls':<8} {'first CPU':>12} {'first wall':>12}"
    print(f"{header} {'repeat CPU':>12} {'repeat wall':>12} {'sched CPU':>12} {'sched us':>9} {'worker us':>9}")
    for size in args.sizes:
        for name in args.formats:
            for mode in args.matmul_thread:
                r = bench_emulator(size, name, args.repeats, mode == "on")
                where = "thread" if mode == "on" else "inline"
                sched_us, worker_us = r["us"]
                worker = "-" if worker_us is None else f"{worker_us:.3f}"
                print(
                    f"{size:>6} {name:<10} {where:<8} {r['first'][0]:>12,.0f} {r['first'][1]:>12,.0f} "
                    f"{r['repeat'][0]:>12,.0f} {r['repeat'][1]:>12,.0f} {r['repeat'][2]:>12,.0f} "
                    f"{sched_us:>9.3f} {worker:>9}",
                    flush=True,
                )
    print(f"host reference: torch fp32 matmul, {torch.get_num_threads()} threads")
    for size in args.sizes:
        cpu, wall = bench_torch(size, args.repeats)
        print(f"{size:>6} {'torch fp32':<10} {'':>12} {'':>12} {cpu:>12,.0f} {wall:>12,.0f}")


if __name__ == "__main__":
    main()
