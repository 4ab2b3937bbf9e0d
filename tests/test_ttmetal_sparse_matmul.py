"""ttnn.sparse_matmul as tt-metal 0.81.1 builds it (a zero fill, then the sparse 1D-multicast matmul), its
kernels unmodified from the wheel, on the emulator (ttnn_moe.emu.ttmetal.sparse_matmul), against torch.

The golden is ttnn's documented result in fp32: every (batch, group) pair whose sparsity flag is non-zero
holds A @ B of that pair, every other pair is zero (the fill; the matmul never writes it). bfloat16 inputs,
16-bit DST and bfloat16 partials (packer L1 accumulation) round on the way, so values are held to PCC and a
max error; the skipped pairs are compared exactly.
"""

from __future__ import annotations

import pytest
import torch
import ttnn_moe.emu as ttnn
from ttnn_moe._C import emu as emu_runtime
from ttnn_moe.emu.ttmetal import sparse_matmul as sm
from ttnn_moe.emu.ttmetal.matmul_config import MatmulMultiCoreReuseMultiCast1DProgramConfig, WormholeComputeKernelConfig
from ttnn_moe.emu.ttmetal.zero_fill import zero_fill_program
from ttnn_moe.testing import assert_pcc

PCC = 0.9995
LOFI = WormholeComputeKernelConfig(math_fidelity="LoFi", packer_l1_acc=True)


@pytest.fixture
def device():
    dev = ttnn.open_device(grid=(8, 8))
    yield dev
    ttnn.close_device(dev)


def config(grid, per_core_N, in0_block_w=2, out_subblock_w=1, per_core_M=1):
    return MatmulMultiCoreReuseMultiCast1DProgramConfig(
        compute_with_storage_grid_size=grid,
        in0_block_w=in0_block_w,
        out_subblock_h=1,
        out_subblock_w=out_subblock_w,
        out_block_h=per_core_M,
        out_block_w=per_core_N,
        per_core_M=per_core_M,
        per_core_N=per_core_N,
    )


def randn(shape, seed, scale=1.0):
    return (torch.randn(shape, generator=torch.Generator().manual_seed(seed)) * scale).bfloat16().float()


def tile_tensor(t, device, dtype=ttnn.bfloat16):
    return ttnn.from_torch(t, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device)


def sparsity_tensor(flags, device):
    return ttnn.from_torch(flags.bfloat16(), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)


def check(got, golden, active, name):
    """active: bool per (batch, group) of got's two leading dims."""
    got = got.float()
    assert got.shape == golden.shape, name
    skipped = ~active
    assert torch.equal(got[skipped], torch.zeros_like(got[skipped])), f"{name}: a skipped batch is not zero"
    assert_pcc(golden[active], got[active], PCC, name)
    assert (got[active] - golden[active]).abs().max() <= 0.02 * golden[active].abs().max(), name


def test_b_sparse_skips_inactive_blocks(wheel, device):
    """DeepSeek-V3's w1/w3: token blocks (1, A*B, M, K) against every local expert (1, E, K, N)."""
    x, w = randn((1, 3, 32, 128), 1), randn((1, 4, 128, 96), 2, 0.2)
    flags = torch.tensor([[1, 0, 1, 1], [0, 0, 0, 0], [0, 1, 0, 1]], dtype=torch.float32).reshape(1, 3, 1, 4)
    # Nt 3 over per_core_N 2: two cores, the second owns one real column of a two-wide block.
    got = sm.sparse_matmul(
        tile_tensor(x, device),
        tile_tensor(w, device),
        sparsity=sparsity_tensor(flags, device),
        program_config=config((8, 8), per_core_N=2, out_subblock_w=2),
        compute_kernel_config=LOFI,
    )
    assert list(got.shape) == [3, 4, 32, 96]
    golden = torch.einsum("bmk,ekn->bemn", x[0], w[0])
    check(ttnn.to_torch(got), golden, flags.reshape(3, 4).bool(), "b sparse")


def test_a_sparse_with_block_float_weights(wheel, device):
    """DeepSeek-V3's w2: each block's rows for expert e (A, E, M, K) against expert e (1, E, K, N)."""
    x, w = randn((2, 4, 32, 64), 3), randn((1, 4, 64, 128), 4, 0.2)
    flags = torch.tensor([[0, 1, 1, 0], [1, 0, 0, 1]], dtype=torch.float32).reshape(1, 1, 2, 4)
    got = sm.sparse_matmul(
        tile_tensor(x, device),
        tile_tensor(w, device, ttnn.bfloat8_b),
        sparsity=sparsity_tensor(flags, device),
        program_config=config((2, 1), per_core_N=2, in0_block_w=1),
        compute_kernel_config=LOFI,
        is_input_a_sparse=True,
        is_input_b_sparse=False,
    )
    w8 = ttnn.to_torch(tile_tensor(w, device, ttnn.bfloat8_b)).float()  # the weights as bfloat8_b holds them
    golden = torch.einsum("aemk,ekn->aemn", x, w8[0])
    check(ttnn.to_torch(got), golden, flags.reshape(2, 4).bool(), "a sparse")


def test_both_sparse_single_k_block(wheel, device):
    """One K block: no partial spill, packer L1 accumulation off."""
    x, w = randn((1, 4, 32, 64), 5), randn((1, 4, 64, 64), 6, 0.2)
    flags = torch.tensor([1, 1, 0, 1], dtype=torch.float32).reshape(1, 1, 1, 4)
    got = sm.sparse_matmul(
        tile_tensor(x, device),
        tile_tensor(w, device),
        sparsity=sparsity_tensor(flags, device),
        program_config=config((8, 8), per_core_N=1),
        compute_kernel_config=LOFI,
        is_input_a_sparse=True,
        is_input_b_sparse=True,
    )
    golden = torch.einsum("emk,ekn->emn", x[0], w[0]).unsqueeze(0)
    check(ttnn.to_torch(got), golden, flags.reshape(1, 4).bool(), "both sparse")


def test_nnz_with_compact_output_packs_active_batches_in_order(wheel, device):
    x, w = randn((1, 2, 32, 128), 7), randn((1, 4, 128, 64), 8, 0.2)
    flags = torch.tensor([[0, 1, 0, 0], [1, 0, 0, 1]], dtype=torch.float32).reshape(1, 2, 1, 4)
    compact = ttnn.allocate_tensor_on_device(ttnn.Shape([1, 3, 32, 64]), ttnn.bfloat16, ttnn.TILE_LAYOUT, device)
    got = sm.sparse_matmul(
        tile_tensor(x, device),
        tile_tensor(w, device),
        sparsity=sparsity_tensor(flags, device),
        program_config=config((8, 8), per_core_N=1),
        compute_kernel_config=LOFI,
        nnz=3,
        optional_output_tensor=compact,
    )
    assert got is compact
    pairs = [(0, 1), (1, 0), (1, 3)]  # (block, expert) of the non-zero flags, in scan order
    golden = torch.stack([x[0, blk] @ w[0, e] for blk, e in pairs]).unsqueeze(0)
    check(ttnn.to_torch(got), golden, torch.ones(1, 3, dtype=torch.bool), "compact")


@pytest.mark.parametrize(
    "flags, nnz, check",
    [
        ([1, 0, 0], 2, "num_valid_batches == num_batch_compute"),
        ([1, 1, 1], 2, "num_valid_batches <= num_batch_compute"),
    ],
)
def test_nnz_that_does_not_match_the_flags_fails_the_sender_assert(wheel, device, flags, nnz, check):
    """On a device this hangs unless the watcher checks the in0 sender's ASSERT; the emulator always checks it."""
    x, w = randn((1, 1, 32, 64), 9), randn((1, 3, 64, 64), 10)
    with pytest.raises(emu_runtime.EmulatorError, match=f"in0_sender_padding_metal2.cpp.*ASSERT failed: {check}"):
        sm.sparse_matmul(
            tile_tensor(x, device),
            tile_tensor(w, device),
            sparsity=sparsity_tensor(torch.tensor(flags, dtype=torch.float32).reshape(1, 1, 1, 3), device),
            program_config=config((8, 8), per_core_N=1),
            nnz=nnz,
        )


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"sparsity_shape": (1, 1, 1, 4)}, "sparsity must be [1, 1, 1, 2]"),
        ({"program_config": config((8, 8), per_core_N=1, in0_block_w=3)}, "divisible by in0_block_w"),
        ({"nnz": 3}, "nnz must be in 1..2"),
        ({"is_input_b_sparse": False}, "at least one of"),
        ({"program_config": None}, "program_config"),
    ],
)
def test_bad_input_is_refused_naming_it(wheel, device, kwargs, words):
    x, w = randn((1, 1, 32, 64), 11), randn((1, 2, 64, 64), 12)
    shape = kwargs.pop("sparsity_shape", (1, 1, 1, 2))
    args = {"program_config": config((8, 8), per_core_N=1), **kwargs}
    with pytest.raises(ValueError, match=words.replace("[", r"\[").replace("]", r"\]")):
        sm.sparse_matmul(
            tile_tensor(x, device), tile_tensor(w, device), sparsity=sparsity_tensor(torch.ones(shape), device), **args
        )


def test_non_rectangular_work_grid_is_refused(wheel, device):
    """Nine output column blocks on an 8-wide grid: in0's multicast rectangle would hold idle cores."""
    x, w = randn((1, 1, 32, 64), 13), randn((1, 1, 64, 9 * 32), 14)
    with pytest.raises(ValueError, match="rectangle"):
        sm.sparse_matmul(
            tile_tensor(x, device),
            tile_tensor(w, device),
            sparsity=sparsity_tensor(torch.ones(1, 1, 1, 1), device),
            program_config=config((8, 8), per_core_N=1),
        )


def test_zero_fill_program_zeroes_every_tile(wheel, device):
    t = tile_tensor(randn((1, 3, 64, 96), 15), device)
    ttnn.generic_op([t], zero_fill_program(t.buffer_address(), 18, t.dtype.data_format))
    assert torch.equal(ttnn.to_torch(t).float(), torch.zeros(1, 3, 64, 96))
