// Counter-based normal generator.
//
// Bits: value i takes 32 bits of splitmix64's finalizer applied to seed * A + (i / 2) * B (the
// two halves of one 64-bit output serve values 2k and 2k + 1). Shape: the top 10 bits pick one of
// 1024 equally likely bins of N(0, 1) (between its quantiles at k/1024 and (k+1)/1024), the low 22
// bits a point uniformly inside the bin. The two outer bins, whose quantiles are infinite, are
// closed so each keeps the mean of its tail. The result matches N(0, 1) at every bin edge and has
// its mean and (to within 1e-4) its variance; tails end at about 3.8.
//
// The quantile table is rounded to multiples of 2^-20, so a host whose libm rounds erfc
// differently in the last bits still builds the same table; the arithmetic on it is plain IEEE
// float (this file is compiled without contraction into fused multiply-adds), so the values are
// the same on every x86 host.
#include "weights/random_normal.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <thread>
#include <vector>

#include "emu/numerics/numerics.hpp"

namespace ttnn_moe::weights {

namespace {

constexpr uint32_t BINS = 1024;
constexpr uint32_t BIN_BITS = 10;
constexpr uint32_t FRACTION_BITS = 32 - BIN_BITS;

double normal_cdf(double x) {
    return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

double normal_quantile(double p) {
    double lo = -10.0, hi = 10.0;
    for (int i = 0; i < 200; ++i) {
        const double mid = 0.5 * (lo + hi);
        (normal_cdf(mid) < p ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
}

struct Bins {
    std::array<float, BINS> start{};  // bin k covers [start[k], start[k] + width[k])
    std::array<float, BINS> width{};
};

Bins make_bins() {
    std::array<double, BINS + 1> edge{};
    for (uint32_t k = 1; k < BINS; ++k)
        edge[k] = std::ldexp(std::round(std::ldexp(normal_quantile(double(k) / BINS), 20)), -20);
    // Outer bins: the tail's mean is -pdf(q) / P(tail), P(tail) = 1/BINS; the bin is centered on it.
    const double q = edge[BINS - 1];
    const double tail_mean = std::exp(-0.5 * q * q) / std::sqrt(2.0 * M_PI) * BINS;
    edge[BINS] = std::ldexp(std::round(std::ldexp(2.0 * tail_mean - q, 20)), -20);
    edge[0] = -edge[BINS];
    Bins bins;
    for (uint32_t k = 0; k < BINS; ++k) {
        bins.start[k] = static_cast<float>(edge[k]);
        bins.width[k] = static_cast<float>(edge[k + 1] - edge[k]);
    }
    return bins;
}

const Bins& bins() {
    static const Bins table = make_bins();
    return table;
}

[[gnu::always_inline]] inline uint64_t mix(uint64_t z) {
    z ^= z >> 30;
    z *= 0xbf58476d1ce4e5b9ull;
    z ^= z >> 27;
    z *= 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

[[gnu::always_inline]] inline float scaled_value(const Bins& table, uint32_t u, float scale) {
    constexpr float unit = 1.0f / float(1u << FRACTION_BITS);
    const uint32_t bin = u >> FRACTION_BITS;
    const float fraction = static_cast<float>(u & ((1u << FRACTION_BITS) - 1)) * unit;
    return (table.start[bin] + fraction * table.width[bin]) * scale;
}

[[gnu::always_inline]] inline void store(float value, float* out) {
    *out = value;
}
[[gnu::always_inline]] inline void store(float value, uint16_t* out) {
    *out = emu::numerics::float_to_bf16_bits(value);
}

// Values [begin, end), begin even.
template <typename Out>
[[gnu::always_inline]] inline void fill(const Bins& table, uint64_t seed, float scale, Out* out, size_t begin,
                                        size_t end) {
    const uint64_t base = seed * 0x9e3779b97f4a7c15ull;
    for (size_t pair = begin / 2; pair < end / 2; ++pair) {
        const uint64_t bits = mix(base + pair * 0xd1b54a32d192ed03ull);
        store(scaled_value(table, static_cast<uint32_t>(bits), scale), out + 2 * pair);
        store(scaled_value(table, static_cast<uint32_t>(bits >> 32), scale), out + 2 * pair + 1);
    }
    if (end % 2) {
        const uint64_t bits = mix(base + (end / 2) * 0xd1b54a32d192ed03ull);
        store(scaled_value(table, static_cast<uint32_t>(bits), scale), out + end - 1);
    }
}

#define TTNN_MOE_PER_ISA __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
TTNN_MOE_PER_ISA void fill_bfloat16(const Bins& table, uint64_t seed, float scale, uint16_t* out, size_t begin,
                                    size_t end) {
    fill(table, seed, scale, out, begin, end);
}
TTNN_MOE_PER_ISA void fill_float32(const Bins& table, uint64_t seed, float scale, float* out, size_t begin,
                                   size_t end) {
    fill(table, seed, scale, out, begin, end);
}
#undef TTNN_MOE_PER_ISA

// Even chunk boundaries: a 64-bit output's two values stay in one chunk.
template <typename Out, typename Fill>
void fill_on_threads(Fill fill_chunk, uint64_t seed, float scale, Out* out, size_t count, unsigned threads) {
    const Bins& table = bins();
    threads = std::max(1u, threads);
    const size_t chunk = ((count + threads - 1) / threads + 1) & ~size_t(1);
    std::vector<std::thread> workers;
    for (unsigned t = 1; t < threads && t * chunk < count; ++t)
        workers.emplace_back(fill_chunk, std::cref(table), seed, scale, out, t * chunk,
                             std::min(count, (t + 1) * chunk));
    fill_chunk(table, seed, scale, out, 0, std::min(count, chunk));
    for (auto& worker : workers) worker.join();
}

}  // namespace

void random_normal_bfloat16(uint64_t seed, float scale, uint16_t* out, size_t count, unsigned threads) {
    fill_on_threads(fill_bfloat16, seed, scale, out, count, threads);
}

void random_normal_float32(uint64_t seed, float scale, float* out, size_t count, unsigned threads) {
    fill_on_threads(fill_float32, seed, scale, out, count, threads);
}

}  // namespace ttnn_moe::weights
