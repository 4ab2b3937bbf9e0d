// Block-float encode/decode, matching tt-metal's host packer (the one
// ttnn.from_torch(..., dtype=bfloat8_b / bfloat4_b) uses) bit for bit. One
// algorithm serves both formats; only the magnitude width W differs (7, 3).
//
// Encode, per block of 16 fp32 values:
// - shared exponent = the largest biased fp32 exponent field of the 16 values
//   (Inf/NaN count as 255; zeros and subnormals as 0);
// - a value whose exponent field is 0 (zero or subnormal) encodes as 0, even
//   in a block of subnormals only;
// - every other value takes its 24-bit significand (hidden 1 made explicit),
//   shifts it right by (shared - own exponent), dropping the shifted-out bits
//   (a truncating alignment, as tt-metal does), then rounds it to W bits at
//   bit 24 - W: round to nearest, ties to even, saturating at 2^W - 1 instead
//   of carrying into the exponent;
// - the sign is kept only when the magnitude is non-zero (no -0 codes).
// Why this rounding: it is what tt-metal's host quantizer implements, so
// weights we quantize equal the bytes ttnn would put on a device. The Tensix
// packer (pack_tile into a block-float CB) is documented by the LLK tests as
// rounding half away from zero from a bf16-truncated value; we use the host
// rule there too, so device packs may differ from hardware in the last
// mantissa bit on ties (a documented emulator approximation).
//
// Decode: magnitude m != 0 is normalized (shifted left until bit W-1 is set,
// the exponent lowered by the same count), then rebuilt as an fp32 bit
// pattern: sign | (shared - shift) << 23 | (normalized mantissa without the
// hidden bit) << (23 - W). m == 0 gives a signed zero. This equals
// sign * m * 2^(shared - 127 - (W - 1)) whenever shared - shift >= 1. A code
// whose shift exceeds the shared exponent (never encoded, only in malformed
// bytes) decodes to +0, as tt-metal's tile unpacker (ttnn.to_torch) does; its
// per-value converter would wrap the exponent instead.
#include "emu/numerics/bfp.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

namespace ttnn_moe::emu::numerics {

using program::DataFormat;

namespace {

constexpr uint32_t SIGNIFICAND_BITS = 24;  // fp32: 23 stored bits + the hidden 1
constexpr uint32_t TILE_CODES = 1024;

uint32_t encode_value(uint32_t magnitude_bits, uint32_t bits, uint32_t shared) {
    const uint32_t own = (bits >> 23) & 0xffu;
    if (own == 0) return 0;
    const uint32_t round_shift = SIGNIFICAND_BITS - magnitude_bits;
    const uint32_t half = 1u << (round_shift - 1);
    const uint32_t max_magnitude = (1u << magnitude_bits) - 1;
    const uint32_t align = shared - own;
    uint32_t significand = (bits & 0x7fffffu) | 0x800000u;
    significand = align >= 32 ? 0 : significand >> align;
    const uint32_t dropped = significand & ((1u << round_shift) - 1);
    uint32_t magnitude = significand >> round_shift;
    if (dropped > half || (dropped == half && (magnitude & 1u))) ++magnitude;
    magnitude = std::min(magnitude, max_magnitude);
    const uint32_t sign = magnitude ? bits >> 31 : 0;
    return (sign << magnitude_bits) | magnitude;
}

uint32_t decode_value(uint32_t magnitude_bits, uint32_t exponent, uint32_t code) {
    const uint32_t max_magnitude = (1u << magnitude_bits) - 1;
    uint32_t magnitude = code & max_magnitude;
    uint32_t bits = (code >> magnitude_bits) << 31;
    if (magnitude != 0) {
        // Leading one at bit W-1 after `shift` left shifts; then drop it (the hidden bit).
        const uint32_t shift = static_cast<uint32_t>(std::countl_zero(magnitude)) - (32 - magnitude_bits);
        if (shift > exponent) return 0;
        magnitude = (magnitude << (shift + 1)) & max_magnitude;
        bits |= ((exponent - shift) << 23) | (magnitude << (23 - magnitude_bits));
    }
    return bits;
}

// Code bits per element in a tile: a sign and the magnitude (8 or 4).
uint32_t code_bits(DataFormat format) {
    return bfp_magnitude_bits(format) + 1;
}

}  // namespace

uint32_t bfp_magnitude_bits(DataFormat format) {
    switch (format) {
        case DataFormat::Bfp8_b:
            return 7;
        case DataFormat::Bfp4_b:
            return 3;
        default:
            throw std::invalid_argument("bfp_magnitude_bits: data format " + std::to_string(static_cast<int>(format)) +
                                        " is not a block-float format");
    }
}

uint32_t bfp_tile_bytes(DataFormat format) {
    return BFP_EXPONENT_BYTES + TILE_CODES * code_bits(format) / 8;
}

void encode_bfp_block(uint32_t magnitude_bits, const float* values, uint8_t* exponent, uint8_t* codes) {
    uint32_t bits[BFP_BLOCK];
    uint32_t shared = 0;
    for (uint32_t i = 0; i < BFP_BLOCK; ++i) {
        bits[i] = std::bit_cast<uint32_t>(values[i]);
        shared = std::max(shared, (bits[i] >> 23) & 0xffu);
    }
    *exponent = static_cast<uint8_t>(shared);
    for (uint32_t i = 0; i < BFP_BLOCK; ++i)
        codes[i] = static_cast<uint8_t>(encode_value(magnitude_bits, bits[i], shared));
}

void decode_bfp_block(uint32_t magnitude_bits, uint8_t exponent, const uint8_t* codes, float* values) {
    for (uint32_t i = 0; i < BFP_BLOCK; ++i)
        values[i] = std::bit_cast<float>(decode_value(magnitude_bits, exponent, codes[i]));
}

void encode_bfp_tile(DataFormat format, const float* tilized, uint8_t* tile) {
    const uint32_t magnitude_bits = bfp_magnitude_bits(format);
    const uint32_t per_byte = 8 / code_bits(format);
    uint8_t* data = tile + BFP_EXPONENT_BYTES;
    std::fill(data, tile + bfp_tile_bytes(format), 0);
    uint8_t codes[BFP_BLOCK];
    for (uint32_t row = 0; row < BFP_EXPONENT_BYTES; ++row) {
        encode_bfp_block(magnitude_bits, tilized + row * BFP_BLOCK, tile + row, codes);
        // Element e of the tile sits in byte e / per_byte, the earlier element in the lower bits.
        for (uint32_t i = 0; i < BFP_BLOCK; ++i) {
            const uint32_t e = row * BFP_BLOCK + i;
            data[e / per_byte] |= static_cast<uint8_t>(codes[i] << ((e % per_byte) * code_bits(format)));
        }
    }
}

void decode_bfp_tile(DataFormat format, const uint8_t* tile, float* tilized) {
    const uint32_t magnitude_bits = bfp_magnitude_bits(format);
    const uint32_t bits_per_code = code_bits(format);
    const uint32_t per_byte = 8 / bits_per_code;
    const uint32_t mask = (1u << bits_per_code) - 1;
    const uint8_t* data = tile + BFP_EXPONENT_BYTES;
    uint8_t codes[BFP_BLOCK];
    for (uint32_t row = 0; row < BFP_EXPONENT_BYTES; ++row) {
        for (uint32_t i = 0; i < BFP_BLOCK; ++i) {
            const uint32_t e = row * BFP_BLOCK + i;
            codes[i] = static_cast<uint8_t>((data[e / per_byte] >> ((e % per_byte) * bits_per_code)) & mask);
        }
        decode_bfp_block(magnitude_bits, tile[row], codes, tilized + row * BFP_BLOCK);
    }
}

}  // namespace ttnn_moe::emu::numerics
