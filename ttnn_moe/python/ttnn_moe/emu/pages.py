"""Host-side page encoding: a logical torch tensor <-> the bytes of its DRAM pages.

ROW_MAJOR: one page per row of the last dim, rows in row-major order of the
leading dims. TILE: the last two dims are zero-padded to multiples of 32 and cut
into 32x32 tiles, pages in row-major tile order over the last two dims and
batched over the leading dims (a rank-1 tensor is one row, as a (1, N) matrix).
A tile holds four 16x16 faces (top-left, top-right, bottom-left, bottom-right),
row-major inside a face. 2- and 4-byte formats are tilized with torch reshapes;
bfloat8_b goes through the emulator's numerics (`_C.numerics`), which owns its
shared-exponent encoding.
"""

from __future__ import annotations

import numpy as np
import torch

from ttnn_moe.emu.types import TILE_SIZE, DataType, Layout, Shape, bfloat8_b, uint16, uint32

FACE_SIZE = 16
MAX_RANK = 4

# Torch dtype whose bytes are the element encoding of each non-block dtype
# (integers are kept as same-width signed bit patterns so every torch op supports them).
_BITS_DTYPE = {
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "uint32": torch.int32,
    "uint16": torch.int16,
    "int32": torch.int32,
}


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
        # 64 shared exponents (one per face row) + 1024 sign/mantissa bytes.
        return 4 * FACE_SIZE + TILE_SIZE * TILE_SIZE
    return TILE_SIZE * TILE_SIZE * dtype.element_bytes


def check_layout_supports(dtype: DataType, layout: Layout) -> None:
    if dtype.is_block_float and layout is not Layout.TILE:
        raise ValueError(f"{dtype.name} exists only in TILE_LAYOUT, got {layout.name}")


# --- values -----------------------------------------------------------------------------------


def _integer_values(t: torch.Tensor, dtype: DataType) -> torch.Tensor:
    """Integer values as int64, truncating floats toward zero; out-of-range values are an error."""
    if t.is_floating_point():
        if not bool(torch.isfinite(t).all()):
            raise ValueError(f"cannot store non-finite values as {dtype.name}")
        values = t.to(torch.float64).trunc().to(torch.int64)
    else:
        values = t.to(torch.int64)
    bad = (values < dtype.min_value) | (values > dtype.max_value)
    if bool(bad.any()):
        index = tuple(int(i) for i in bad.nonzero()[0])
        raise ValueError(
            f"value {int(values[index])} at index {list(index)} is outside the range of {dtype.name} "
            f"[{dtype.min_value}, {dtype.max_value}]"
        )
    return values


def encode_values(t: torch.Tensor, dtype: DataType) -> torch.Tensor:
    """Logical values -> the tensor whose bytes are the stored elements (float32 for bfloat8_b,
    which is quantized when tilized)."""
    if dtype.is_integer:
        values = _integer_values(t, dtype)
        if dtype is uint32:
            values = torch.where(values >= 2**31, values - 2**32, values)
        elif dtype is uint16:
            values = torch.where(values >= 2**15, values - 2**16, values)
        return values.to(_BITS_DTYPE[dtype.name])
    if dtype is bfloat8_b:
        return t.to(torch.float32)
    # float32 -> bfloat16 rounds to nearest even, as ttnn's host conversion does.
    return t.to(torch.float32).to(_BITS_DTYPE[dtype.name])


def decode_values(bits: torch.Tensor, dtype: DataType) -> torch.Tensor:
    """Stored elements -> the tensor `to_torch` returns (ttnn's output dtypes)."""
    if dtype.is_block_float:
        return bits
    return bits.view(dtype.torch_dtype)


# --- tiles --------------------------------------------------------------------------------------


def _tilize(matrices: torch.Tensor) -> torch.Tensor:
    """(B, H, W), H and W multiples of 32 -> (B, H/32, W/32, 2, 2, 16, 16): tiles of faces."""
    b, h, w = matrices.shape
    # dims: batch, tile row, face row, row in face, tile col, face col, col in face
    split = matrices.reshape(b, h // TILE_SIZE, 2, FACE_SIZE, w // TILE_SIZE, 2, FACE_SIZE)
    return split.permute(0, 1, 4, 2, 5, 3, 6).contiguous()


def _untilize(tiles: torch.Tensor, b: int, h: int, w: int) -> torch.Tensor:
    faces = tiles.reshape(b, h // TILE_SIZE, w // TILE_SIZE, 2, 2, FACE_SIZE, FACE_SIZE)
    return faces.permute(0, 1, 3, 5, 2, 4, 6).reshape(b, h, w)


def _numerics():
    from ttnn_moe._C import numerics

    if not hasattr(numerics, "tilize"):
        raise NotImplementedError("bfloat8_b needs _C.numerics.tilize/untilize, not built into this extension")
    return numerics


def to_pages(t: torch.Tensor, dtype: DataType, layout: Layout) -> np.ndarray:
    """Logical tensor -> the bytes of all its pages in page order (uint8, 1-D)."""
    shape = check_shape(t.shape)
    check_layout_supports(dtype, layout)
    bits = encode_values(t, dtype)
    if layout is Layout.ROW_MAJOR:
        return bits.contiguous().view(torch.uint8).reshape(-1).numpy()
    b, h, w = matrix_view(shape)
    hp, wp = _round_up(h, TILE_SIZE), _round_up(w, TILE_SIZE)
    padded = torch.zeros((b, hp, wp), dtype=bits.dtype)
    padded[:, :h, :w] = bits.reshape(b, h, w)
    if dtype.is_block_float:
        # Tiles of consecutive 32-row bands are consecutive pages, so the batch folds into rows.
        pages = _numerics().tilize(dtype.data_format, padded.reshape(b * hp, wp).numpy())
        return np.ascontiguousarray(pages, dtype=np.uint8).reshape(-1)
    return _tilize(padded).view(torch.uint8).reshape(-1).numpy()


def from_pages(raw: np.ndarray, shape, dtype: DataType, layout: Layout) -> torch.Tensor:
    """Bytes of all pages (uint8, page order) -> the logical tensor in `to_torch`'s dtype."""
    shape = check_shape(shape)
    raw = np.ascontiguousarray(raw, dtype=np.uint8).reshape(-1)
    expected = num_pages(shape, layout) * page_size(shape, dtype, layout)
    if raw.size != expected:
        raise ValueError(f"{raw.size} bytes do not hold a {list(shape)} {dtype.name} {layout.name} tensor "
                         f"({expected} bytes)")
    if layout is Layout.ROW_MAJOR:
        bits = torch.from_numpy(raw.copy()).view(_BITS_DTYPE[dtype.name]).reshape(shape)
        return decode_values(bits, dtype)
    b, h, w = matrix_view(shape)
    hp, wp = _round_up(h, TILE_SIZE), _round_up(w, TILE_SIZE)
    if dtype.is_block_float:
        flat = _numerics().untilize(dtype.data_format, raw, b * hp, wp)
        matrices = torch.from_numpy(np.array(flat, dtype=np.float32)).reshape(b, hp, wp)
    else:
        tiles = torch.from_numpy(raw.copy()).view(_BITS_DTYPE[dtype.name])
        matrices = _untilize(tiles, b, hp, wp)
    return decode_values(matrices[:, :h, :w].reshape(shape).contiguous(), dtype)
