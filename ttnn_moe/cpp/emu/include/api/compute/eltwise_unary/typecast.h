// typecast_tile (tt-metal 0.81.1 names): declared so kernels that name it build (tt-metal's reduce
// helpers, on their Int32 path); not emulated, it fails when called.
#pragma once

#include "ttnn_moe_emu/compute_api.h"

namespace ckernel {

template <uint32_t IN_DTYPE, uint32_t OUT_DTYPE>
ALWI void typecast_tile_init() {
    ttnn_moe_emu::fail("typecast_tile_init: typecast is not emulated");
}
template <uint32_t IN_DTYPE, uint32_t OUT_DTYPE, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void typecast_tile(uint32_t idst) {
    ttnn_moe_emu::fail("typecast_tile: typecast is not emulated");
}

}  // namespace ckernel
