"""golden.round_to_block_float (torch) against values worked out by hand and against the emulator's
numerics (C++), two implementations of tt-metal's host rounding that share no code."""

import numpy as np
import pytest
import torch
from ttnn_moe._C import numerics
from ttnn_moe._C.program import DataFormat
from ttnn_moe.golden import round_to_block_float

FORMATS = {"bfloat8_b": DataFormat.Bfp8_b, "bfloat4_b": DataFormat.Bfp4_b}


def test_bfloat4_b_rounding_by_hand():
    # Shared exponent 2^0 (from 1.0): 3 magnitude bits give steps of 0.25 and a largest value of 1.75.
    row = torch.tensor([1.0, 1.125, 1.375, 1.9, 0.1, -0.1, 0.125, 0.13, -0.6, 0.0, -0.0, 1e-40] + [0.0] * 4)
    want = torch.tensor([1.0, 1.0, 1.5, 1.75, 0.0, 0.0, 0.0, 0.25, -0.5, 0.0, 0.0, 0.0] + [0.0] * 4)
    # ties to even (1.125 -> 1, 1.375 -> 1.5, 0.125 -> 0); saturation (1.9 -> 1.75); underflow to +0
    got = round_to_block_float(row, "bfloat4_b")
    assert torch.equal(got, want)
    assert not torch.signbit(got[5]) and not torch.signbit(got[10])  # no negative zeros


@pytest.mark.parametrize("dtype_name", sorted(FORMATS))
def test_golden_equals_the_emulator_numerics(dtype_name):
    g = torch.Generator().manual_seed(3)
    scale = torch.pow(2.0, torch.randint(-40, 40, (64, 1), generator=g).float())
    x = torch.randn(64, 96, generator=g) * scale
    x[0, :16] = torch.tensor([1.0, 1.125, 1.375, 1.9, 1e-40, -1e-39] + [-0.06] * 10)
    x[1, :16] = 0.0
    x[2, :16] = torch.tensor([3e38] + [1e-30] * 15)
    fmt = FORMATS[dtype_name]
    pages = numerics.tilize(fmt, x.numpy())
    emulated = torch.from_numpy(np.asarray(numerics.untilize(fmt, pages, 64, 96)))
    assert torch.equal(round_to_block_float(x, dtype_name).view(torch.int32), emulated.view(torch.int32))


def test_bad_inputs_name_the_value():
    with pytest.raises(ValueError, match="'bfloat2_b'"):
        round_to_block_float(torch.zeros(16), "bfloat2_b")
    with pytest.raises(ValueError, match=r"multiple of 16, got shape \[4, 20\]"):
        round_to_block_float(torch.zeros(4, 20), "bfloat4_b")
    with pytest.raises(ValueError, match=r"finite, got inf at index \[3\]"):
        round_to_block_float(torch.tensor([0.0] * 3 + [float("inf")] * 13), "bfloat8_b")
