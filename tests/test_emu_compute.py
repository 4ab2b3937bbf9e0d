"""Compute on the emulator: a multi-core matmul and an SFPU silu * multiply of our own kernels against
torch, with exact counters."""

import numpy as np
import pytest
import torch
from emu_programs import BF16, TILE_BYTES, cb, core_set, kernel, matmul_program, tilize, untilize
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd


@pytest.mark.parametrize("M, K, N, cores", [(64, 96, 128, [(0, 0), (1, 0), (0, 1)]), (32, 32, 32, [(5, 6)])])
def test_matmul_matches_torch_with_exact_counters(M, K, N, cores):
    Mt, Kt, Nt = M // 32, K // 32, N // 32
    gen = torch.Generator().manual_seed(M + K + N)
    A = torch.randn(M, K, generator=gen).to(torch.bfloat16)
    B = torch.randn(K, N, generator=gen).to(torch.bfloat16)
    dev = emu.open_device()
    a = dev.allocate(Mt * Kt * TILE_BYTES, TILE_BYTES)
    b = dev.allocate(Kt * Nt * TILE_BYTES, TILE_BYTES)
    c = dev.allocate(Mt * Nt * TILE_BYTES, TILE_BYTES)
    dev.write(a, TILE_BYTES, tilize(A))
    dev.write(b, TILE_BYTES, tilize(B))
    counters = emu.run_program(dev, matmul_program(a, b, c, Mt, Kt, Nt, cores))
    got = untilize(dev.read(c, TILE_BYTES, Mt * Nt * TILE_BYTES), M, N)
    want = A.float() @ B.float()
    # fp32 accumulation in DST, one rounding to bf16 at pack.
    torch.testing.assert_close(got, want.to(torch.bfloat16).float(), rtol=0, atol=0.02 * want.abs().max().item())
    pcc = np.corrcoef(got.flatten().numpy(), want.flatten().numpy())[0, 1]
    assert pcc >= 0.99999
    assert counters["tile_matmuls"] == Mt * Nt * Kt
    assert counters["tiles_packed"] == Mt * Nt
    # Every output tile reads its row of A and column of B once.
    assert counters["noc_bytes_read_dram"] == Mt * Nt * Kt * 2 * TILE_BYTES
    assert counters["dram_buffers"][a]["unique_pages_read"] == Mt * Kt
    assert counters["dram_buffers"][b]["unique_pages_read"] == Kt * Nt
    assert counters["noc_bytes_written_dram"] == Mt * Nt * TILE_BYTES


def test_silu_times_up_with_the_sfpu_binary_multiply_in_dst():
    """Pairs of tiles (gate, up) -> silu(gate) * up: copy both to DST, silu_tile, mul_binary_tile, pack."""
    pairs = 3
    gen = torch.Generator().manual_seed(5)
    gate = (torch.randn(32 * pairs, 32, generator=gen) * 3).bfloat16()
    up = torch.randn(32 * pairs, 32, generator=gen).bfloat16()
    interleaved = torch.stack([gate.reshape(pairs, 32, 32), up.reshape(pairs, 32, 32)], dim=1).reshape(-1, 32)
    dev = emu.open_device()
    src = dev.allocate(2 * pairs * TILE_BYTES, TILE_BYTES)
    dst = dev.allocate(pairs * TILE_BYTES, TILE_BYTES)
    dev.write(src, TILE_BYTES, tilize(interleaved))
    cores = core_set(2, 3)
    ct = emu.tensor_accessor_args(TILE_BYTES, True)
    core = pd.CoreCoord(2, 3)
    program = pd.ProgramDescriptor(
        kernels=[
            kernel(
                "reader_pages.cpp",
                cores,
                pd.ReaderConfigDescriptor(),
                ct,
                [("cb_out", 0)],
                [(core, [src, 0, 2 * pairs, 2])],
            ),
            kernel(
                "compute_silu_mul.cpp",
                cores,
                pd.ComputeConfigDescriptor(),
                (),
                [("cb_in", 0), ("cb_out", 16)],
                [(core, [pairs])],
            ),
            kernel(
                "writer_pages.cpp", cores, pd.WriterConfigDescriptor(), ct, [("cb_in", 16)], [(core, [dst, 0, pairs])]
            ),
        ],
        cbs=[cb(0, 4, TILE_BYTES, cores), cb(16, 2, TILE_BYTES, cores)],
    )
    counters = emu.run_program(dev, program)
    got = untilize(dev.read(dst, TILE_BYTES, pairs * TILE_BYTES), 32 * pairs, 32)
    # bf16 DST: silu rounded to bf16, then the product rounded to bf16.
    expected = (torch.nn.functional.silu(gate.double()).bfloat16().double() * up.double()).bfloat16().float()
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
    assert counters["tiles_packed"] == pairs and counters["tile_matmuls"] == 0


def test_dst_misuse_in_a_kernel_is_an_error_naming_it():
    dev = emu.open_device()
    # Packing from DST slot 0 without tile_regs_acquire/commit/wait: the engine rejects it.
    code = """
        #include "api/compute/pack.h"
        void kernel_main() {
            cb_reserve_back(16, 1);
            pack_tile(0, 16);
        }
    """
    cores = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(0, 0), pd.CoreCoord(0, 0))])
    k = pd.KernelDescriptor(
        kernel_source=code,
        source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
        core_ranges=cores,
        config=pd.ComputeConfigDescriptor(),
    )
    with pytest.raises(emu.EmulatorError, match=r"\[TRISC\].*core \(0, 0\).*pack"):
        emu.run_program(dev, pd.ProgramDescriptor(kernels=[k], cbs=[cb(16, 1, TILE_BYTES, cores, BF16)]))


def test_a_tile_past_the_end_of_a_cb_ring_is_an_error_not_a_wrap():
    """A 3-page ring: one page through, then two pushes (pages 1-2, then page 0) and a wait for all
    three. Tile 2 of the front lies past the ring's end: the device's unpacker would read past the
    CB (fifo pointer + index * tile size, no wrap); the emulator stops with a message instead of
    quietly wrapping to the ring's start."""
    dev = emu.open_device()
    code = """
        #include "api/compute/tile_move_copy.h"
        void kernel_main() {
            cb_reserve_back(16, 1);
            cb_push_back(16, 1);
            cb_wait_front(16, 1);
            cb_pop_front(16, 1);  // the read and write pointers now sit at page 1 of 3
            cb_reserve_back(16, 2);
            cb_push_back(16, 2);  // pages 1 and 2
            cb_reserve_back(16, 1);
            cb_push_back(16, 1);  // page 0
            cb_wait_front(16, 3);
            tile_regs_acquire();
            copy_tile_to_dst_init_short(16);
            copy_tile(16, TILE_INDEX, 0);
            tile_regs_commit();
            tile_regs_wait();
            tile_regs_release();
            cb_pop_front(16, 2);  // up to the ring's end, where the pointer wraps
            cb_pop_front(16, 1);
        }
    """
    cores = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(0, 0), pd.CoreCoord(0, 0))])

    def run(tile_index):
        k = pd.KernelDescriptor(
            kernel_source=code,
            source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
            core_ranges=cores,
            config=pd.ComputeConfigDescriptor(),
            defines=[("TILE_INDEX", str(tile_index))],
        )
        return emu.run_program(dev, pd.ProgramDescriptor(kernels=[k], cbs=[cb(16, 3, TILE_BYTES, cores, BF16)]))

    run(1)  # the tile at the ring's last page is fine
    with pytest.raises(emu.EmulatorError, match=r"tile 2 of CB 16 from its read pointer \(ring offset 2048\), past"):
        run(2)
