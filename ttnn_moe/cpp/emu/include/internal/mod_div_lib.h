// tt-metal's division helpers for the RISC-V cores, which have no fast divider: multiplication and
// division by a constant. The host divides natively, so each is the plain operation.
#pragma once

#include <cstdint>

inline unsigned int mulsi3(unsigned int a, unsigned int b) {
    return a * b;
}

template <uint32_t d>
constexpr uint32_t udivsi3_const_divisor(uint32_t n) {
    static_assert(d != 0, "division by zero");
    return n / d;
}

template <uint32_t d>
constexpr uint32_t umodsi3_const_divisor(uint32_t a) {
    return a % d;
}

#define TTNN_MOE_EMU_FAST_UDIV(d)               \
    inline uint32_t fast_udiv_##d(uint32_t n) { \
        return n / d;                           \
    }
TTNN_MOE_EMU_FAST_UDIV(7)
TTNN_MOE_EMU_FAST_UDIV(12)
TTNN_MOE_EMU_FAST_UDIV(20)
TTNN_MOE_EMU_FAST_UDIV(28)
TTNN_MOE_EMU_FAST_UDIV(48)
TTNN_MOE_EMU_FAST_UDIV(56)
TTNN_MOE_EMU_FAST_UDIV(63)
TTNN_MOE_EMU_FAST_UDIV(70)
TTNN_MOE_EMU_FAST_UDIV(72)
TTNN_MOE_EMU_FAST_UDIV(80)
TTNN_MOE_EMU_FAST_UDIV(94)
TTNN_MOE_EMU_FAST_UDIV(108)
TTNN_MOE_EMU_FAST_UDIV(110)
TTNN_MOE_EMU_FAST_UDIV(117)
TTNN_MOE_EMU_FAST_UDIV(120)
TTNN_MOE_EMU_FAST_UDIV(124)
TTNN_MOE_EMU_FAST_UDIV(126)
TTNN_MOE_EMU_FAST_UDIV(130)
TTNN_MOE_EMU_FAST_UDIV(140)
#undef TTNN_MOE_EMU_FAST_UDIV
