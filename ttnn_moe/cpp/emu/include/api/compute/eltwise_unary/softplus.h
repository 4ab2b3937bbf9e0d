// softplus_tile: tt-metal's Wormhole SFPU softplus (ckernel_sfpu_softplus.h from the wheel, sfpi code run on the
// emulator's sfpi) through the LLK SFPU call, on the MATH thread. beta, 1 / beta and the threshold are fp32 bits.
// Needs the wheel's SFPU kernels on the kernel include path (ttnn_moe.emu.ttmetal.use_wheel); without them the
// header declares nothing (a call fails to build).
#pragma once
#include "ttnn_moe_emu/compute_api.h"

#if __has_include("ckernel_sfpu_softplus.h")
#include "ckernel_sfpu_softplus.h"
#include "llk_math_eltwise_unary_sfpu_macros.h"

namespace ckernel {

ALWI void softplus_tile_init() {
    MATH(SFPU_UNARY_INIT(softplus));
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void softplus_tile(uint32_t idst, uint32_t beta, uint32_t beta_reciprocal, uint32_t threshold) {
    MATH(SFPU_UNARY_CALL(DST_SYNC_MODE, is_fp32_dest_acc_en, calculate_softplus, (APPROX, is_fp32_dest_acc_en), idst,
                         VectorMode::RC, beta, beta_reciprocal, threshold));
}

}  // namespace ckernel
#endif
