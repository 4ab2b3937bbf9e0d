// Bfp8_b encode/decode of one 16-value block, matching tt-metal's host
// packer (the one ttnn.from_torch(..., dtype=bfloat8_b) uses) bit for bit.
//
// Encode, per block of 16 fp32 values:
// - shared exponent = the largest biased fp32 exponent field of the 16 values
//   (Inf/NaN count as 255; zeros and subnormals as 0);
// - a value whose exponent field is 0 (zero or subnormal) encodes as 0x00;
// - otherwise the 24-bit significand (hidden 1 made explicit) is shifted right
//   by (shared - own exponent), dropping the shifted-out bits (a truncating
//   alignment, as tt-metal does), then rounded to 7 bits at bit 17: round to
//   nearest, ties to even, saturating at 127 instead of carrying into the
//   exponent;
// - the sign is kept only when the magnitude is non-zero (no -0 codes).
// Why this rounding: it is what tt-metal's host quantizer implements, so
// weights we quantize equal the bytes ttnn would put on a device. The Tensix
// packer (pack_tile into a Bfp8_b CB) is documented by the LLK tests as
// rounding half away from zero from a bf16-truncated value; we use the host
// rule there too, so device packs may differ from hardware in the last
// mantissa bit on ties (a documented emulator approximation).
//
// Decode: magnitude m != 0 is normalized (shifted left until bit 6 is set,
// the exponent lowered by the same count), then rebuilt as an fp32 bit
// pattern: sign | (shared - shift) << 23 | (normalized mantissa without the
// hidden bit) << 16. m == 0 gives a signed zero. This equals
// sign * m * 2^(shared - 133) whenever shared - shift >= 1, which holds for
// every block the encoder produces.
#include "emu/numerics/bfp8.hpp"

#include <algorithm>
#include <bit>

namespace ttnn_moe::emu::numerics {

namespace {
constexpr uint32_t MAGNITUDE_BITS = 7;
constexpr uint32_t ROUND_SHIFT = 24 - MAGNITUDE_BITS;  // 17 bits dropped from the 24-bit significand
constexpr uint32_t HALF = 1u << (ROUND_SHIFT - 1);
constexpr uint32_t MAX_MAGNITUDE = (1u << MAGNITUDE_BITS) - 1;
}  // namespace

void encode_bfp8_block(const float* values, uint8_t* exponent, uint8_t* mantissas) {
    uint32_t bits[BFP8_BLOCK];
    uint32_t shared = 0;
    for (uint32_t i = 0; i < BFP8_BLOCK; ++i) {
        bits[i] = std::bit_cast<uint32_t>(values[i]);
        shared = std::max(shared, (bits[i] >> 23) & 0xffu);
    }
    *exponent = static_cast<uint8_t>(shared);
    for (uint32_t i = 0; i < BFP8_BLOCK; ++i) {
        const uint32_t own = (bits[i] >> 23) & 0xffu;
        if (own == 0) {
            mantissas[i] = 0;
            continue;
        }
        const uint32_t align = shared - own;
        uint32_t significand = (bits[i] & 0x7fffffu) | 0x800000u;
        significand = align >= 32 ? 0 : significand >> align;
        const uint32_t dropped = significand & ((1u << ROUND_SHIFT) - 1);
        uint32_t magnitude = significand >> ROUND_SHIFT;
        if (dropped > HALF || (dropped == HALF && (magnitude & 1u))) ++magnitude;
        magnitude = std::min(magnitude, MAX_MAGNITUDE);
        const uint32_t sign = magnitude ? bits[i] >> 31 : 0;
        mantissas[i] = static_cast<uint8_t>((sign << MAGNITUDE_BITS) | magnitude);
    }
}

void decode_bfp8_block(uint8_t exponent, const uint8_t* mantissas, float* values) {
    for (uint32_t i = 0; i < BFP8_BLOCK; ++i) {
        const uint32_t sign = mantissas[i] >> MAGNITUDE_BITS;
        uint32_t magnitude = mantissas[i] & MAX_MAGNITUDE;
        uint32_t bits = sign << 31;
        if (magnitude != 0) {
            // Leading one at bit 6 after `shift` left shifts; then drop it (the hidden bit).
            const uint32_t shift = static_cast<uint32_t>(std::countl_zero(magnitude)) - (32 - MAGNITUDE_BITS);
            magnitude = (magnitude << (shift + 1)) & MAX_MAGNITUDE;
            const uint32_t biased = static_cast<uint32_t>(exponent) - shift;  // unsigned, as tt-metal computes it
            bits |= (biased << 23) | (magnitude << 16);
        }
        values[i] = std::bit_cast<float>(bits);
    }
}

}  // namespace ttnn_moe::emu::numerics
