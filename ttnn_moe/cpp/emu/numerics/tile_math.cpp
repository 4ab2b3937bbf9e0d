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

namespace {
// 16 floats (a 64-byte vector); the clones below lower it to one AVX-512 register, two AVX2 or
// four SSE registers. Its operations are lane-wise IEEE multiplies and adds, never fused.
typedef float Vec16 __attribute__((vector_size(64)));

inline Vec16 load16(const float* p) {
    Vec16 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline void store16(float* p, Vec16 v) {
    std::memcpy(p, &v, sizeof v);
}
}  // namespace

// Four rows of c at a time stay in registers (8 vectors) while k runs 0..31; each k adds
// a[i][k] * b[k][:] to them. Every c[i][j] still gets its products added one by one in k order,
// so all clones (AVX-512, AVX2, baseline) give bitwise the same results.
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) void matmul_tile_accumulate(
    const float* __restrict a, const float* __restrict b, float* __restrict c) {
    constexpr uint32_t ROWS = 4;
    for (uint32_t i = 0; i < N; i += ROWS) {
        Vec16 acc[ROWS][2];
        for (uint32_t r = 0; r < ROWS; ++r) {
            acc[r][0] = load16(c + (i + r) * N);
            acc[r][1] = load16(c + (i + r) * N + 16);
        }
        for (uint32_t k = 0; k < N; ++k) {
            const Vec16 b0 = load16(b + k * N);
            const Vec16 b1 = load16(b + k * N + 16);
            for (uint32_t r = 0; r < ROWS; ++r) {
                const float a_ik = a[(i + r) * N + k];
                acc[r][0] += a_ik * b0;
                acc[r][1] += a_ik * b1;
            }
        }
        for (uint32_t r = 0; r < ROWS; ++r) {
            store16(c + (i + r) * N, acc[r][0]);
            store16(c + (i + r) * N + 16, acc[r][1]);
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
