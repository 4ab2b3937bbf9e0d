"""Compute on the emulator: a multi-core matmul of our own kernels against torch, with exact counters."""

import numpy as np
import pytest
import torch

from emu_programs import BF16, cb, kernel
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd

TILE_BYTES = 2048  # bf16 32x32


def tilize_bf16(m: torch.Tensor) -> np.ndarray:
    """(R, C) -> tile pages (row-major over tiles), each four 16x16 faces TL, TR, BL, BR."""
    r, c = m.shape
    t = m.to(torch.bfloat16).reshape(r // 32, 2, 16, c // 32, 2, 16)  # [tr, fr, row, tc, fc, col]
    t = t.permute(0, 3, 1, 4, 2, 5).contiguous()  # [tr, tc, fr, fc, row, col]
    return t.view(torch.int16).numpy().view(np.uint8).reshape(-1)


def untilize_bf16(pages: np.ndarray, r: int, c: int) -> torch.Tensor:
    t = torch.from_numpy(pages.view(np.int16).copy()).view(torch.bfloat16)
    t = t.reshape(r // 32, c // 32, 2, 2, 16, 16).permute(0, 2, 4, 1, 3, 5)
    return t.reshape(r, c).float()


def matmul_program(a, b, c, Mt, Kt, Nt, cores):
    ct = emu.tensor_accessor_args(TILE_BYTES, True)
    n_out = Mt * Nt
    per = [n_out // len(cores) + (1 if i < n_out % len(cores) else 0) for i in range(len(cores))]
    starts = [sum(per[:i]) for i in range(len(cores))]
    ranges = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(x, y), pd.CoreCoord(x, y)) for x, y in cores])
    coord = [pd.CoreCoord(x, y) for x, y in cores]
    named = [("cb_a", 0), ("cb_b", 1), ("cb_out", 16)]
    return pd.ProgramDescriptor(
        kernels=[
            kernel("reader_matmul.cpp", ranges, pd.ReaderConfigDescriptor(), ct + ct, named,
                   [(p, [a, b, Kt, Nt, s, n]) for p, s, n in zip(coord, starts, per)]),
            kernel("compute_matmul.cpp", ranges, pd.ComputeConfigDescriptor(fp32_dest_acc_en=True), (), named,
                   [(p, [Kt, n]) for p, n in zip(coord, per)]),
            kernel("writer_pages.cpp", ranges, pd.WriterConfigDescriptor(), ct, [("cb_in", 16)],
                   [(p, [c, s, n]) for p, s, n in zip(coord, starts, per)]),
        ],
        cbs=[cb(0, 2, TILE_BYTES, ranges), cb(1, 2, TILE_BYTES, ranges), cb(16, 2, TILE_BYTES, ranges)],
    )


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
    dev.write(a, TILE_BYTES, tilize_bf16(A))
    dev.write(b, TILE_BYTES, tilize_bf16(B))
    counters = emu.run_program(dev, matmul_program(a, b, c, Mt, Kt, Nt, cores))
    got = untilize_bf16(dev.read(c, TILE_BYTES, Mt * Nt * TILE_BYTES), M, N)
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
    k = pd.KernelDescriptor(kernel_source=code, source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
                            core_ranges=cores, config=pd.ComputeConfigDescriptor())
    with pytest.raises(emu.EmulatorError, match=r"\[TRISC\].*core \(0, 0\).*pack"):
        emu.run_program(dev, pd.ProgramDescriptor(kernels=[k], cbs=[cb(16, 1, TILE_BYTES, cores, BF16)]))
