"""The values a block-float tile (bfloat8_b, bfloat4_b) holds, computed in torch.

tt-metal's host packing rule, written here from its description rather than from the emulator's
numerics, so tests can compare the two: blocks of 16 consecutive values along the last dim (a face
row of a 32x32 tile) share the largest fp32 exponent field of the block; zeros and subnormals store
0; every other value's 24-bit significand (hidden 1 explicit) is shifted right by (shared - own exponent), dropping the
shifted-out bits, then rounded to `magnitude_bits` bits (nearest, ties to even), saturating at
2^magnitude_bits - 1. A magnitude m decodes to sign * m * 2^(shared - 127 - (magnitude_bits - 1)).
"""

from __future__ import annotations

import torch

BLOCK = 16
MAGNITUDE_BITS = {"bfloat8_b": 7, "bfloat4_b": 3}


def round_to_block_float(values: torch.Tensor, dtype_name: str) -> torch.Tensor:
    """values (..., N), N a multiple of 16, finite -> fp32 values as `dtype_name` stores them."""
    if dtype_name not in MAGNITUDE_BITS:
        raise ValueError(f"dtype_name must be one of {sorted(MAGNITUDE_BITS)}, got {dtype_name!r}")
    if values.shape[-1] % BLOCK != 0:
        raise ValueError(f"the last dim must be a multiple of {BLOCK}, got shape {list(values.shape)}")
    x = values.detach().float().contiguous()
    if not torch.isfinite(x).all():
        index = (~torch.isfinite(x)).nonzero()[0].tolist()
        raise ValueError(f"values must be finite, got {x[tuple(index)].item()} at index {index}")
    width = MAGNITUDE_BITS[dtype_name]
    bits = (x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF).reshape(*x.shape[:-1], -1, BLOCK)
    exponent = (bits >> 23) & 0xFF
    shared = exponent.amax(dim=-1, keepdim=True)
    shift = shared - exponent
    significand = (bits & 0x7FFFFF) | 0x800000
    aligned = torch.where(shift >= 32, 0, significand >> shift.clamp(max=31))
    dropped_bits = 24 - width
    magnitude = aligned >> dropped_bits
    dropped = aligned & ((1 << dropped_bits) - 1)
    half = 1 << (dropped_bits - 1)
    magnitude = magnitude + ((dropped > half) | ((dropped == half) & (magnitude % 2 == 1))).to(torch.int64)
    magnitude = torch.where(exponent == 0, 0, magnitude.clamp(max=(1 << width) - 1))
    sign = torch.where(((bits >> 31) == 1) & (magnitude > 0), -1.0, 1.0).double()  # no negative zeros
    scaled = torch.ldexp(magnitude.double(), (shared - 127 - (width - 1)).double())
    return (sign * scaled).float().reshape(x.shape)
