// Reproducible normal random numbers for synthetic model weights, fast enough to generate a
// full-size layer (billions of values) in seconds.
//
// Value i of a stream is a function of (seed, i) alone (a counter-based generator), so a tensor
// fills in any order and on any number of threads with the same result.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ttnn_moe::weights {

// out[i] = bfloat16 bits of scale * z_i, z_i ~ N(0, 1) (rounded to nearest even), i < count.
// Spread over `threads` threads (1 or more); the values do not depend on it.
void random_normal_bfloat16(uint64_t seed, float scale, uint16_t* out, size_t count, unsigned threads);
// The same values before the rounding to bfloat16: out[i] = scale * z_i in float32.
void random_normal_float32(uint64_t seed, float scale, float* out, size_t count, unsigned threads);

}  // namespace ttnn_moe::weights
