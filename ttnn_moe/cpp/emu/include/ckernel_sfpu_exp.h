// The exp functions of tt-metal's Wormhole ckernel_sfpu_exp.h that other SFPU headers call (sigmoid, silu,
// swiglu), with the same names and meaning, written for the emulator: the wheel's header also defines the
// fast approximate exp as raw SFPU instruction sequences (SFPLOADMACRO, replay buffers), which do not run
// here. One implementation serves every variant: exp(x) = 2^n e^f with n = round(x log2 e) and
// f = x - n ln 2 (Cody-Waite, ln 2 in two parts), e^f by its degree-7 Taylor polynomial (|f| <= ln2 / 2):
// within 2 fp32 ULP over the normal range, 0 below ln 2^-126 (the vector unit has no denormals), +inf above
// ln FLT_MAX. The hardware's variants differ within their documented accuracy (exp_21f ~1 bf16 ULP).
// calculate_exponential / exp_init (the exp_tile LLK) are not here: the compute API's exp_tile is emulated.
#pragma once

#include <limits>

#include "sfpi.h"
#include "ttnn_moe_emu/sfpu_llk.h"

namespace ckernel::sfpu {

sfpi_inline sfpi::vFloat emu_exp(sfpi::vFloat x) {
    constexpr float kLog2e = 1.44269504088896341f;
    constexpr float kLn2High = 0.693145751953125f;  // 16 significant bits: n * kLn2High is exact
    constexpr float kLn2Low = 1.42860682030941723212e-6f;
    constexpr float kRoundToInteger = 12582912.0f;  // 1.5 * 2^23: t + it rounds t to an integer (nearest even)
    constexpr float kLowest = -87.33654f;           // ln 2^-126
    constexpr float kHighest = 88.72283f;           // ln FLT_MAX
    sfpi::vFloat xc = x;
    v_if(xc < kLowest) {
        xc = kLowest;
    }
    v_endif;
    v_if(xc > kHighest) {
        xc = kHighest;
    }
    v_endif;
    const sfpi::vFloat shifted = xc * kLog2e + kRoundToInteger;
    const sfpi::vFloat n = shifted - kRoundToInteger;
    const sfpi::vFloat f = (xc - n * kLn2High) - n * kLn2Low;
    sfpi::vFloat p = f * (1.0f / 5040.0f) + (1.0f / 720.0f);
    p = p * f + (1.0f / 120.0f);
    p = p * f + (1.0f / 24.0f);
    p = p * f + (1.0f / 6.0f);
    p = p * f + 0.5f;
    p = p * f + 1.0f;
    p = p * f + 1.0f;
    const sfpi::vInt n_int = sfpi::as<sfpi::vInt>(shifted) - sfpi::as<sfpi::vInt>(sfpi::vFloat(kRoundToInteger));
    sfpi::vFloat result = sfpi::as<sfpi::vFloat>(sfpi::as<sfpi::vInt>(p) + (n_int << 23));
    v_if(x < kLowest) {
        result = 0.0f;
    }
    v_endif;
    v_if(x > kHighest) {
        result = std::numeric_limits<float>::infinity();
    }
    v_endif;
    v_if(x != x) {
        result = x;
    }  // NaN stays NaN
    v_endif;
    return result;
}

// z rounded to the nearest integer (ties to even), as a float and in k_int (|z| < 2^22).
sfpi_inline sfpi::vFloat _sfpu_round_to_nearest_int32_(sfpi::vFloat z, sfpi::vInt& k_int) {
    constexpr float kRoundToInteger = 12582912.0f;  // 1.5 * 2^23
    const sfpi::vFloat shifted = z + kRoundToInteger;
    k_int = sfpi::as<sfpi::vInt>(shifted) - sfpi::as<sfpi::vInt>(sfpi::vFloat(kRoundToInteger));
    return shifted - kRoundToInteger;
}

template <bool is_fp32_dest_acc_en>
sfpi_inline sfpi::vFloat _sfpu_exp_21f_bf16_(sfpi::vFloat val) {
    return emu_exp(val);
}
template <bool is_fp32_dest_acc_en>
sfpi_inline sfpi::vFloat _sfpu_exp_21f_bf16_unsafe_(sfpi::vFloat val) {
    return emu_exp(val);
}
template <bool unsafe = false>
sfpi_inline sfpi::vFloat _sfpu_exp_fp32_accurate_(sfpi::vFloat val) {
    return emu_exp(val);
}
template <bool is_fp32_dest_acc_en>
sfpi_inline sfpi::vFloat _sfpu_exp_accurate_(sfpi::vFloat val) {
    return emu_exp(val);
}
sfpi_inline sfpi::vFloat _sfpu_exp_(sfpi::vFloat val) {
    return emu_exp(val);
}

}  // namespace ckernel::sfpu
