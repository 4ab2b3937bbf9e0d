// Tile math in fp32 on 32x32 row-major tiles: matmul, binary ops with
// broadcast, unary SFPU-style ops.
//
// Math fidelity is not modelled: products are exact fp32 products (what
// HiFi4 gives for bf16 operands). Each output element is accumulated in a
// fixed order with separate multiply and add (this file is compiled with
// -ffp-contract=off), so results are bitwise reproducible on any x86 host.
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "emu/numerics/numerics.hpp"

namespace ttnn_moe::emu::numerics {

namespace {
constexpr uint32_t N = TILE_DIM;
}  // namespace

// i-k-j order: the inner loop runs over 32 contiguous floats of c and b, which
// -O3 vectorizes. The AVX2 clone (picked at load time when the CPU has it) is
// about 3x faster than the SSE2 baseline; AVX2 without FMA gives bitwise the
// same results as the baseline.
__attribute__((target_clones("avx2", "default"))) void matmul_tile_accumulate(const float* __restrict a,
                                                                              const float* __restrict b,
                                                                              float* __restrict c) {
    for (uint32_t i = 0; i < N; ++i) {
        float* __restrict c_row = c + i * N;
        for (uint32_t k = 0; k < N; ++k) {
            const float a_ik = a[i * N + k];
            const float* __restrict b_row = b + k * N;
            for (uint32_t j = 0; j < N; ++j) c_row[j] += a_ik * b_row[j];
        }
    }
}

void transpose_tile(const float* in, float* out) {
    for (uint32_t i = 0; i < N; ++i)
        for (uint32_t j = 0; j < N; ++j) out[j * N + i] = in[i * N + j];
}

namespace {

template <typename Op>
void binary_with(Op op, Broadcast bcast, const float* a, const float* b, float* out) {
    switch (bcast) {
        case Broadcast::None:
            for (uint32_t i = 0; i < TILE_ELEMENTS; ++i) out[i] = op(a[i], b[i]);
            return;
        case Broadcast::Row:  // b[0][c] for every row
            for (uint32_t r = 0; r < N; ++r)
                for (uint32_t c = 0; c < N; ++c) out[r * N + c] = op(a[r * N + c], b[c]);
            return;
        case Broadcast::Col:  // b[r][0] for every column
            for (uint32_t r = 0; r < N; ++r) {
                const float b_r = b[r * N];
                for (uint32_t c = 0; c < N; ++c) out[r * N + c] = op(a[r * N + c], b_r);
            }
            return;
        case Broadcast::Scalar: {
            const float b0 = b[0];
            for (uint32_t i = 0; i < TILE_ELEMENTS; ++i) out[i] = op(a[i], b0);
            return;
        }
    }
    throw std::invalid_argument("binary_tile: unknown broadcast " + std::to_string(static_cast<int>(bcast)));
}

float sigmoid(float x) {
    return 1.0f / (1.0f + std::exp(-x));
}

}  // namespace

void binary_tile(BinaryOp op, Broadcast bcast, const float* a, const float* b, float* out) {
    switch (op) {
        case BinaryOp::Add:
            return binary_with([](float x, float y) { return x + y; }, bcast, a, b, out);
        case BinaryOp::Sub:
            return binary_with([](float x, float y) { return x - y; }, bcast, a, b, out);
        case BinaryOp::Mul:
            return binary_with([](float x, float y) { return x * y; }, bcast, a, b, out);
    }
    throw std::invalid_argument("binary_tile: unknown op " + std::to_string(static_cast<int>(op)));
}

void unary_tile(UnaryOp op, float* inout) {
    switch (op) {
        case UnaryOp::Silu:
            for (uint32_t i = 0; i < TILE_ELEMENTS; ++i) inout[i] = inout[i] * sigmoid(inout[i]);
            return;
        case UnaryOp::Sigmoid:
            for (uint32_t i = 0; i < TILE_ELEMENTS; ++i) inout[i] = sigmoid(inout[i]);
            return;
        case UnaryOp::Exp:
            for (uint32_t i = 0; i < TILE_ELEMENTS; ++i) inout[i] = std::exp(inout[i]);
            return;
        case UnaryOp::Relu:  // NaN stays NaN (the comparison is false), -0 stays -0
            for (uint32_t i = 0; i < TILE_ELEMENTS; ++i) inout[i] = inout[i] < 0.0f ? 0.0f : inout[i];
            return;
        case UnaryOp::Recip:
            for (uint32_t i = 0; i < TILE_ELEMENTS; ++i) inout[i] = 1.0f / inout[i];
            return;
        case UnaryOp::Neg:
            for (uint32_t i = 0; i < TILE_ELEMENTS; ++i) inout[i] = -inout[i];
            return;
    }
    throw std::invalid_argument("unary_tile: unknown op " + std::to_string(static_cast<int>(op)));
}

}  // namespace ttnn_moe::emu::numerics
