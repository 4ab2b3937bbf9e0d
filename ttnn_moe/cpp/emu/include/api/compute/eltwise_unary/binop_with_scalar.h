// SFPU tile-with-scalar ops (tt-metal 0.81.1 names). tt-metal's reduce helpers include this header for
// their post-reduce scaling, which the gate kernels do not reach; the ops are declared so such kernels
// build, and fail when called.
#pragma once

#include "ttnn_moe_emu/compute_api.h"

namespace ckernel {

ALWI void binop_with_scalar_tile_init() {}
#define EMU_SCALAR_OP_NOT_EMULATED(name)                                       \
    template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>                       \
    ALWI void name(uint32_t idst, uint32_t param1) {                           \
        ttnn_moe_emu::fail(#name ": SFPU ops with a scalar are not emulated"); \
    }
EMU_SCALAR_OP_NOT_EMULATED(add_unary_tile)
EMU_SCALAR_OP_NOT_EMULATED(sub_unary_tile)
EMU_SCALAR_OP_NOT_EMULATED(mul_unary_tile)
EMU_SCALAR_OP_NOT_EMULATED(div_unary_tile)
EMU_SCALAR_OP_NOT_EMULATED(rsub_unary_tile)
#undef EMU_SCALAR_OP_NOT_EMULATED

}  // namespace ckernel
