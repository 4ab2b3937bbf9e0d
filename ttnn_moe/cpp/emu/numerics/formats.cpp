// Element formats: sizes, scalar conversions, row-major pages and rounding.
//
// Rounding choices (why):
// - Float16_b: round to nearest, ties to even; every NaN -> 0x7FC0. This is
//   tt-metal's host bfloat16(float) and torch's scalar c10::BFloat16, and it
//   equals torch's tensor conversion for every non-NaN value (torch's
//   vectorized CPU path writes NaN as 0xFFFF instead; both are quiet NaNs).
//   Subnormals are rounded like any other value (bf16 shares fp32's exponent
//   range, so nothing is flushed).
// - Float16: the compiler's _Float16 conversion (IEEE round to nearest even).
// - Integer formats: the float storage carries the raw bit pattern (UInt16:
//   zero-extended to 32 bits), so nothing is ever rounded.
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "emu/numerics/bfp.hpp"
#include "emu/numerics/numerics.hpp"

namespace ttnn_moe::emu::numerics {

namespace {

[[noreturn]] void unsupported(const char* what, DataFormat format) {
    throw std::invalid_argument(std::string(what) + ": unsupported data format " + format_name(format));
}

uint16_t float_to_fp16_bits(float value) {
    return std::bit_cast<uint16_t>(static_cast<_Float16>(value));
}
float fp16_bits_to_float(uint16_t bits) {
    return static_cast<float>(std::bit_cast<_Float16>(bits));
}

float raw_bits_to_storage(uint32_t bits) {
    return std::bit_cast<float>(bits);
}
uint32_t storage_to_raw_bits(float value) {
    return std::bit_cast<uint32_t>(value);
}

// DST without fp32 accumulation after every math op: cloned per ISA to vectorize (same bits).
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) void round_to_bf16(float* data, size_t n) {
    for (size_t i = 0; i < n; ++i) data[i] = bf16_bits_to_float(float_to_bf16_bits(data[i]));
}

}  // namespace

bool is_supported_format(DataFormat format) {
    switch (format) {
        case DataFormat::Float32:
        case DataFormat::Float16_b:
        case DataFormat::Float16:
        case DataFormat::Bfp8_b:
        case DataFormat::Bfp4_b:
        case DataFormat::UInt32:
        case DataFormat::Int32:
        case DataFormat::UInt16:
            return true;
        default:
            return false;
    }
}

const char* format_name(DataFormat format) {
    switch (format) {
        case DataFormat::Float32:
            return "Float32";
        case DataFormat::Float16:
            return "Float16";
        case DataFormat::Bfp8:
            return "Bfp8";
        case DataFormat::Bfp4:
            return "Bfp4";
        case DataFormat::Tf32:
            return "Tf32";
        case DataFormat::Float16_b:
            return "Float16_b";
        case DataFormat::Bfp8_b:
            return "Bfp8_b";
        case DataFormat::Bfp4_b:
            return "Bfp4_b";
        case DataFormat::Int32:
            return "Int32";
        case DataFormat::UInt16:
            return "UInt16";
        case DataFormat::Int8:
            return "Int8";
        case DataFormat::UInt32:
            return "UInt32";
        case DataFormat::UInt8:
            return "UInt8";
        case DataFormat::Invalid:
            return "Invalid";
    }
    return "DataFormat(?)";
}

bool is_block_format(DataFormat format) {
    return format == DataFormat::Bfp8_b || format == DataFormat::Bfp4_b;
}

uint32_t tile_bytes(DataFormat format) {
    if (is_block_format(format)) return bfp_tile_bytes(format);
    return element_bytes(format) * TILE_ELEMENTS;
}

uint32_t element_bytes(DataFormat format) {
    switch (format) {
        case DataFormat::Float32:
        case DataFormat::UInt32:
        case DataFormat::Int32:
            return 4;
        case DataFormat::Float16_b:
        case DataFormat::Float16:
        case DataFormat::UInt16:
            return 2;
        case DataFormat::Bfp8_b:
        case DataFormat::Bfp4_b:
            throw std::invalid_argument(std::string("element_bytes: ") + format_name(format) +
                                        " is a block format (no per-element size)");
        default:
            unsupported("element_bytes", format);
    }
}

bool is_integer_format(DataFormat format) {
    return format == DataFormat::UInt32 || format == DataFormat::Int32 || format == DataFormat::UInt16;
}

void unpack_elements(DataFormat format, const void* src, float* out, size_t n) {
    const auto* bytes = static_cast<const uint8_t*>(src);
    switch (format) {
        case DataFormat::Float32:
        case DataFormat::UInt32:
        case DataFormat::Int32:
            std::memcpy(out, bytes, n * 4);
            return;
        case DataFormat::Float16_b:
            for (size_t i = 0; i < n; ++i) {
                uint16_t h;
                std::memcpy(&h, bytes + 2 * i, 2);
                out[i] = bf16_bits_to_float(h);
            }
            return;
        case DataFormat::Float16:
            for (size_t i = 0; i < n; ++i) {
                uint16_t h;
                std::memcpy(&h, bytes + 2 * i, 2);
                out[i] = fp16_bits_to_float(h);
            }
            return;
        case DataFormat::UInt16:
            for (size_t i = 0; i < n; ++i) {
                uint16_t h;
                std::memcpy(&h, bytes + 2 * i, 2);
                out[i] = raw_bits_to_storage(h);
            }
            return;
        default:
            unsupported("unpack_elements", format);
    }
}

void pack_elements(DataFormat format, const float* in, void* dst, size_t n) {
    auto* bytes = static_cast<uint8_t*>(dst);
    switch (format) {
        case DataFormat::Float32:
        case DataFormat::UInt32:
        case DataFormat::Int32:
            std::memcpy(bytes, in, n * 4);
            return;
        case DataFormat::Float16_b:
            for (size_t i = 0; i < n; ++i) {
                const uint16_t h = float_to_bf16_bits(in[i]);
                std::memcpy(bytes + 2 * i, &h, 2);
            }
            return;
        case DataFormat::Float16:
            for (size_t i = 0; i < n; ++i) {
                const uint16_t h = float_to_fp16_bits(in[i]);
                std::memcpy(bytes + 2 * i, &h, 2);
            }
            return;
        case DataFormat::UInt16:
            for (size_t i = 0; i < n; ++i) {
                const auto h = static_cast<uint16_t>(storage_to_raw_bits(in[i]));
                std::memcpy(bytes + 2 * i, &h, 2);
            }
            return;
        default:
            unsupported("pack_elements", format);
    }
}

void round_in_place(DataFormat format, float* data, size_t n) {
    switch (format) {
        case DataFormat::Float32:
            return;
        case DataFormat::Float16_b:
            return round_to_bf16(data, n);
        case DataFormat::Float16:
            for (size_t i = 0; i < n; ++i) data[i] = fp16_bits_to_float(float_to_fp16_bits(data[i]));
            return;
        case DataFormat::Bfp8_b:
        case DataFormat::Bfp4_b: {
            // Consecutive groups of 16 of a row-major 32x32 tile are exactly its face rows.
            if (n % BFP_BLOCK != 0)
                throw std::invalid_argument(std::string("round_in_place: ") + format_name(format) +
                                            " needs a multiple of 16 values, got " + std::to_string(n));
            const uint32_t magnitude_bits = bfp_magnitude_bits(format);
            uint8_t exponent;
            uint8_t codes[BFP_BLOCK];
            for (size_t i = 0; i < n; i += BFP_BLOCK) {
                encode_bfp_block(magnitude_bits, data + i, &exponent, codes);
                decode_bfp_block(magnitude_bits, exponent, codes, data + i);
            }
            return;
        }
        case DataFormat::UInt32:
        case DataFormat::Int32:
        case DataFormat::UInt16:
            throw std::invalid_argument(std::string("round_in_place: ") + format_name(format) +
                                        " holds raw integer bits; there is nothing to round");
        default:
            unsupported("round_in_place", format);
    }
}

}  // namespace ttnn_moe::emu::numerics
