// The tile matmul on bf16 pairs (VDPBF16PS) and the checks that keep it bitwise equal to the
// generic kernel; see matmul_operand.hpp for why the two agree.
#include "emu/numerics/matmul_operand.hpp"

// GCC 12's AVX-512 intrinsics leave the unused lanes of their operations "undefined" by a
// self-initialised variable, which -Wuninitialized reports at every inlined use (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <cstdint>

namespace ttnn_moe::emu::numerics {

namespace {

constexpr uint32_t N = TILE_DIM;
constexpr uint32_t PAIRS = N / 2;  // bf16 pairs along k

// Biased exponent bounds, from fp32's normal range [2^-126, 2^128):
// - a bf16 value with exponent E is a multiple of 2^(E - 134) (8-bit significand), so a product is
//   a multiple of 2^(Ea + Eb - 268), and when Ea + Eb >= 142 of 2^-126; an fp32 c with exponent
//   Ec >= 24 is a multiple of 2^(Ec - 150) >= 2^-126. A rounded sum of multiples of 2^-126 is one
//   too, so every nonzero product and partial sum is at least 2^-126: never denormal.
// - Ea + Eb <= 372 keeps each product below 2^120, and Ec <= 251 keeps c below 2^125: c and the
//   32 products stay below 2^126, so no product or partial sum overflows.
constexpr uint32_t kMinProductExponents = 142;
constexpr uint32_t kMaxProductExponents = 372;
constexpr uint32_t kMinAccumulatorExponent = 24;
constexpr uint32_t kMaxAccumulatorExponent = 251;
constexpr uint32_t kInfExponent = 255;

#define PAIR_TARGET __attribute__((target("avx512f,avx512bw,avx512bf16")))

// What one pass over an operand's values learns besides the pairs: the low halves of their bits
// or-ed together (nonzero: some value is not a bf16), the least nonzero magnitude and the greatest
// (whose exponents are the range).
struct ValueSummary {
    __m512i low_bits;
    __m512i least_nonzero_minus_one;  // a zero's wraps around to the greatest
    __m512i greatest;
};

PAIR_TARGET inline ValueSummary empty_summary() {
    return {_mm512_setzero_si512(), _mm512_set1_epi32(-1), _mm512_setzero_si512()};
}

PAIR_TARGET inline void summarize(ValueSummary& s, __m512i bits) {
    const __m512i magnitude = _mm512_and_si512(bits, _mm512_set1_epi32(0x7fffffff));
    s.low_bits = _mm512_or_si512(s.low_bits, bits);
    s.least_nonzero_minus_one =
        _mm512_min_epu32(s.least_nonzero_minus_one, _mm512_sub_epi32(magnitude, _mm512_set1_epi32(1)));
    s.greatest = _mm512_max_epu32(s.greatest, magnitude);
}

// The pairs are usable when every value is a bf16; the exponent range goes with them.
PAIR_TARGET void finish(const ValueSummary& s, MatmulOperand& operand) {
    const uint32_t low_bits = _mm512_reduce_or_epi32(_mm512_and_si512(s.low_bits, _mm512_set1_epi32(0xffff)));
    const uint32_t least = uint32_t(_mm512_reduce_min_epu32(s.least_nonzero_minus_one));
    operand.min_exponent = least == UINT32_MAX ? kInfExponent : (least + 1) >> 23;
    operand.max_exponent = uint32_t(_mm512_reduce_max_epu32(s.greatest)) >> 23;
    operand.paired = low_bits == 0;
}

// A row's 32 values (64 halves; the high half of each value is its bf16) -> its 16 pairs: pair p
// is the high half of value 2p + 1 (half 4p + 3) below that of value 2p (half 4p + 1).
PAIR_TARGET void pair_rows(MatmulOperand& a) {
    alignas(64) static constexpr uint16_t kHalves[32] = {3,  1,  7,  5,  11, 9,  15, 13, 19, 17, 23,
                                                         21, 27, 25, 31, 29, 35, 33, 39, 37, 43, 41,
                                                         47, 45, 51, 49, 55, 53, 59, 57, 63, 61};
    const __m512i halves = _mm512_load_si512(kHalves);
    ValueSummary summary = empty_summary();
    for (uint32_t i = 0; i < N; ++i) {
        const __m512i left = _mm512_load_si512(a.values + i * N);
        const __m512i right = _mm512_load_si512(a.values + i * N + 16);
        summarize(summary, left);
        summarize(summary, right);
        _mm512_store_si512(a.pairs + i * PAIRS, _mm512_permutex2var_epi16(left, halves, right));
    }
    finish(summary, a);
}

// Rows 2p and 2p + 1 -> pair row p: the high half of b[2p][j] above that of b[2p + 1][j].
PAIR_TARGET void pair_columns(MatmulOperand& b) {
    const __m512i high_half = _mm512_set1_epi32(int(0xffff0000u));
    ValueSummary summary = empty_summary();
    for (uint32_t p = 0; p < PAIRS; ++p) {
        for (uint32_t j = 0; j < N; j += 16) {
            const __m512i first = _mm512_load_si512(b.values + 2 * p * N + j);
            const __m512i second = _mm512_load_si512(b.values + (2 * p + 1) * N + j);
            summarize(summary, first);
            summarize(summary, second);
            _mm512_store_si512(b.pairs + p * N + j,
                               _mm512_or_si512(_mm512_and_si512(first, high_half), _mm512_srli_epi32(second, 16)));
        }
    }
    finish(summary, b);
}

// A bf16 tile's row r: columns 0..15 are face row (r / 16) * 32 + r % 16, columns 16..31 the
// face row 16 after it (the next face), 16 halves each.
PAIR_TARGET inline __m512i bf16_row(const uint16_t* tile, uint32_t r) {
    const uint16_t* left = tile + ((r / 16) * 32 + r % 16) * 16;
    const __m256i low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(left));
    const __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(left + 256));
    return _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1);
}

// The exponent range of a bf16 tile's values (its bits are the high halves of the fp32 ones).
PAIR_TARGET void bf16_exponent_range(const uint16_t* tile, MatmulOperand& operand) {
    const __m512i magnitude_bits = _mm512_set1_epi16(0x7fff);
    const __m512i one = _mm512_set1_epi16(1);
    __m512i least_minus_one = _mm512_set1_epi16(-1);  // a zero's wraps around to the greatest
    __m512i greatest = _mm512_setzero_si512();
    for (uint32_t i = 0; i < TILE_ELEMENTS; i += 32) {
        const __m512i magnitude = _mm512_and_si512(_mm512_loadu_si512(tile + i), magnitude_bits);
        least_minus_one = _mm512_min_epu16(least_minus_one, _mm512_sub_epi16(magnitude, one));
        greatest = _mm512_max_epu16(greatest, magnitude);
    }
    alignas(64) uint16_t least_lanes[32], greatest_lanes[32];
    _mm512_store_si512(least_lanes, least_minus_one);
    _mm512_store_si512(greatest_lanes, greatest);
    uint32_t least = 0xffff, most = 0;
    for (uint32_t i = 0; i < 32; ++i) {
        least = least_lanes[i] < least ? least_lanes[i] : least;
        most = greatest_lanes[i] > most ? greatest_lanes[i] : most;
    }
    operand.min_exponent = least == 0xffff ? kInfExponent : (least + 1) >> 7;
    operand.max_exponent = most >> 7;
}

// A bf16 tile's row pairs: its 32-bit words (values 2p, 2p + 1) with their halves swapped.
PAIR_TARGET void pair_bf16_rows(const uint16_t* tile, MatmulOperand& a) {
    for (uint32_t i = 0; i < N; ++i) _mm512_store_si512(a.pairs + i * PAIRS, _mm512_rol_epi32(bf16_row(tile, i), 16));
    bf16_exponent_range(tile, a);
    a.paired = true;
}

// A bf16 tile's column pairs: row 2p + 1's halves interleaved below row 2p's.
PAIR_TARGET void pair_bf16_columns(const uint16_t* tile, MatmulOperand& b) {
    alignas(64) static constexpr uint16_t kLeft[32] = {0, 32, 1, 33, 2,  34, 3,  35, 4,  36, 5,  37, 6,  38, 7,  39,
                                                       8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
    const __m512i left = _mm512_load_si512(kLeft);
    const __m512i right = _mm512_add_epi16(left, _mm512_set1_epi16(16));
    for (uint32_t p = 0; p < PAIRS; ++p) {
        const __m512i first = bf16_row(tile, 2 * p);
        const __m512i second = bf16_row(tile, 2 * p + 1);
        _mm512_store_si512(b.pairs + p * N, _mm512_permutex2var_epi16(second, left, first));
        _mm512_store_si512(b.pairs + p * N + 16, _mm512_permutex2var_epi16(second, right, first));
    }
    bf16_exponent_range(tile, b);
    b.paired = true;
}

// The values of an operand loaded from a bf16 tile, unpacked on first use.
const float* values_of(MatmulOperand& operand) {
    if (operand.source) {
        unpack_tile(DataFormat::Float16_b, operand.source, operand.values);
        operand.source = nullptr;
    }
    return operand.values;
}

bool products_in_range(const MatmulOperand& a, const MatmulOperand& b) {
    return a.paired && b.paired && a.min_exponent >= 1 && b.min_exponent >= 1 &&
           a.min_exponent + b.min_exponent >= kMinProductExponents && a.max_exponent < kInfExponent &&
           b.max_exponent < kInfExponent && a.max_exponent + b.max_exponent <= kMaxProductExponents;
}

// Every element of c is zero or has an exponent in [kMinAccumulatorExponent, kMaxAccumulatorExponent].
PAIR_TARGET bool accumulator_in_range(const float* c) {
    const __m512i magnitude_bits = _mm512_set1_epi32(0x7fffffff);
    // magnitude - least - 1 wraps for zero and falls below the span for the range (unsigned).
    const __m512i least_minus_one = _mm512_set1_epi32(int(kMinAccumulatorExponent << 23) - 1);
    const __m512i span = _mm512_set1_epi32(int(((kMaxAccumulatorExponent + 1 - kMinAccumulatorExponent) << 23) + 1));
    __mmask16 outside = 0;
    for (uint32_t i = 0; i < TILE_ELEMENTS; i += 16) {
        const __m512i magnitude = _mm512_and_si512(_mm512_loadu_si512(c + i), magnitude_bits);
        const __m512i offset = _mm512_sub_epi32(magnitude, least_minus_one);
        const __mmask16 zero = _mm512_cmpeq_epi32_mask(magnitude, _mm512_setzero_si512());
        outside |= _mm512_mask_cmpge_epu32_mask(~zero, offset, span);
    }
    return outside == 0;
}

// Eight rows of c stay in registers (16 vectors) while the 16 pairs of k run; each step adds
// a[i][k] * b[k][:] and then a[i][k + 1] * b[k + 1][:] into c[i][:].
PAIR_TARGET void matmul_pairs(const uint32_t* __restrict a, const uint32_t* __restrict b, float* __restrict c) {
    constexpr uint32_t ROWS = 8;
    for (uint32_t i = 0; i < N; i += ROWS) {
        __m512 acc[ROWS][2];
        for (uint32_t r = 0; r < ROWS; ++r) {
            acc[r][0] = _mm512_loadu_ps(c + (i + r) * N);
            acc[r][1] = _mm512_loadu_ps(c + (i + r) * N + 16);
        }
        for (uint32_t p = 0; p < PAIRS; ++p) {
            const __m512bh b0 = reinterpret_cast<__m512bh>(_mm512_load_si512(b + p * N));
            const __m512bh b1 = reinterpret_cast<__m512bh>(_mm512_load_si512(b + p * N + 16));
            for (uint32_t r = 0; r < ROWS; ++r) {
                const __m512bh a_pair = reinterpret_cast<__m512bh>(_mm512_set1_epi32(int(a[(i + r) * PAIRS + p])));
                acc[r][0] = _mm512_dpbf16_ps(acc[r][0], a_pair, b0);
                acc[r][1] = _mm512_dpbf16_ps(acc[r][1], a_pair, b1);
            }
        }
        for (uint32_t r = 0; r < ROWS; ++r) {
            _mm512_storeu_ps(c + (i + r) * N, acc[r][0]);
            _mm512_storeu_ps(c + (i + r) * N + 16, acc[r][1]);
        }
    }
}

}  // namespace

bool bf16_pair_matmul_supported() {
    static const bool supported =
        __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512bf16");
    return supported;
}

void prepare_matmul_a(MatmulOperand& a) {
    a.paired = false;
    a.source = nullptr;
    if (bf16_pair_matmul_supported()) pair_rows(a);
}

void prepare_matmul_b(MatmulOperand& b) {
    b.paired = false;
    b.source = nullptr;
    if (bf16_pair_matmul_supported()) pair_columns(b);
}

void load_matmul_a(DataFormat format, const void* tile, MatmulOperand& a) {
    if (format == DataFormat::Float16_b && bf16_pair_matmul_supported()) {
        pair_bf16_rows(static_cast<const uint16_t*>(tile), a);
        a.source = tile;
        return;
    }
    unpack_tile(format, tile, a.values);
    prepare_matmul_a(a);
}

void load_matmul_b(DataFormat format, const void* tile, bool transpose, MatmulOperand& b) {
    if (!transpose && format == DataFormat::Float16_b && bf16_pair_matmul_supported()) {
        pair_bf16_columns(static_cast<const uint16_t*>(tile), b);
        b.source = tile;
        return;
    }
    if (transpose) {
        alignas(64) float staging[TILE_ELEMENTS];
        unpack_tile(format, tile, staging);
        transpose_tile(staging, b.values);
    } else {
        unpack_tile(format, tile, b.values);
    }
    prepare_matmul_b(b);
}

bool matmul_tile_accumulate(MatmulOperand& a, MatmulOperand& b, float* c) {
    if (products_in_range(a, b) && accumulator_in_range(c)) {
        matmul_pairs(a.pairs, b.pairs, c);
        return true;
    }
    matmul_tile_accumulate(values_of(a), values_of(b), c);
    return false;
}

}  // namespace ttnn_moe::emu::numerics

#pragma GCC diagnostic pop
