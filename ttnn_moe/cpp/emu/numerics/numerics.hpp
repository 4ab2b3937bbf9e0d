// Tile numerics of the emulator: data formats, tile layout and tile math.
//
// Pure functions, no emulator state. Tiles in compute are 32x32 row-major
// floats (index r*32+c); in memory they are tt-metal's tilized layout (four
// 16x16 faces: top-left, top-right, bottom-left, bottom-right, row-major in a
// face). For integer formats (UInt32, Int32, UInt16) the float storage holds
// the raw bit pattern (memcpy, no conversion), so copies are exact and any
// arithmetic on them is rejected by the caller.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

#include "program/program_descriptor.hpp"

namespace ttnn_moe::emu::numerics {

using program::DataFormat;

inline constexpr uint32_t TILE_DIM = 32;
inline constexpr uint32_t FACE_DIM = 16;
inline constexpr uint32_t TILE_ELEMENTS = TILE_DIM * TILE_DIM;

// Formats the emulator computes with: Float32, Float16_b, Float16, Bfp8_b,
// Bfp4_b, UInt32, Int32, UInt16. Every function below throws std::invalid_argument
// (naming the format) for any other format.
bool is_supported_format(DataFormat format);
const char* format_name(DataFormat format);

// Block-float formats (Bfp8_b, Bfp4_b): a shared exponent per 16 values, tiles only.
bool is_block_format(DataFormat format);
// Bytes of one tile in memory (bf16 2048, fp32/uint32/int32 4096, uint16 2048, bfp8_b 1088, bfp4_b 576).
uint32_t tile_bytes(DataFormat format);
// Bytes of one element for non-block formats; throws for block-float formats.
uint32_t element_bytes(DataFormat format);
bool is_integer_format(DataFormat format);

// bfloat16 <-> float. To bf16: round to nearest, ties to even; every NaN
// becomes the quiet NaN 0x7FC0 (as tt-metal's host bfloat16); subnormals are kept.
// Inline and branch-free: the tile loops that call them vectorize.
inline uint16_t float_to_bf16_bits(float value) {
    const uint32_t bits = std::bit_cast<uint32_t>(value);
    // Adding 0x7FFF plus the lowest kept bit rounds to nearest with ties to even;
    // a carry out of the mantissa correctly bumps the exponent (up to inf).
    const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
    return static_cast<uint16_t>((bits & 0x7fffffffu) > 0x7f800000u ? 0x7fc0u : rounded);
}
inline float bf16_bits_to_float(uint16_t bits) {
    return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

// Tilized tile bytes in `format` -> 32x32 row-major floats.
void unpack_tile(DataFormat format, const void* tile, float* out);
// 32x32 row-major floats -> tilized tile bytes, rounding as the packer does
// (bf16: round to nearest even; bfp8_b, bfp4_b: shared exponent per face row of 16).
void pack_tile(DataFormat format, const float* in, void* tile);

// n contiguous elements (a ROW_MAJOR page) <-> floats. Not for block formats.
void unpack_elements(DataFormat format, const void* src, float* out, size_t n);
void pack_elements(DataFormat format, const float* in, void* dst, size_t n);

// Rounds n values in place to what `format` can hold (DST without fp32 accumulation keeps bf16).
// Bfp8_b, Bfp4_b: n is a multiple of 16 and every 16 consecutive values form one block (for a row-major
// tile these are exactly its face rows). Integer formats throw: their storage holds bits, not values.
void round_in_place(DataFormat format, float* data, size_t n);

// c += a @ b for 32x32 row-major tiles, fp32 accumulation. For every c[i][j]
// the products are added one by one in k order 0..31, with no fused
// multiply-add, so the result does not depend on the host's vector ISA.
void matmul_tile_accumulate(const float* a, const float* b, float* c);
// out = in^T for 32x32 row-major tiles (in and out must not alias).
void transpose_tile(const float* in, float* out);

enum class BinaryOp : uint8_t { Add, Sub, Mul };
// Row: b's first row is broadcast down the columns; Col: b's first column across the rows; Scalar: b[0].
enum class Broadcast : uint8_t { None, Row, Col, Scalar };
void binary_tile(BinaryOp op, Broadcast bcast, const float* a, const float* b, float* out);

enum class UnaryOp : uint8_t { Silu, Sigmoid, Exp, Relu, Recip, Neg };
void unary_tile(UnaryOp op, float* inout);

// Host-side layout conversion of a whole matrix (rows, cols multiples of 32)
// between row-major floats and tile pages in `format` (tile order: row-major over tiles).
void tilize(DataFormat format, const float* src, uint32_t rows, uint32_t cols, void* dst);
void untilize(DataFormat format, const void* src, uint32_t rows, uint32_t cols, float* dst);

}  // namespace ttnn_moe::emu::numerics
