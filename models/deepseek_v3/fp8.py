"""Block-scaled float8 weights as stored in the official DeepSeek-V3 checkpoint.

A weight W (out, in) is stored as `weight` in float8_e4m3fn plus `weight_scale_inv`
(ceil(out/128), ceil(in/128)) fp32, one scale per 128x128 block (edge blocks may be
partial): W[i, j] = float(W8[i, j]) * scale_inv[i // 128, j // 128].
"""

from __future__ import annotations

import math

import torch

FP8_DTYPE = torch.float8_e4m3fn
FP8_BLOCK = (128, 128)
_FP8_MAX = torch.finfo(FP8_DTYPE).max  # 448


def fp8_scale_shape(weight_shape: tuple[int, ...], block: tuple[int, int] = FP8_BLOCK) -> tuple[int, ...]:
    """Shape of the scale_inv tensor for a weight: leading dims kept, last two divided by the block, rounded up."""
    *lead, rows, cols = weight_shape
    return (*lead, math.ceil(rows / block[0]), math.ceil(cols / block[1]))


def _expand_blocks(scale_inv: torch.Tensor, shape: tuple[int, ...], block: tuple[int, int]) -> torch.Tensor:
    """scale_inv (..., ceil(out/b0), ceil(in/b1)) -> (..., out, in): each block's scale over its elements."""
    rows, cols = shape[-2], shape[-1]
    expanded = scale_inv.repeat_interleave(block[0], dim=-2).repeat_interleave(block[1], dim=-1)
    return expanded[..., :rows, :cols]


def dequantize_fp8_blockwise(
    w8: torch.Tensor, scale_inv: torch.Tensor, block: tuple[int, int] = FP8_BLOCK
) -> torch.Tensor:
    """w8 (..., out, in) float8_e4m3fn, scale_inv (..., ceil(out/128), ceil(in/128)) -> (..., out, in) fp32."""
    if w8.dtype != FP8_DTYPE:
        raise TypeError(f"w8 must be {FP8_DTYPE}, got {w8.dtype}")
    want = fp8_scale_shape(tuple(w8.shape), block)
    if tuple(scale_inv.shape) != want:
        raise ValueError(f"scale_inv must be {want} for weight {tuple(w8.shape)}, got {tuple(scale_inv.shape)}")
    # One block row at a time, in place: the only fp32 copy is the result.
    w = w8.float()  # (..., out, in)
    scale_inv = scale_inv.float()
    cols = w.shape[-1]
    for i in range(scale_inv.shape[-2]):
        row_scales = scale_inv[..., i, None, :].repeat_interleave(block[1], dim=-1)[..., :cols]  # (..., 1, in)
        w[..., i * block[0] : (i + 1) * block[0], :] *= row_scales
    return w


def quantize_fp8_blockwise(w: torch.Tensor, block: tuple[int, int] = FP8_BLOCK) -> tuple[torch.Tensor, torch.Tensor]:
    """w (out, in) float -> (w8 (out, in) float8_e4m3fn, scale_inv (ceil(out/128), ceil(in/128)) fp32).

    Each block is scaled so its largest magnitude maps to the fp8 maximum (448);
    an all-zero block gets scale 1.
    """
    if w.dim() != 2 or not w.is_floating_point():
        raise ValueError(f"w must be a 2-D float tensor, got shape {tuple(w.shape)} dtype {w.dtype}")
    rows, cols = w.shape
    block_rows, block_cols = fp8_scale_shape((rows, cols), block)
    padded = torch.zeros(block_rows * block[0], block_cols * block[1])
    padded[:rows, :cols] = w.float()
    blocks = padded.view(block_rows, block[0], block_cols, block[1])  # (br, b0, bc, b1)
    amax = blocks.abs().amax(dim=(1, 3))  # (br, bc)
    scale_inv = torch.where(amax > 0, amax / _FP8_MAX, torch.ones_like(amax))  # (br, bc)
    scaled = w.float() / _expand_blocks(scale_inv, (rows, cols), block)  # (out, in), |.| <= 448
    # Clamp: the division can land a hair above 448, which fp8 cannot hold.
    w8 = scaled.clamp(-_FP8_MAX, _FP8_MAX).to(FP8_DTYPE)  # (out, in)
    return w8, scale_inv
