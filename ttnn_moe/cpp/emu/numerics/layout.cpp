// Tile layout: 32x32 row-major floats <-> tilized tile bytes, and whole
// matrices <-> tile pages.
//
// A tilized tile is 64 "face rows" of 16 elements: face f (0 TL, 1 TR, 2 BL,
// 3 BR) row r is face row f*16 + r and holds matrix row (f/2)*16 + r,
// columns (f%2)*16 .. +15. Block-float formats (Bfp8_b, Bfp4_b) keep one
// shared exponent per face row, in the same order, ahead of the element codes.
#include <array>
#include <cstring>
#include <stdexcept>
#include <string>

#include "emu/numerics/bfp.hpp"
#include "emu/numerics/numerics.hpp"

namespace ttnn_moe::emu::numerics {

namespace {

constexpr uint32_t FACE_ROWS_PER_TILE = TILE_ELEMENTS / FACE_DIM;  // 64

void tilized_to_row_major(const float* tilized, float* row_major) {
    for (uint32_t fr = 0; fr < FACE_ROWS_PER_TILE; ++fr)
        std::memcpy(row_major + face_row_offset(fr), tilized + fr * FACE_DIM, FACE_DIM * sizeof(float));
}

void row_major_to_tilized(const float* row_major, float* tilized) {
    for (uint32_t fr = 0; fr < FACE_ROWS_PER_TILE; ++fr)
        std::memcpy(tilized + fr * FACE_DIM, row_major + face_row_offset(fr), FACE_DIM * sizeof(float));
}

// The bf16 tiles (most CBs) move between layouts straight into their destination; the clones
// per ISA vectorize the conversions (every clone gives the same bits).
#define TTNN_MOE_PER_ISA __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))

TTNN_MOE_PER_ISA void unpack_bf16_tile(const uint16_t* tile, float* out) {
    for (uint32_t fr = 0; fr < FACE_ROWS_PER_TILE; ++fr) {
        float* row = out + face_row_offset(fr);
        for (uint32_t i = 0; i < FACE_DIM; ++i) row[i] = bf16_bits_to_float(tile[fr * FACE_DIM + i]);
    }
}

TTNN_MOE_PER_ISA void pack_bf16_tile(const float* in, uint16_t* tile) {
    for (uint32_t fr = 0; fr < FACE_ROWS_PER_TILE; ++fr) {
        const float* row = in + face_row_offset(fr);
        for (uint32_t i = 0; i < FACE_DIM; ++i) tile[fr * FACE_DIM + i] = float_to_bf16_bits(row[i]);
    }
}

#undef TTNN_MOE_PER_ISA

void check_format(const char* what, DataFormat format) {
    if (!is_supported_format(format))
        throw std::invalid_argument(std::string(what) + ": unsupported data format " + format_name(format));
}

void check_matrix_shape(const char* what, uint32_t rows, uint32_t cols) {
    if (rows % TILE_DIM != 0 || cols % TILE_DIM != 0)
        throw std::invalid_argument(std::string(what) + ": rows and cols must be multiples of 32, got (" +
                                    std::to_string(rows) + ", " + std::to_string(cols) + ")");
}

}  // namespace

void unpack_tile(DataFormat format, const void* tile, float* out) {
    check_format("unpack_tile", format);
    if (is_block_format(format)) return decode_bfp_tile(format, static_cast<const uint8_t*>(tile), out);
    if (format == DataFormat::Float16_b) return unpack_bf16_tile(static_cast<const uint16_t*>(tile), out);
    std::array<float, TILE_ELEMENTS> tilized;
    unpack_elements(format, tile, tilized.data(), TILE_ELEMENTS);
    tilized_to_row_major(tilized.data(), out);
}

void pack_tile(DataFormat format, const float* in, void* tile) {
    check_format("pack_tile", format);
    if (is_block_format(format)) return encode_bfp_tile(format, in, static_cast<uint8_t*>(tile));
    if (format == DataFormat::Float16_b) return pack_bf16_tile(in, static_cast<uint16_t*>(tile));
    std::array<float, TILE_ELEMENTS> tilized;
    row_major_to_tilized(in, tilized.data());
    pack_elements(format, tilized.data(), tile, TILE_ELEMENTS);
}

void tilize(DataFormat format, const float* src, uint32_t rows, uint32_t cols, void* dst) {
    check_matrix_shape("tilize", rows, cols);
    const uint32_t page = tile_bytes(format);
    auto* out = static_cast<uint8_t*>(dst);
    std::array<float, TILE_ELEMENTS> tile;
    for (uint32_t tr = 0; tr < rows / TILE_DIM; ++tr) {
        for (uint32_t tc = 0; tc < cols / TILE_DIM; ++tc) {
            for (uint32_t r = 0; r < TILE_DIM; ++r)
                std::memcpy(tile.data() + r * TILE_DIM, src + size_t(tr * TILE_DIM + r) * cols + tc * TILE_DIM,
                            TILE_DIM * sizeof(float));
            pack_tile(format, tile.data(), out);
            out += page;
        }
    }
}

void untilize(DataFormat format, const void* src, uint32_t rows, uint32_t cols, float* dst) {
    check_matrix_shape("untilize", rows, cols);
    const uint32_t page = tile_bytes(format);
    const auto* in = static_cast<const uint8_t*>(src);
    std::array<float, TILE_ELEMENTS> tile;
    for (uint32_t tr = 0; tr < rows / TILE_DIM; ++tr) {
        for (uint32_t tc = 0; tc < cols / TILE_DIM; ++tc) {
            unpack_tile(format, in, tile.data());
            in += page;
            for (uint32_t r = 0; r < TILE_DIM; ++r)
                std::memcpy(dst + size_t(tr * TILE_DIM + r) * cols + tc * TILE_DIM, tile.data() + r * TILE_DIM,
                            TILE_DIM * sizeof(float));
        }
    }
}

}  // namespace ttnn_moe::emu::numerics
