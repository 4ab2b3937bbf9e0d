"""Element formats of the emulator: bf16 against torch's conversion (bit for bit), fp16 against numpy,
integer formats as raw bits, and the bad-input errors of the numerics bindings."""

import numpy as np
import pytest
import torch
import ttnn_moe_numerics_testing as numerics_testing
from ttnn_moe._C import numerics
from ttnn_moe._C.program import DataFormat

# fp32 bit patterns that stress bf16 rounding: ties (low half exactly 0x8000) with an even and an odd
# kept bit, values just below and above a tie, NaNs with payloads only in the dropped half, infinities,
# the largest finite value (rounds up to inf), subnormals (incl. a subnormal tie) and signed zeros.
BF16_EDGE_BITS = np.array(
    [
        0x3F808000,
        0x3F818000,
        0xBF808000,
        0xBF818000,  # ties: even -> down, odd -> up
        0x3F807FFF,
        0x3F808001,
        0x3F80FFFF,
        0x3FFFFFFF,  # around ties; carry into the exponent
        0x7F800001,
        0xFF800001,
        0x7FC00000,
        0xFFFFFFFF,
        0x7F80FFFF,  # NaNs
        0x7F800000,
        0xFF800000,
        0x7F7FFFFF,
        0xFF7FFFFF,
        0x7F7F7FFF,  # inf, max finite (-> inf), just below
        0x00000001,
        0x00008000,
        0x00018000,
        0x807FFFFF,
        0x00007FFF,  # subnormals
        0x00000000,
        0x80000000,
    ],
    dtype=np.uint32,
)


def _bits_as_float(bits: np.ndarray) -> np.ndarray:
    return bits.astype(np.uint32).view(np.float32)


def _torch_bf16_bits(values: np.ndarray) -> np.ndarray:
    return torch.from_numpy(values.copy()).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)


def _assert_bf16_matches_torch(values: np.ndarray, ours: np.ndarray):
    """Bit-exact for every non-NaN. NaNs: torch's vectorized CPU conversion writes 0xFFFF, its scalar
    c10::BFloat16 and tt-metal's host bfloat16 write 0x7FC0; we follow tt-metal (both are quiet NaNs)."""
    nan = np.isnan(values)
    np.testing.assert_array_equal(ours[~nan], _torch_bf16_bits(values)[~nan])
    assert (ours[nan] == 0x7FC0).all()
    scalar_nan = torch.tensor(float("nan"), dtype=torch.bfloat16).view(torch.int16).item() & 0xFFFF
    assert scalar_nan == 0x7FC0


def test_bf16_pack_matches_torch_on_edge_cases():
    values = _bits_as_float(BF16_EDGE_BITS)
    ours = numerics_testing.pack_elements(DataFormat.Float16_b, values).view(np.uint16)
    _assert_bf16_matches_torch(values, ours)
    # Spot-check the semantics, not just agreement: ties to even, NaN kept as a quiet NaN, overflow to inf.
    assert ours[0] == 0x3F80 and ours[1] == 0x3F82
    assert ours[8] == 0x7FC0 and ours[9] == 0x7FC0
    assert ours[15] == 0x7F80
    assert ours[19] == 0x0000 and ours[20] == 0x0002  # subnormal ties to even


def test_bf16_pack_matches_torch_on_random_bit_patterns():
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2**32, size=200_000, dtype=np.uint64).astype(np.uint32)
    values = _bits_as_float(bits)
    assert np.isnan(values).any()
    ours = numerics_testing.pack_elements(DataFormat.Float16_b, values).view(np.uint16)
    _assert_bf16_matches_torch(values, ours)


def test_bf16_unpack_is_exact_for_every_bf16_pattern():
    all_bf16 = np.arange(2**16, dtype=np.uint32).astype(np.uint16)
    ours = numerics_testing.unpack_elements(DataFormat.Float16_b, all_bf16.view(np.uint8))
    expected = torch.from_numpy(all_bf16.view(np.int16).copy()).view(torch.bfloat16).float().numpy()
    np.testing.assert_array_equal(ours.view(np.uint32), expected.view(np.uint32))


def test_float16_round_trip_matches_numpy():
    rng = np.random.default_rng(1)
    values = np.concatenate(
        [
            rng.standard_normal(10_000).astype(np.float32) * np.float32(1000),
            np.array([65504.0, 65520.0, 1e-8, 6e-8, -0.0, np.inf, -np.inf], dtype=np.float32),
        ]
    )
    ours = numerics_testing.pack_elements(DataFormat.Float16, values).view(np.uint16)
    with np.errstate(over="ignore"):  # 65520 rounds to inf, as it must
        expected = values.astype(np.float16)
    np.testing.assert_array_equal(ours, expected.view(np.uint16))
    back = numerics_testing.unpack_elements(DataFormat.Float16, ours.view(np.uint8))
    np.testing.assert_array_equal(back, ours.view(np.float16).astype(np.float32))


def test_float32_pages_are_byte_identical():
    rng = np.random.default_rng(2)
    bits = rng.integers(0, 2**32, size=4096, dtype=np.uint64).astype(np.uint32)
    values = _bits_as_float(bits)
    packed = numerics_testing.pack_elements(DataFormat.Float32, values)
    np.testing.assert_array_equal(packed, values.view(np.uint8))
    np.testing.assert_array_equal(numerics_testing.unpack_elements(DataFormat.Float32, packed).view(np.uint32), bits)


@pytest.mark.parametrize(
    "fmt, dtype",
    [(DataFormat.UInt32, np.uint32), (DataFormat.Int32, np.int32), (DataFormat.UInt16, np.uint16)],
)
def test_integer_formats_carry_raw_bits(fmt, dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(3)
    values = rng.integers(info.min, int(info.max) + 1, size=5000, dtype=np.int64).astype(dtype)
    # Include bit patterns that are NaNs or subnormals when read as float32: nothing may touch them.
    if dtype is np.uint32:
        values[:4] = [0x7F800001, 0xFFC00001, 0x00000001, 0xFFFFFFFF]
    packed = numerics_testing.pack_elements(fmt, values)
    np.testing.assert_array_equal(packed, values.view(np.uint8))
    unpacked = numerics_testing.unpack_elements(fmt, packed)
    assert unpacked.dtype == np.float32
    np.testing.assert_array_equal(unpacked.view(np.uint32), values.astype(np.int64).astype(np.uint32))


def test_integer_values_round_trip_through_tiles_bit_exact():
    rng = np.random.default_rng(4)
    values = rng.integers(0, 2**32, size=(64, 96), dtype=np.uint64).astype(np.uint32)
    values[0, :3] = [0x7F800001, 0xFF800001, 0x00000001]
    for fmt in (DataFormat.UInt32, DataFormat.Int32):
        pages = numerics.tilize(fmt, values.view(np.float32))
        back = numerics.untilize(fmt, pages, 64, 96)
        np.testing.assert_array_equal(back.view(np.uint32), values)


@pytest.mark.parametrize(
    "fmt, size",
    [
        (DataFormat.Float32, 4096),
        (DataFormat.Float16_b, 2048),
        (DataFormat.Float16, 2048),
        (DataFormat.Bfp8_b, 1088),
        (DataFormat.Bfp4_b, 576),
        (DataFormat.UInt32, 4096),
        (DataFormat.Int32, 4096),
        (DataFormat.UInt16, 2048),
    ],
)
def test_tile_bytes(fmt, size):
    assert numerics_testing.tile_bytes(fmt) == size
    assert numerics.tilize(fmt, np.zeros((32, 64), dtype=np.float32)).size == 2 * size


def test_bad_inputs_raise_with_the_offending_value():
    with pytest.raises(ValueError, match="Tf32"):
        numerics_testing.tile_bytes(DataFormat.Tf32)
    with pytest.raises(ValueError, match=r"\(40, 32\)"):
        numerics.tilize(DataFormat.Float32, np.zeros((40, 32), dtype=np.float32))
    with pytest.raises(ValueError, match="ndim 1"):
        numerics.tilize(DataFormat.Float32, np.zeros(1024, dtype=np.float32))
    with pytest.raises(TypeError, match="float64"):
        numerics.tilize(DataFormat.Float16_b, np.zeros((32, 32), dtype=np.float64))
    with pytest.raises(TypeError, match="int32"):
        numerics_testing.pack_elements(DataFormat.UInt32, np.zeros(4, dtype=np.int32))
    with pytest.raises(ValueError, match="needs 2048 bytes, got 100"):
        numerics.untilize(DataFormat.Float16_b, np.zeros(100, dtype=np.uint8), 32, 32)
    with pytest.raises(ValueError, match="3 bytes"):
        numerics_testing.unpack_elements(DataFormat.Float16_b, np.zeros(3, dtype=np.uint8))
    for block_format in (DataFormat.Bfp8_b, DataFormat.Bfp4_b):
        with pytest.raises(ValueError, match=f"{block_format.name} is a tile-only block format"):
            numerics_testing.pack_elements(block_format, np.zeros(16, dtype=np.float32))
        with pytest.raises(ValueError, match=f"{block_format.name} is a tile-only block format"):
            numerics_testing.unpack_elements(block_format, np.zeros(16, dtype=np.uint8))
    with pytest.raises(TypeError, match="uint8"):
        numerics_testing.unpack_elements(DataFormat.Float32, np.zeros(4, dtype=np.float32))


def test_runtime_extension_keeps_only_the_layout_conversion_the_emulator_uses():
    public = {name for name in dir(numerics) if not name.startswith("_")}
    assert public == {"tilize", "untilize"}
    for name in ("tile_bytes", "pack_elements", "unpack_elements", "_EngineHarness"):
        assert hasattr(numerics_testing, name), name
