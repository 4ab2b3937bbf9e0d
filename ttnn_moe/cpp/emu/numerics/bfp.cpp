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
//
// Both directions are written branch-free per value, so the compiler vectorizes a block of 16
// (one AVX-512 register); the tile functions are cloned per ISA (AVX-512, AVX2, baseline), and
// every clone computes the same integers. Decode uses that float(m) already is m normalized:
// its bits plus (shared - 127 - (W - 1)) << 23 are the decoded bits, negative exactly when the
// shift exceeds the shared exponent.
#include "emu/numerics/bfp.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ttnn_moe::emu::numerics {

using program::DataFormat;

namespace {

constexpr uint32_t SIGNIFICAND_BITS = 24;  // fp32: 23 stored bits + the hidden 1
constexpr uint32_t TILE_CODES = 1024;
constexpr uint32_t FACE_ROWS = TILE_CODES / BFP_BLOCK;

// One block of 16 values as one vector (a single register under AVX-512): GCC's vector
// extension gives lane-wise integer semantics on every target, so each ISA clone computes the
// same codes. Comparisons yield 0 / -1 per lane.
typedef uint32_t U32x16 __attribute__((vector_size(64)));
typedef int32_t I32x16 __attribute__((vector_size(64)));
typedef float F32x16 __attribute__((vector_size(64)));
typedef uint8_t U8x16 __attribute__((vector_size(16)));

template <uint32_t W>
[[gnu::always_inline]] inline void encode_block(const float* values, uint8_t* exponent, uint8_t* codes) {
    constexpr uint32_t round_shift = SIGNIFICAND_BITS - W;
    constexpr uint32_t half = 1u << (round_shift - 1);
    constexpr uint32_t max_magnitude = (1u << W) - 1;
    U32x16 bits;
    std::memcpy(&bits, values, sizeof bits);
    const U32x16 own = (bits >> 23) & 0xffu;
    uint32_t shared = 0;
    for (uint32_t i = 0; i < BFP_BLOCK; ++i) shared = std::max(shared, own[i]);
    *exponent = static_cast<uint8_t>(shared);
    // Past 23 places every significand bit is gone; 31 keeps the shift defined.
    U32x16 align = shared - own;
    align = align > 31u ? U32x16{} + 31u : align;
    const U32x16 significand = ((bits & 0x7fffffu) | 0x800000u) >> align;
    const U32x16 dropped = significand & ((1u << round_shift) - 1);
    U32x16 magnitude = significand >> round_shift;
    const U32x16 round_up = (U32x16)(dropped > half) | ((U32x16)(dropped == half) & (magnitude << 31 >> 31));
    magnitude += round_up & 1u;
    magnitude = magnitude > max_magnitude ? U32x16{} + max_magnitude : magnitude;
    magnitude = own == 0u ? U32x16{} : magnitude;
    const U32x16 sign = magnitude != 0u ? bits >> 31 : U32x16{};
    const U8x16 packed = __builtin_convertvector((sign << W) | magnitude, U8x16);
    std::memcpy(codes, &packed, sizeof packed);
}

// Block j (0..3) of the four whose codes are the 64 bytes in `words`.
template <uint32_t W, uint32_t J>
[[gnu::always_inline]] inline void decode_block_of_four(uint32_t exponent, U32x16 words, float* values) {
    constexpr uint32_t max_magnitude = (1u << W) - 1;
    constexpr int32_t unbias = 127 + static_cast<int32_t>(W - 1);
    // Lane i takes byte i % 4 of word 4 J + i / 4: a permute within one register and per-lane shifts.
    // (Widening 16 bytes with __builtin_convertvector assembled the vector byte by byte, and a
    // 4-word to 16-lane shuffle went through memory, stalling on store forwarding: either made a
    // tile's decode 8x a bf16 unpack.)
    const U32x16 spread =
        __builtin_shufflevector(words, words, 4 * J, 4 * J, 4 * J, 4 * J, 4 * J + 1, 4 * J + 1, 4 * J + 1, 4 * J + 1,
                                4 * J + 2, 4 * J + 2, 4 * J + 2, 4 * J + 2, 4 * J + 3, 4 * J + 3, 4 * J + 3, 4 * J + 3);
    const U32x16 code = (spread >> U32x16{0, 8, 16, 24, 0, 8, 16, 24, 0, 8, 16, 24, 0, 8, 16, 24}) & 0xffu;
    const U32x16 magnitude = code & max_magnitude;
    const U32x16 sign = ((code >> W) & 1u) << 31;
    const I32x16 as_float = (I32x16) __builtin_convertvector((I32x16)magnitude, F32x16);
    const I32x16 bits = as_float + (static_cast<int32_t>(exponent) - unbias) * (1 << 23);
    U32x16 decoded = bits < 0 ? U32x16{} : (U32x16)bits | sign;
    decoded = magnitude == 0u ? sign : decoded;
    std::memcpy(values, &decoded, sizeof decoded);
}

template <uint32_t W>
[[gnu::always_inline]] inline void decode_block(uint32_t exponent, const uint8_t* codes, float* values) {
    U32x16 words{};
    std::memcpy(&words, codes, BFP_BLOCK);
    decode_block_of_four<W, 0>(exponent, words, values);
}

// The helpers are always inlined into the per-ISA clones below, which is what makes each clone
// compile them for its ISA.
// Tile codes: Bfp8_b one per byte; Bfp4_b two per byte, the earlier element in the low nibble.
template <uint32_t W>
[[gnu::always_inline]] inline void encode_tile(const float* row_major, uint8_t* tile) {
    uint8_t codes[TILE_CODES];
    for (uint32_t row = 0; row < FACE_ROWS; ++row)
        encode_block<W>(row_major + face_row_offset(row), tile + row, codes + row * BFP_BLOCK);
    uint8_t* data = tile + BFP_EXPONENT_BYTES;
    if constexpr (W == 7) {
        std::copy(codes, codes + TILE_CODES, data);
    } else {
        for (uint32_t i = 0; i < TILE_CODES / 2; ++i)
            data[i] = static_cast<uint8_t>(codes[2 * i] | (codes[2 * i + 1] << 4));
    }
}

template <uint32_t W>
[[gnu::always_inline]] inline void decode_tile(const uint8_t* tile, float* row_major) {
    const uint8_t* data = tile + BFP_EXPONENT_BYTES;
    uint8_t nibbles[TILE_CODES];
    const uint8_t* codes = data;
    if constexpr (W == 3) {
        for (uint32_t i = 0; i < TILE_CODES / 2; ++i) {
            nibbles[2 * i] = data[i] & 0xfu;
            nibbles[2 * i + 1] = data[i] >> 4;
        }
        codes = nibbles;
    }
    for (uint32_t row = 0; row < FACE_ROWS; row += 4) {
        U32x16 words;
        std::memcpy(&words, codes + row * BFP_BLOCK, sizeof words);
        decode_block_of_four<W, 0>(tile[row], words, row_major + face_row_offset(row));
        decode_block_of_four<W, 1>(tile[row + 1], words, row_major + face_row_offset(row + 1));
        decode_block_of_four<W, 2>(tile[row + 2], words, row_major + face_row_offset(row + 2));
        decode_block_of_four<W, 3>(tile[row + 3], words, row_major + face_row_offset(row + 3));
    }
}

#define TTNN_MOE_PER_ISA __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))

TTNN_MOE_PER_ISA void encode_bfp8_tile(const float* row_major, uint8_t* tile) {
    encode_tile<7>(row_major, tile);
}
TTNN_MOE_PER_ISA void encode_bfp4_tile(const float* row_major, uint8_t* tile) {
    encode_tile<3>(row_major, tile);
}
TTNN_MOE_PER_ISA void decode_bfp8_tile(const uint8_t* tile, float* row_major) {
    decode_tile<7>(tile, row_major);
}
TTNN_MOE_PER_ISA void decode_bfp4_tile(const uint8_t* tile, float* row_major) {
    decode_tile<3>(tile, row_major);
}

#undef TTNN_MOE_PER_ISA

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
    return BFP_EXPONENT_BYTES + TILE_CODES * (bfp_magnitude_bits(format) + 1) / 8;
}

void encode_bfp_block(uint32_t magnitude_bits, const float* values, uint8_t* exponent, uint8_t* codes) {
    if (magnitude_bits == 7) return encode_block<7>(values, exponent, codes);
    if (magnitude_bits == 3) return encode_block<3>(values, exponent, codes);
    throw std::invalid_argument("encode_bfp_block: " + std::to_string(magnitude_bits) + " magnitude bits (not 7 or 3)");
}

void decode_bfp_block(uint32_t magnitude_bits, uint8_t exponent, const uint8_t* codes, float* values) {
    if (magnitude_bits == 7) return decode_block<7>(exponent, codes, values);
    if (magnitude_bits == 3) return decode_block<3>(exponent, codes, values);
    throw std::invalid_argument("decode_bfp_block: " + std::to_string(magnitude_bits) + " magnitude bits (not 7 or 3)");
}

void encode_bfp_tile(DataFormat format, const float* row_major, uint8_t* tile) {
    if (bfp_magnitude_bits(format) == 7) return encode_bfp8_tile(row_major, tile);
    encode_bfp4_tile(row_major, tile);
}

void decode_bfp_tile(DataFormat format, const uint8_t* tile, float* row_major) {
    if (bfp_magnitude_bits(format) == 7) return decode_bfp8_tile(tile, row_major);
    decode_bfp4_tile(tile, row_major);
}

}  // namespace ttnn_moe::emu::numerics
