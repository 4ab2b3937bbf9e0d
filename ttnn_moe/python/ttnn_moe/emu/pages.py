"""Host-side page encoding: a logical torch tensor <-> the bytes of its DRAM pages.

ROW_MAJOR: one page per row of the last dim, rows in row-major order of the
leading dims. TILE: the last two dims are zero-padded to multiples of 32 and cut
into 32x32 tiles, pages in row-major tile order over the last two dims and
batched over the leading dims (a rank-1 tensor is one row, as a (1, N) matrix).
A tile holds four 16x16 faces (top-left, top-right, bottom-left, bottom-right),
row-major inside a face. 2- and 4-byte formats are tilized on the host with
numpy strided copies; bfloat8_b and bfloat4_b go through the emulator's numerics
(`_C.numerics`), which owns its shared-exponent encoding.
"""

from __future__ import annotations

import numpy as np
import torch

from ttnn_moe._C import numerics as _numerics
from ttnn_moe._C import program as _program
from ttnn_moe.emu.types import TILE_SIZE, DataType, Layout, Shape

FACE_SIZE = 16
MAX_RANK = 4


def _round_up(n: int, multiple: int) -> int:
    return (n + multiple - 1) // multiple * multiple


def check_shape(shape) -> Shape:
    shape = Shape(shape)
    if not 1 <= len(shape) <= MAX_RANK:
        raise ValueError(f"tensor rank must be 1..{MAX_RANK}, got shape {list(shape)}")
    if any(d <= 0 for d in shape):
        raise ValueError(f"tensor dims must be positive, got shape {list(shape)}")
    return shape


def matrix_view(shape: Shape) -> tuple[int, int, int]:
    """(batch, rows, cols): the leading dims folded into a batch, rank 1 seen as one row."""
    if len(shape) == 1:
        return 1, 1, shape[0]
    batch = 1
    for d in shape[:-2]:
        batch *= d
    return batch, shape[-2], shape[-1]


def padded_shape(shape: Shape, layout: Layout) -> Shape:
    """TILE pads the last two dims (the only dim for rank 1) to multiples of 32."""
    if layout is Layout.ROW_MAJOR:
        return Shape(shape)
    if len(shape) == 1:
        return Shape([_round_up(shape[0], TILE_SIZE)])
    return Shape(list(shape[:-2]) + [_round_up(shape[-2], TILE_SIZE), _round_up(shape[-1], TILE_SIZE)])


def page_size(shape: Shape, dtype: DataType, layout: Layout) -> int:
    if layout is Layout.TILE:
        return tile_bytes(dtype)
    return shape[-1] * dtype.element_bytes


def num_pages(shape: Shape, layout: Layout) -> int:
    batch, rows, cols = matrix_view(shape)
    if layout is Layout.TILE:
        return batch * (_round_up(rows, TILE_SIZE) // TILE_SIZE) * (_round_up(cols, TILE_SIZE) // TILE_SIZE)
    return batch * rows


def tile_bytes(dtype: DataType) -> int:
    if dtype.is_block_float:
        # 64 shared exponents (one per face row) + the sign/magnitude codes (bfloat8_b 1024 B, bfloat4_b 512 B).
        return _program.tile_size_bytes(dtype.data_format)
    return TILE_SIZE * TILE_SIZE * dtype.element_bytes


def check_layout_supports(dtype: DataType, layout: Layout) -> None:
    if dtype.is_block_float and layout is not Layout.TILE:
        raise ValueError(f"{dtype.name} exists only in TILE_LAYOUT, got {layout.name}")


# --- values -----------------------------------------------------------------------------------
# Element values are converted with numpy: torch's elementwise ops pay a large
# thread start-up cost per call on small hosts, and these run on every transfer.

# Stored element bits of each non-block dtype, as a same-width numpy integer dtype.
_BITS = {"bfloat16": np.int16, "float32": np.int32, "uint32": np.int32, "uint16": np.int16, "int32": np.int32}
# to_torch's dtype of each non-block dtype, viewed from those bits.
_TORCH_FROM_BITS = {
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "uint32": torch.uint32,
    "uint16": torch.uint16,
    "int32": torch.int32,
}


def _numpy_source(t: torch.Tensor) -> np.ndarray:
    """A numpy view of t's values (bfloat16 widened to float32, exactly)."""
    t = t.detach().cpu()
    if t.dtype in (torch.bfloat16, torch.float16):  # exact widening, vectorized by torch
        return t.float().numpy()
    if t.dtype == torch.bool:
        return t.numpy().astype(np.int64)
    return t.numpy()


def _bfloat16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bits, rounding to nearest even (ttnn's host conversion); NaN stays NaN."""
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    quiet_nan = (b >> 16) | 0x40
    return np.where(np.isnan(x), quiet_nan, rounded).astype(np.uint16).view(np.int16)


def _integer_values(x: np.ndarray, dtype: DataType) -> np.ndarray:
    """Integer values as int64, truncating floats toward zero; out-of-range values are an error."""
    if x.dtype.kind == "f":
        if not np.isfinite(x).all():
            raise ValueError(f"cannot store non-finite values as {dtype.name}")
        values = np.trunc(x).astype(np.int64)
    else:
        values = x.astype(np.int64)
    bad = (values < dtype.min_value) | (values > dtype.max_value)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"value {int(values[index])} at index {list(index)} is outside the range of {dtype.name} "
            f"[{dtype.min_value}, {dtype.max_value}]"
        )
    return values


def encode_values(t: torch.Tensor, dtype: DataType) -> np.ndarray:
    """Logical values -> numpy array of the stored element bits (float32 values for the block
    floats, which are quantized when tilized)."""
    if t.dtype == torch.bfloat16 and dtype.name == "bfloat16":  # stored as given, NaN payloads included
        return t.detach().cpu().view(torch.int16).numpy()
    x = _numpy_source(t)
    if dtype.is_integer:
        # Two's complement wrap of the in-range values gives the unsigned formats' bits.
        return _integer_values(x, dtype).astype(_BITS[dtype.name])
    x = x.astype(np.float32, copy=False)
    if dtype.is_block_float:
        return x
    if dtype.name == "bfloat16":
        return _bfloat16_bits(x)
    return x.view(np.int32)


def _block_float_source(t: torch.Tensor) -> tuple[np.ndarray, bool]:
    """A numpy view of t's values for the native tilizer, strides kept: bfloat16 as its bits
    (int16, flagged), float32 as is, anything else converted to float32."""
    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy(), True
    if t.dtype == torch.float32:
        return t.numpy(), False
    return _numpy_source(t).astype(np.float32), False


def decode_values(bits: np.ndarray, dtype: DataType) -> torch.Tensor:
    """Stored elements -> the tensor `to_torch` returns (ttnn's output dtypes)."""
    values = torch.from_numpy(np.ascontiguousarray(bits))
    if dtype.is_block_float:
        return values
    return values.view(_TORCH_FROM_BITS[dtype.name])


# --- tiles --------------------------------------------------------------------------------------


def _face_rows(matrices: np.ndarray) -> np.ndarray:
    """(B, H, W) -> (B, H, W/16) opaque units of one face row (16 elements), so the tile
    permutation moves 32- or 64-byte blocks instead of single elements (several times faster)."""
    unit = np.dtype((np.void, matrices.dtype.itemsize * FACE_SIZE))
    return np.ascontiguousarray(matrices).view(unit)


def _tilize(matrices: np.ndarray) -> np.ndarray:
    """(B, H, W), H and W multiples of 32 -> tile pages as bytes, in row-major tile order per batch."""
    b, h, w = matrices.shape
    # axes: batch, tile row, face row, row in face, tile col, face col (unit = 16 columns)
    rows = _face_rows(matrices).reshape(b, h // TILE_SIZE, 2, FACE_SIZE, w // TILE_SIZE, 2)
    # -> batch, tile row, tile col, face row, face col, row in face
    return np.ascontiguousarray(rows.transpose(0, 1, 4, 2, 5, 3)).view(np.uint8).reshape(-1)


def _untilize(raw: np.ndarray, element_dtype, b: int, h: int, w: int) -> np.ndarray:
    """Tile page bytes -> (B, H, W) elements of element_dtype (inverse of _tilize)."""
    unit = np.dtype((np.void, np.dtype(element_dtype).itemsize * FACE_SIZE))
    tiles = raw.view(unit).reshape(b, h // TILE_SIZE, w // TILE_SIZE, 2, 2, FACE_SIZE)
    matrices = np.ascontiguousarray(tiles.transpose(0, 1, 3, 5, 2, 4))
    return matrices.view(element_dtype).reshape(b, h, w)


def to_pages(t: torch.Tensor, dtype: DataType, layout: Layout) -> np.ndarray:
    """Logical tensor -> the bytes of all its pages in page order (uint8, 1-D)."""
    shape = check_shape(t.shape)
    check_layout_supports(dtype, layout)
    b, h, w = matrix_view(shape)
    if dtype.is_block_float and h % TILE_SIZE == 0 and w % TILE_SIZE == 0:
        # Whole tiles: the native tilizer reads the values where they are (any strides, bf16 or
        # float32) and packs them on both cores, with no intermediate copy.
        source, bfloat16_bits = _block_float_source(t)
        return _numerics.tilize(dtype.data_format, source.reshape(b, h, w), bfloat16_bits=bfloat16_bits)
    values = encode_values(t, dtype)
    if layout is Layout.ROW_MAJOR:
        return np.ascontiguousarray(values).view(np.uint8).reshape(-1)
    hp, wp = _round_up(h, TILE_SIZE), _round_up(w, TILE_SIZE)
    padded = np.zeros((b, hp, wp), dtype=values.dtype)
    padded[:, :h, :w] = values.reshape(b, h, w)
    if dtype.is_block_float:
        return _numerics.tilize(dtype.data_format, padded)
    return _tilize(padded)


def from_pages(raw: np.ndarray, shape, dtype: DataType, layout: Layout) -> torch.Tensor:
    """Bytes of all pages (uint8, page order) -> the logical tensor in `to_torch`'s dtype."""
    shape = check_shape(shape)
    raw = np.ascontiguousarray(raw, dtype=np.uint8).reshape(-1)
    expected = num_pages(shape, layout) * page_size(shape, dtype, layout)
    if raw.size != expected:
        raise ValueError(
            f"{raw.size} bytes do not hold a {list(shape)} {dtype.name} {layout.name} tensor ({expected} bytes)"
        )
    if dtype.is_block_float:
        b, h, w = matrix_view(shape)
        hp, wp = _round_up(h, TILE_SIZE), _round_up(w, TILE_SIZE)
        flat = np.asarray(_numerics.untilize(dtype.data_format, raw, b * hp, wp), dtype=np.float32)
        return decode_values(flat.reshape(b, hp, wp)[:, :h, :w].reshape(shape), dtype)
    element_dtype = _BITS[dtype.name]
    if layout is Layout.ROW_MAJOR:
        values = raw.view(element_dtype).reshape(shape)
    else:
        b, h, w = matrix_view(shape)
        hp, wp = _round_up(h, TILE_SIZE), _round_up(w, TILE_SIZE)
        values = _untilize(raw, element_dtype, b, hp, wp)[:, :h, :w].reshape(shape)
    return decode_values(values, dtype)
