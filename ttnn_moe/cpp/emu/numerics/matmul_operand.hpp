// Operand tiles of the tile matmul, prepared once for every product that uses them.
//
// On a host with AVX512_BF16, VDPBF16PS adds two bf16 x bf16 products into each fp32 lane: the
// odd element's product first, then the even one's, each added with one rounding (round to
// nearest even), denormal inputs read as zero and denormal results flushed. A product of two bf16
// values (8-bit significands) is exact in fp32 unless it overflows or underflows, so one rounded
// c + a*b equals the generic kernel's c + (a*b), two roundings of which the first is exact; with
// each pair stored odd-first (k + 1 in the low half, k in the high half) the instruction adds
// products in increasing k, the generic kernel's order. The results are then bitwise equal to the
// generic kernel's whenever no denormal and no overflow can occur (checked per tile, below) and
// every operand value is a bf16 (bf16, bfloat8_b and bfloat4_b tiles unpack to bf16 values; fp32
// tiles in general do not). Other tiles, and every tile on other hosts, take the generic kernel.
#pragma once

#include <cstdint>

#include "emu/numerics/numerics.hpp"

namespace ttnn_moe::emu::numerics {

struct MatmulOperand {
    // Row-major 32x32: A[i][k] for the left operand, B[k][j] for the right one. Written by the
    // caller before prepare_matmul_a / prepare_matmul_b, or by the load functions (for a bf16 tile
    // only when the generic kernel needs them: `source` is then the tile still to unpack).
    alignas(64) float values[TILE_ELEMENTS];
    // bf16 pairs along k, k + 1 in the low half: A's at i * 16 + k / 2, B's at (k / 2) * 32 + j.
    // Filled only when `paired`.
    alignas(64) uint32_t pairs[TILE_ELEMENTS / 2];
    // Every value is a bf16 and the pairs hold them (only on hosts with AVX512_BF16).
    bool paired = false;
    // Biased fp32 exponents: the least of the nonzero values (255 if all are zero) and the greatest.
    uint32_t min_exponent = 255;
    uint32_t max_exponent = 0;
    // The bf16 tile whose values are not unpacked yet, or nullptr.
    const void* source = nullptr;
};

// Whether the host has AVX512_BF16 (VDPBF16PS), so that prepared operands can be paired.
bool bf16_pair_matmul_supported();

// Fill `pairs` and the exponent range from `values` when the host can use them.
void prepare_matmul_a(MatmulOperand& a);
void prepare_matmul_b(MatmulOperand& b);

// An operand from its tile bytes in `format` (b transposed when `transpose`): bf16 tiles are paired
// straight from their bytes, other tiles unpacked and then prepared.
void load_matmul_a(DataFormat format, const void* tile, MatmulOperand& a);
void load_matmul_b(DataFormat format, const void* tile, bool transpose, MatmulOperand& b);

// c += a @ b with the results of matmul_tile_accumulate(a.values, b.values, c), bit for bit: by
// VDPBF16PS when both operands are paired and nothing in a, b or c can make a denormal, an
// overflow, an infinity or a NaN (true returned), else by the generic kernel (false returned; an
// operand loaded from a bf16 tile is unpacked first).
bool matmul_tile_accumulate(MatmulOperand& a, MatmulOperand& b, float* c);

}  // namespace ttnn_moe::emu::numerics
