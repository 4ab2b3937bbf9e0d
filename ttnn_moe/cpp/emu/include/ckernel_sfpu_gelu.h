// GELU of tt-metal's Wormhole ckernel_sfpu_gelu.h (calculate_gelu, gelu_init) with the same names, template
// arguments and meaning, written for the emulator: the wheel's approximate GELU evaluates a table loaded into
// the SFPU's LUT registers (SFPLUT), which the emulated vector unit does not have.
// APPROXIMATION_MODE: the tanh form, x / (1 + exp(-2 sqrt(2/pi) (x + 0.044715 x^3))) (torch's
// gelu(approximate="tanh"), which the hardware's table fits); otherwise the erf form
// x (1 + erf(x / sqrt 2)) / 2 with erf by Abramowitz-Stegun 7.1.26 (within 1.5e-7). Results are rounded to
// bf16 (nearest even) before a 16-bit DST store.
#pragma once

#include "ckernel_sfpu_exp.h"
#include "ckernel_sfpu_recip.h"
#include "sfpi.h"

namespace ckernel::sfpu {

sfpi_inline sfpi::vFloat emu_gelu_tanh(sfpi::vFloat x) {
    constexpr float kTwoSqrt2OverPi = 1.5957691216057308f;
    const sfpi::vFloat u = (x * x * 0.044715f + 1.0f) * x * kTwoSqrt2OverPi;
    return x * sfpu_reciprocal_iter<2>(emu_exp(-u) + 1.0f);
}

sfpi_inline sfpi::vFloat emu_gelu_erf(sfpi::vFloat x) {
    const sfpi::vFloat z = sfpi::abs(x) * 0.70710678118654752f;
    const sfpi::vFloat t = sfpu_reciprocal_iter<2>(z * 0.3275911f + 1.0f);
    sfpi::vFloat poly = t * 1.061405429f - 1.453152027f;
    poly = poly * t + 1.421413741f;
    poly = poly * t - 0.284496736f;
    poly = poly * t + 0.254829592f;
    poly = poly * t;
    sfpi::vFloat erf_abs = 1.0f - poly * emu_exp(-(z * z));
    const sfpi::vFloat erf = sfpi::copysgn(erf_abs, x);
    return (erf + 1.0f) * x * 0.5f;
}

template <bool APPROXIMATION_MODE, bool is_fp32_dest_acc_en, int ITERATIONS = 8>
inline void calculate_gelu() {
    for (int d = 0; d < ITERATIONS; d++) {
        const sfpi::vFloat x = sfpi::dst_reg[0];
        sfpi::vFloat result = APPROXIMATION_MODE ? emu_gelu_tanh(x) : emu_gelu_erf(x);
        if constexpr (!is_fp32_dest_acc_en) result = sfpi::convert<sfpi::vFloat16b>(result, sfpi::RoundMode::Nearest);
        sfpi::dst_reg[0] = result;
        sfpi::dst_reg++;
    }
}

template <bool APPROXIMATION_MODE, bool is_fp32_dest_acc_en = false>
inline void gelu_init() {
    sfpu_reciprocal_init<false>();
}

}  // namespace ckernel::sfpu
