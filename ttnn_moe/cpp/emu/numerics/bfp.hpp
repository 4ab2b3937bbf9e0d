// Block-float tiles (Bfp8_b, Bfp4_b) as tt-metal lays them out.
//
// A tile is 64 exponent bytes (one per 16-value face row, faces in order
// TL, TR, BL, BR, rows in order inside a face) followed by the element codes
// in the tilized element order. A code is sign | magnitude: Bfp8_b has a
// 7-bit magnitude, one code per byte (1024 bytes); Bfp4_b a 3-bit magnitude,
// two codes per byte, the earlier element in the low nibble (512 bytes).
// Internal to numerics.
#pragma once

#include <cstdint>

#include "program/program_descriptor.hpp"

namespace ttnn_moe::emu::numerics {

inline constexpr uint32_t BFP_BLOCK = 16;
inline constexpr uint32_t BFP_EXPONENT_BYTES = 64;

// Offset in a 32x32 row-major tile of the first element of face row `face_row` (0..63): face
// f = face_row / 16 (TL, TR, BL, BR) row r = face_row % 16 is matrix row (f / 2) * 16 + r,
// columns (f % 2) * 16 .. + 15.
constexpr uint32_t face_row_offset(uint32_t face_row) {
    const uint32_t face = face_row / 16;
    return ((face / 2) * 16 + face_row % 16) * 32 + (face % 2) * 16;
}

// Magnitude bits of a block-float format: Bfp8_b 7, Bfp4_b 3. Throws for other formats.
uint32_t bfp_magnitude_bits(program::DataFormat format);
// Bytes of one tile: Bfp8_b 1088, Bfp4_b 576.
uint32_t bfp_tile_bytes(program::DataFormat format);

// 16 floats -> shared exponent + 16 sign|magnitude codes, one per byte.
void encode_bfp_block(uint32_t magnitude_bits, const float* values, uint8_t* exponent, uint8_t* codes);
// Shared exponent + 16 codes -> 16 floats (exact: every block-float value is a float).
void decode_bfp_block(uint32_t magnitude_bits, uint8_t exponent, const uint8_t* codes, float* values);

// A 32x32 row-major float tile <-> one tile's bytes.
void encode_bfp_tile(program::DataFormat format, const float* row_major, uint8_t* tile);
void decode_bfp_tile(program::DataFormat format, const uint8_t* tile, float* row_major);

}  // namespace ttnn_moe::emu::numerics
