// Bfp8_b (block float, 8-bit exponent shared by 16 values) as tt-metal lays it out.
//
// A tile is 64 exponent bytes (one per 16-value face row, faces in order
// TL, TR, BL, BR, rows in order inside a face) followed by 1024 bytes of
// sign | 7-bit magnitude in the tilized element order. Internal to numerics.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ttnn_moe::emu::numerics {

inline constexpr uint32_t BFP8_BLOCK = 16;
inline constexpr uint32_t BFP8_EXPONENT_BYTES = 64;
inline constexpr uint32_t BFP8_TILE_BYTES = BFP8_EXPONENT_BYTES + 1024;

// 16 floats -> shared exponent + 16 sign/magnitude bytes.
void encode_bfp8_block(const float* values, uint8_t* exponent, uint8_t* mantissas);
// Shared exponent + 16 sign/magnitude bytes -> 16 floats (exact: every Bfp8_b value is a float).
void decode_bfp8_block(uint8_t exponent, const uint8_t* mantissas, float* values);

}  // namespace ttnn_moe::emu::numerics
