"""ttnn.matmul / ttnn.linear of a wide matrix product as tt-metal 0.81.1 builds it (the 1D-multicast
program, mcast_in0, Metal 2.0 kernels unmodified from the wheel) on the emulator, against torch in fp32.

bfloat16 inputs, 16-bit DST and bfloat16 partials (packer L1 accumulation over K blocks) round on the
way: held to PCC and a max error. Without a program config the matmul takes tt-metal's own 1D choice,
whose core count the recorded builds fix (one core for a 32-column output, one per tile column up to
the 64-core grid)."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
import ttnn_moe.emu as ttnn
from ttnn_moe.emu.ttmetal import matmul as mm
from ttnn_moe.emu.ttmetal.matmul_config import mcast_in0_1d_config
from ttnn_moe.testing import assert_pcc


@pytest.fixture
def device():
    dev = ttnn.open_device(grid=(8, 8))
    yield dev
    ttnn.close_device(dev)


def randn(shape, seed, scale=1.0):
    return (torch.randn(shape, generator=torch.Generator().manual_seed(seed)) * scale).bfloat16().float()


def tile_tensor(t, device, dtype=ttnn.bfloat16):
    return ttnn.from_torch(t, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device)


def test_tt_metal_default_config_matches_the_recorded_builds():
    # (32, 256) x (256, 32): one core, K in 4 blocks of 2; (32, 7168) x (7168, 2048): 64 cores, 112 blocks.
    small, big = mcast_in0_1d_config(1, 8, 32, (8, 8)), mcast_in0_1d_config(1, 224, 2048, (8, 8))
    assert (small.per_core_N, small.in0_block_w) == (1, 2)
    assert (big.per_core_N, big.in0_block_w, -(-64 // big.per_core_N)) == (1, 2, 64)
    assert mcast_in0_1d_config(1, 64, 7168, (8, 8)).per_core_N == 4  # DeepSeek-V3's w2 width: 56 cores


@pytest.mark.parametrize(
    "m, k, n, weight_dtype",
    [
        (32, 256, 32, ttnn.bfloat16),  # one core: the in0 sender alone, no multicast
        (32, 256, 512, ttnn.bfloat16),  # 16 cores in two rows of the grid: in0 multicast to 15 receivers
        (32, 128, 192, ttnn.bfloat8_b),  # 6 cores, bfloat8_b weights
    ],
)
def test_linear_matches_torch(wheel, device, m, k, n, weight_dtype):
    x, w = randn((m, k), 1), randn((k, n), 2, 0.1)
    got = ttnn.to_torch(mm.linear(tile_tensor(x, device), tile_tensor(w, device, weight_dtype))).float()
    w_held = ttnn.to_torch(tile_tensor(w, device, weight_dtype)).float()
    golden = x @ w_held
    assert got.shape == golden.shape
    assert_pcc(golden, got, 0.9995, f"linear {m}x{k}x{n}")
    assert (got - golden).abs().max() <= 0.02 * golden.abs().max()


def test_matmul_with_a_program_config_and_a_narrow_last_block(wheel, device):
    """Nt 5 over per_core_N 2: three cores, the last owns one real column of its two-wide block."""
    x, w = randn((1, 1, 32, 64), 3), randn((1, 1, 64, 160), 4, 0.1)
    config = replace(mcast_in0_1d_config(1, 2, 160, (8, 8)), per_core_N=2, out_block_w=2, out_subblock_w=2)
    got = ttnn.to_torch(mm.matmul(tile_tensor(x, device), tile_tensor(w, device), program_config=config)).float()
    assert_pcc(x @ w, got, 0.9995, "matmul with config")


def test_batched_input_is_refused_naming_it(wheel, device):
    with pytest.raises(ValueError, match=r"every leading dim 1.*\[2, 32, 64\]"):
        mm.matmul(tile_tensor(randn((2, 32, 64), 5), device), tile_tensor(randn((64, 32), 6), device))
