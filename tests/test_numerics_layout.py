"""Tile layout: tilize must produce ttnn's tilized order (tiles row-major, four 16x16 faces TL, TR, BL, BR,
row-major inside a face), checked against an independent torch reshape/permute formulation."""

import numpy as np
import pytest
import torch
from ttnn_moe._C import numerics
from ttnn_moe._C.program import DataFormat


def _tilized_reference(matrix: torch.Tensor) -> torch.Tensor:
    """(rows, cols) -> (num_tiles, 1024) in tilized element order."""
    rows, cols = matrix.shape
    tiles = matrix.reshape(rows // 32, 32, cols // 32, 32).permute(0, 2, 1, 3)  # (tr, tc, 32, 32)
    faces = tiles.reshape(rows // 32, cols // 32, 2, 16, 2, 16).permute(0, 1, 2, 4, 3, 5)  # (tr, tc, fr, fc, 16, 16)
    return faces.reshape(-1, 1024)


@pytest.mark.parametrize("rows, cols", [(32, 32), (64, 96), (96, 64)])
def test_float32_tilize_matches_face_order(rows, cols):
    matrix = torch.arange(rows * cols, dtype=torch.float32).reshape(rows, cols)
    pages = numerics.tilize(DataFormat.Float32, matrix.numpy())
    ours = torch.from_numpy(pages.view(np.float32).reshape(-1, 1024).copy())
    assert torch.equal(ours, _tilized_reference(matrix))


def test_face_order_spot_values():
    matrix = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    tile = numerics.tilize(DataFormat.Float32, matrix).view(np.float32)
    assert tile[0] == matrix[0, 0] and tile[15] == matrix[0, 15]
    assert tile[16] == matrix[1, 0]  # row-major inside face 0
    assert tile[256] == matrix[0, 16]  # face 1 = top-right
    assert tile[512] == matrix[16, 0]  # face 2 = bottom-left
    assert tile[768] == matrix[16, 16] and tile[1023] == matrix[31, 31]


def test_bf16_tilize_is_layout_plus_torch_rounding():
    rng = np.random.default_rng(5)
    matrix = torch.from_numpy(rng.standard_normal((64, 128)).astype(np.float32))
    pages = numerics.tilize(DataFormat.Float16_b, matrix.numpy())
    expected = _tilized_reference(matrix.to(torch.bfloat16)).contiguous().view(torch.int16).numpy()
    np.testing.assert_array_equal(pages.view(np.int16).reshape(-1, 1024), expected)


@pytest.mark.parametrize(
    "fmt", [DataFormat.Float32, DataFormat.Float16_b, DataFormat.Float16, DataFormat.Bfp8_b, DataFormat.UInt16]
)
def test_untilize_inverts_tilize(fmt):
    rng = np.random.default_rng(6)
    if fmt == DataFormat.UInt16:
        matrix = rng.integers(0, 2**16, size=(64, 64), dtype=np.int64).astype(np.uint32).view(np.float32)
    else:
        matrix = rng.standard_normal((64, 64)).astype(np.float32)
    pages = numerics.tilize(fmt, matrix)
    once = numerics.untilize(fmt, pages, 64, 64)
    # The first pass quantizes; a second pass must reproduce both the values and the bytes.
    np.testing.assert_array_equal(numerics.tilize(fmt, once), pages)
    np.testing.assert_array_equal(numerics.untilize(fmt, pages, 64, 64), once)
    if fmt in (DataFormat.Float32, DataFormat.UInt16):
        np.testing.assert_array_equal(once.view(np.uint32), matrix.view(np.uint32))


@pytest.mark.parametrize("fmt", [DataFormat.Float32, DataFormat.Float16_b, DataFormat.Bfp8_b, DataFormat.Bfp4_b])
def test_tilize_reads_strided_bfloat16_and_batches_in_place(fmt):
    """A transposed bf16 view (its bits) and a batch of float32 matrices tilize to the pages of the
    contiguous float32 matrices, batch after batch (the weights' upload path: no copies)."""
    g = torch.Generator().manual_seed(11)
    weights = (torch.randn(3, 96, 64, generator=g) * torch.exp(3 * torch.randn(3, 96, 1, generator=g))).bfloat16()
    transposed = weights.mT  # (3, 64, 96), strides (.., 1, 64)
    want = np.concatenate([numerics.tilize(fmt, m.float().contiguous().numpy()) for m in transposed])
    got = numerics.tilize(fmt, transposed.view(torch.int16).numpy(), bfloat16_bits=True)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(numerics.tilize(fmt, transposed.float().numpy()), want)
    with pytest.raises(TypeError, match="bfloat16_bits needs an int16 or uint16 array, got dtype float32"):
        numerics.tilize(fmt, transposed.float().numpy(), bfloat16_bits=True)
