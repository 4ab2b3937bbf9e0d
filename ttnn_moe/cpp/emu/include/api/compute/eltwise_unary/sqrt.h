// sqrt_tile: tt-metal's Wormhole SFPU square root (ckernel_sfpu_sqrt.h from the wheel, sfpi code run on the
// emulator's sfpi) through the LLK SFPU call, on the MATH thread. Needs the wheel's SFPU kernels on the kernel
// include path (ttnn_moe.emu.ttmetal.use_wheel); without them the header declares nothing (a call fails to build).
#pragma once
#include "ttnn_moe_emu/compute_api.h"

#if __has_include("ckernel_sfpu_sqrt.h")
#include "ckernel_sfpu_sqrt.h"
#include "llk_math_eltwise_unary_sfpu_macros.h"

namespace ckernel {

ALWI void sqrt_tile_init() {
    MATH(SFPU_UNARY_INIT_FN(sqrt, sfpu::sqrt_init, (APPROX)));
}
template <bool FAST_APPROX = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sqrt_tile(uint32_t idst) {
    MATH(SFPU_UNARY_CALL(DST_SYNC_MODE, is_fp32_dest_acc_en, calculate_sqrt,
                         (APPROX, 8, is_fp32_dest_acc_en, FAST_APPROX), idst, VectorMode::RC));
}

}  // namespace ckernel
#endif
