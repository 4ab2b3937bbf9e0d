// The LLK enums kernels and tt-metal's kernel helpers name (tt-llk's llk_defs.h), values as in 0.81.1.
#pragma once

#include <cstdint>

namespace ckernel {

enum class ReduceDim : std::uint8_t { REDUCE_ROW, REDUCE_COL, REDUCE_SCALAR };
enum class PoolType : std::uint8_t { SUM, AVG, MAX, MIN };
enum class VectorMode : std::uint8_t { None = 0, R = 1, C = 2, RC = 4, RC_custom = 6, Invalid = 0xFF };
enum class EltwiseBinaryType : std::uint8_t { ELWMUL, ELWDIV, ELWADD, ELWSUB, ELWMAXIMUM };
enum class EltwiseBinaryReuseDestType : std::uint8_t { NONE = 0, DEST_TO_SRCA = 1, DEST_TO_SRCB = 2 };

}  // namespace ckernel
