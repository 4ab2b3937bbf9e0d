"""Tile matmuls on the second host thread (`emu.set_matmul_thread`): the same bits, counters and modeled
time as on the scheduler thread, run after run, and errors and deadlocks still reported."""

import os
import threading
from pathlib import Path

import numpy as np
import pytest
import torch
from emu_programs import BF16, TILE_BYTES, cb, core_set, kernel, matmul_program, tilize, untilize
from ttnn_moe._C import emu, numerics
from ttnn_moe._C import program as pd

FORMATS = {"bf16": BF16, "bfloat8_b": pd.DataFormat.Bfp8_b, "bfloat4_b": pd.DataFormat.Bfp4_b}
GRID = [(x, y) for y in range(4) for x in range(4)]
REPEATS = 3


@pytest.fixture
def matmul_thread():
    """Restores the switch the test found."""
    before = emu.matmul_thread()
    yield
    emu.set_matmul_thread(before)


def output_same_both_ways(run, tile_matmuls: int) -> np.ndarray:
    """run() -> (output bytes, counters) once with matmuls on the scheduler thread, then REPEATS times
    on the second thread: every repeat's bytes, tile-matmul count and timing record equal the first
    run's, which counted `tile_matmuls`. Returns the output bytes."""
    emu.set_matmul_thread(False)
    want_bytes, want_counters = run()
    emu.set_matmul_thread(True)
    for _ in range(REPEATS):
        got_bytes, got_counters = run()
        assert np.array_equal(got_bytes, want_bytes)
        assert got_counters["tile_matmuls"] == want_counters["tile_matmuls"] == tile_matmuls
        assert got_counters["timing"] == want_counters["timing"]
    return want_bytes


def pcc(a: torch.Tensor, b: torch.Tensor) -> float:
    return float(np.corrcoef(a.flatten().numpy(), b.flatten().numpy())[0, 1])


@pytest.mark.parametrize("b_name", list(FORMATS))
def test_matmul_tiles_same_bits_counters_and_time_on_the_matmul_thread(matmul_thread, b_name):
    b_format = FORMATS[b_name]
    M = K = N = 128
    Mt, Kt, Nt = M // 32, K // 32, N // 32
    gen = torch.Generator().manual_seed(11)
    A = torch.randn(M, K, generator=gen).bfloat16()
    B = torch.randn(K, N, generator=gen)
    b_pages = numerics.tilize(b_format, B.numpy())
    # The weights as the device holds them: B rounded to its format, by hand for bf16, else the host
    # conversion's dequantized values.
    B_device = (
        B.bfloat16().float() if b_format == BF16 else torch.from_numpy(numerics.untilize(b_format, b_pages, K, N))
    )
    b_tile = pd.tile_size_bytes(b_format)
    dev = emu.open_device(grid=(4, 4))
    a = dev.allocate(Mt * Kt * TILE_BYTES, TILE_BYTES)
    b = dev.allocate(b_pages.size, b_tile)
    c = dev.allocate(Mt * Nt * TILE_BYTES, TILE_BYTES)
    dev.write(a, TILE_BYTES, tilize(A))
    dev.write(b, b_tile, b_pages)
    program = matmul_program(a, b, c, Mt, Kt, Nt, GRID, b_format)

    def run():
        counters = emu.run_program(dev, program)
        return dev.read(c, TILE_BYTES, Mt * Nt * TILE_BYTES), counters

    want_bytes = output_same_both_ways(run, Mt * Nt * Kt)
    got = untilize(want_bytes, M, N)
    golden = A.float() @ B_device
    assert pcc(got, golden) >= 0.9999
    assert (got - golden).abs().max().item() <= 0.02 * golden.abs().max().item()


# C = A @ B, all of A (rt x kt tiles) and B (kt x ct tiles) in two CBs, one matmul_block per k into a
# 16-bit DST (rounded to bf16 after every step), packed as rt x ct tiles. With `transpose` the CB holds
# B's tiles transposed and the unpacker transposes them back.
BLOCK_COMPUTE = """
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/matmul.h"
#include "api/compute/pack.h"
void kernel_main() {
    const uint32_t rt = get_arg_val<uint32_t>(0);
    const uint32_t ct = get_arg_val<uint32_t>(1);
    const uint32_t kt = get_arg_val<uint32_t>(2);
    const uint32_t transpose = get_arg_val<uint32_t>(3);
    compute_kernel_hw_startup(0, 1, 16);
    matmul_block_init(0, 1, transpose, ct, rt, kt);
    cb_wait_front(0, rt * kt);
    cb_wait_front(1, kt * ct);
    tile_regs_acquire();
    for (uint32_t k = 0; k < kt; ++k) {
        matmul_block(0, 1, k, k * ct, 0, transpose, ct, rt, kt);
    }
    tile_regs_commit();
    cb_reserve_back(16, rt * ct);
    tile_regs_wait();
    for (uint32_t i = 0; i < rt * ct; ++i) pack_tile(i, 16);
    tile_regs_release();
    cb_push_back(16, rt * ct);
}
"""


@pytest.mark.parametrize("rt, ct, kt, transpose", [(2, 4, 3, False), (4, 2, 2, True), (1, 8, 2, False)])
def test_matmul_block_same_bits_on_the_matmul_thread(matmul_thread, rt, ct, kt, transpose):
    gen = torch.Generator().manual_seed(rt * 100 + ct * 10 + kt)
    A = torch.randn(rt * 32, kt * 32, generator=gen).bfloat16()
    # B's tile (k, c) at page k * ct + c; with transpose each page holds the transposed tile.
    B = torch.randn(kt * 32, ct * 32, generator=gen).bfloat16()
    B_pages = B.reshape(kt, 32, ct, 32).permute(0, 2, 1, 3)  # [k, c, row, col]
    if transpose:
        B_pages = B_pages.transpose(2, 3)
    b_bytes = tilize(B_pages.reshape(kt * ct * 32, 32))
    dev = emu.open_device()
    src = dev.allocate((rt * kt + kt * ct) * TILE_BYTES, TILE_BYTES)
    out = dev.allocate(rt * ct * TILE_BYTES, TILE_BYTES)
    dev.write(src, TILE_BYTES, np.concatenate([tilize(A), b_bytes]))
    cores = core_set(0, 0)
    core = pd.CoreCoord(0, 0)
    ct_args = emu.tensor_accessor_args(TILE_BYTES, True)
    program = pd.ProgramDescriptor(
        kernels=[
            kernel(
                "reader_two_cbs.cpp",
                cores,
                pd.ReaderConfigDescriptor(),
                ct_args,
                [("cb_first", 0), ("cb_second", 1)],
                [(core, [src, rt * kt, kt * ct])],
            ),
            pd.KernelDescriptor(
                kernel_source=BLOCK_COMPUTE,
                source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
                core_ranges=cores,
                config=pd.ComputeConfigDescriptor(fp32_dest_acc_en=False),
                runtime_args=[(core, [rt, ct, kt, int(transpose)])],
            ),
            kernel(
                "writer_pages.cpp",
                cores,
                pd.WriterConfigDescriptor(),
                ct_args,
                [("cb_in", 16)],
                [(core, [out, 0, rt * ct])],
            ),
        ],
        cbs=[cb(0, rt * kt, TILE_BYTES, cores), cb(1, kt * ct, TILE_BYTES, cores), cb(16, rt * ct, TILE_BYTES, cores)],
    )

    def run():
        counters = emu.run_program(dev, program)
        return dev.read(out, TILE_BYTES, rt * ct * TILE_BYTES), counters

    want_bytes = output_same_both_ways(run, rt * ct * kt)
    # Output tile (r, c) is row-major over tiles; DST rounds to bf16 after each k step.
    got = untilize(want_bytes, rt * 32, ct * 32)
    golden = torch.zeros(rt * 32, ct * 32)
    for k in range(kt):
        golden = (golden + A.float()[:, k * 32 : (k + 1) * 32] @ B.float()[k * 32 : (k + 1) * 32]).bfloat16().float()
    assert pcc(got, golden) >= 0.9999
    assert (got - golden).abs().max().item() <= 0.02 * golden.abs().max().item()


# Matmuls queued, then a wait no kernel satisfies.
MATMUL_THEN_WAIT = """
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/matmul.h"
void kernel_main() {
    compute_kernel_hw_startup(0, 1, 16);
    matmul_init(0, 1);
    cb_reserve_back(0, 1); cb_push_back(0, 1);
    cb_reserve_back(1, 1); cb_push_back(1, 1);
    cb_wait_front(0, 1); cb_wait_front(1, 1);
    tile_regs_acquire();
    for (uint32_t i = 0; i < 64; ++i) matmul_tiles(0, 1, 0, 0, 0);
    cb_wait_front(16, 1);
}
"""


def test_deadlock_with_queued_matmuls_is_reported_and_the_next_run_is_clean(matmul_thread):
    emu.set_matmul_thread(True)
    cores = core_set(0, 0)
    program = pd.ProgramDescriptor(
        kernels=[
            pd.KernelDescriptor(
                kernel_source=MATMUL_THEN_WAIT,
                source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
                core_ranges=cores,
                config=pd.ComputeConfigDescriptor(),
            )
        ],
        cbs=[cb(0, 1, TILE_BYTES, cores), cb(1, 1, TILE_BYTES, cores), cb(16, 1, TILE_BYTES, cores)],
    )
    dev = emu.open_device()
    with pytest.raises(emu.EmulatorError, match=r"(?s)deadlock.*cb_wait_front\(cb 16, 1 pages\) but 0 of 1"):
        emu.run_program(dev, program)
    # The worker has nothing of the failed run left over: a matmul after it is right.
    gen = torch.Generator().manual_seed(3)
    A = torch.randn(32, 64, generator=gen).bfloat16()
    B = torch.randn(64, 32, generator=gen).bfloat16()
    a = dev.allocate(2 * TILE_BYTES, TILE_BYTES)
    b = dev.allocate(2 * TILE_BYTES, TILE_BYTES)
    c = dev.allocate(TILE_BYTES, TILE_BYTES)
    dev.write(a, TILE_BYTES, tilize(A))
    dev.write(b, TILE_BYTES, tilize(B))
    counters = emu.run_program(dev, matmul_program(a, b, c, 1, 2, 1, [(0, 0)]))
    got = untilize(dev.read(c, TILE_BYTES, TILE_BYTES), 32, 32)
    golden = A.float() @ B.float()
    assert counters["tile_matmuls"] == 2
    assert (got - golden).abs().max().item() <= 0.01 * golden.abs().max().item()


def test_each_host_thread_gets_its_matmul_thread_only_when_switched_on(matmul_thread):
    gen = torch.Generator().manual_seed(4)
    A = torch.randn(32, 32, generator=gen).bfloat16()
    dev = emu.open_device()
    a = dev.allocate(TILE_BYTES, TILE_BYTES)
    c = dev.allocate(TILE_BYTES, TILE_BYTES)
    dev.write(a, TILE_BYTES, tilize(A))
    program = matmul_program(a, a, c, 1, 1, 1, [(0, 0)])
    emu.run_program(dev, program)  # kernels built outside the threads below

    def threads_added_by_a_run_on_a_new_host_thread() -> int:
        seen = {}

        def matmul_threads() -> int:  # by name: other threads of the process may come and go meanwhile
            names = []
            for task in os.listdir("/proc/self/task"):
                try:
                    names.append(Path(f"/proc/self/task/{task}/comm").read_text().strip())
                except FileNotFoundError:  # the task ended while listed
                    pass
            return names.count("emu-matmul")

        def body():
            before = matmul_threads()
            emu.run_program(dev, program)
            seen["added"] = matmul_threads() - before

        runner = threading.Thread(target=body)
        runner.start()
        runner.join()
        return seen["added"]

    emu.set_matmul_thread(False)
    assert threads_added_by_a_run_on_a_new_host_thread() == 0
    emu.set_matmul_thread(True)
    assert threads_added_by_a_run_on_a_new_host_thread() == 1
    golden = A.float() @ A.float()
    got = untilize(dev.read(c, TILE_BYTES, TILE_BYTES), 32, 32)
    assert (got - golden).abs().max().item() <= 0.01 * golden.abs().max().item()
