// The emulator implements the compute API in one header (see ttnn_moe_emu/compute_api.h).
#pragma once
#include "ttnn_moe_emu/compute_api.h"

namespace ckernel {

// Named by tt-metal's reduce helpers (their fp32 SUM fold): declared so such kernels build, failing when
// called (not emulated; mul_binary_tile is).
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttnn_moe_emu::fail("add_binary_tile: not emulated");
}
ALWI void add_binary_tile_init() {
    ttnn_moe_emu::fail("add_binary_tile_init: not emulated");
}

}  // namespace ckernel
