"""Bfp8_b tiles against an independent numpy implementation of tt-metal's host packing rule.

The rule (see ttnn_moe/cpp/emu/numerics/bfp.cpp): one shared exponent per 16-value face row = the largest
fp32 exponent field of the row; exponent-0 values (zeros, subnormals) encode as 0; the others align their
24-bit significand to the shared exponent by a truncating right shift, then round to 7 bits at bit 17
(nearest, ties to even), saturating at 127; no negative zero codes. A tile is 64 exponent bytes (face rows in
face order TL, TR, BL, BR) followed by 1024 sign|magnitude bytes in tilized order.
"""

import numpy as np
import pytest
from ttnn_moe._C import numerics
from ttnn_moe._C.program import DataFormat


def _face_rows(matrix: np.ndarray) -> np.ndarray:
    """(32, 32) -> (64, 16): face rows in tilized order."""
    return matrix.reshape(2, 16, 2, 16).transpose(0, 2, 1, 3).reshape(64, 16)


def _reference_encode(matrix: np.ndarray) -> bytes:
    bits = _face_rows(matrix).view(np.uint32).astype(np.int64)
    exponent = (bits >> 23) & 0xFF
    shared = exponent.max(axis=1, keepdims=True)
    shift = shared - exponent
    significand = (bits & 0x7FFFFF) | 0x800000
    aligned = np.where(shift >= 32, 0, significand >> np.minimum(shift, 31))
    magnitude = aligned >> 17
    remainder = aligned & 0x1FFFF
    round_up = (remainder > 0x10000) | ((remainder == 0x10000) & (magnitude % 2 == 1))
    magnitude = np.minimum(magnitude + round_up, 127)
    magnitude = np.where(exponent == 0, 0, magnitude)
    sign = np.where(magnitude > 0, bits >> 31, 0)
    codes = (sign << 7) | magnitude
    return shared.astype(np.uint8).tobytes() + codes.astype(np.uint8).tobytes()


def _reference_decode(tile: np.ndarray) -> np.ndarray:
    """Finite blocks only: value = (-1)^sign * magnitude * 2^(shared - 127 - 6)."""
    shared = tile[:64].astype(np.int64)[:, None]
    codes = tile[64:].astype(np.int64).reshape(64, 16)
    values = np.ldexp(np.where(codes >> 7, -1.0, 1.0) * (codes & 0x7F), shared - 133).astype(np.float32)
    return values.reshape(2, 2, 16, 16).transpose(0, 2, 1, 3).reshape(32, 32)


def _edge_tile() -> np.ndarray:
    rng = np.random.default_rng(7)
    tile = rng.standard_normal((32, 32)).astype(np.float32)
    rows = _face_rows(tile)  # view-free copy: edit face rows, then rebuild the tile
    one = np.float32(1.0)
    # Ties after alignment: 1 + k/128 at shared exponent 2^0 sits halfway between two 7-bit codes.
    rows[0] = [one] + [np.float32(1 + (2 * k + 1) / 128) for k in range(15)]
    # Saturation: 1.999 rounds to 128 and must clamp to 127.
    rows[1] = [np.float32(1.999)] + [np.float32(-0.001 * k) for k in range(15)]
    # Zeros, a subnormal (flushed), negative tiny values that round to 0 (no -0 codes).
    rows[2] = [0.0, -0.0, np.float32(1e-40), -np.float32(1e-40), np.float32(1.0)] + [-np.float32(1e-9)] * 11
    # Huge exponent spread: small values vanish entirely.
    rows[3] = [np.float32(3e38)] + [np.float32(1e-30)] * 15
    # A value a whole significand width below the shared exponent.
    rows[4] = [np.float32(2.0**24), np.float32(1.0)] + [np.float32(2.0**-10)] * 14
    return rows.reshape(2, 2, 16, 16).transpose(0, 2, 1, 3).reshape(32, 32).copy()


def _tiles_of(matrix: np.ndarray) -> list[np.ndarray]:
    rows, cols = matrix.shape
    return [matrix[r : r + 32, c : c + 32] for r in range(0, rows, 32) for c in range(0, cols, 32)]


def test_encode_matches_reference_on_edge_cases():
    tile = _edge_tile()
    ours = numerics.tilize(DataFormat.Bfp8_b, tile)
    assert ours.tobytes() == _reference_encode(tile)
    # The semantics themselves: codes of row 0 round ties to even, row 1 saturates, row 2 has no -0.
    codes = ours[64:].reshape(64, 16)
    assert list(codes[0, :4]) == [64, 64, 66, 66]  # 1, 1+1/128 -> 1, 1+3/128 -> 1+2/64, 1+5/128 -> 1+2/64
    assert codes[1, 0] == 127
    assert list(codes[2, :4]) == [0, 0, 0, 0] and (codes[2, 5:] == 0).all()


@pytest.mark.parametrize("scale_spread", [0.0, 4.0, 20.0])
def test_encode_matches_reference_on_random_tiles(scale_spread):
    rng = np.random.default_rng(8)
    matrix = rng.standard_normal((64, 96)) * np.exp2(rng.uniform(-scale_spread, scale_spread, (64, 96)))
    matrix = matrix.astype(np.float32)
    ours = numerics.tilize(DataFormat.Bfp8_b, matrix)
    expected = b"".join(_reference_encode(t) for t in _tiles_of(matrix))
    assert ours.tobytes() == expected


def test_decode_matches_reference_and_is_exact():
    rng = np.random.default_rng(9)
    matrix = (rng.standard_normal((32, 64)) * 10).astype(np.float32)
    pages = numerics.tilize(DataFormat.Bfp8_b, matrix)
    ours = numerics.untilize(DataFormat.Bfp8_b, pages, 32, 64)
    for index, tile in enumerate(_tiles_of(ours)):
        np.testing.assert_array_equal(tile, _reference_decode(pages[index * 1088 : (index + 1) * 1088]))


def test_decode_of_arbitrary_well_formed_bytes():
    rng = np.random.default_rng(10)
    tile = np.empty(1088, dtype=np.uint8)
    tile[:64] = rng.integers(8, 250, size=64)  # shared exponents where every code decodes to a normal float
    tile[64:] = rng.integers(0, 256, size=1024)
    ours = numerics.untilize(DataFormat.Bfp8_b, tile, 32, 32)
    np.testing.assert_array_equal(ours, _reference_decode(tile))


def test_quantization_error_bound():
    rng = np.random.default_rng(11)
    matrix = (rng.standard_normal((128, 128)) * np.exp2(rng.uniform(-3, 3, (128, 128)))).astype(np.float32)
    back = numerics.untilize(DataFormat.Bfp8_b, numerics.tilize(DataFormat.Bfp8_b, matrix), 128, 128)
    for original, quantized in zip(_tiles_of(matrix), _tiles_of(back)):
        rows, q_rows = _face_rows(original.copy()), _face_rows(quantized.copy())
        shared = ((rows.view(np.uint32) >> 23) & 0xFF).max(axis=1, keepdims=True).astype(np.int64)
        step = np.ldexp(1.0, shared - 133)  # one unit of the 7-bit magnitude
        error = np.abs(rows.astype(np.float64) - q_rows.astype(np.float64))
        saturated = np.abs(rows) > 127 * step
        assert (error[~saturated] <= step.repeat(16, axis=1)[~saturated] * 0.5 * (1 + 2.0**-16)).all()
        assert (error <= step).all()


def test_inf_and_nan_rows():
    tile = np.ones((32, 32), dtype=np.float32)
    tile[0, 0] = np.inf
    tile[1, 0] = np.nan
    back = numerics.untilize(DataFormat.Bfp8_b, numerics.tilize(DataFormat.Bfp8_b, tile), 32, 32)
    assert back[0, 0] == np.inf and np.isnan(back[1, 0])
    assert (back[0, 1:16] == 0).all()  # finite values vanish beside an infinity of the same face row
    assert (back[2:, :] == 1).all()
