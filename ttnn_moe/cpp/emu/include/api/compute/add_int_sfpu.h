// Included unconditionally by Tenstorrent's binary_ng SFPU kernels. The SFPU ops this
// header declares in tt-metal are not emulated: a kernel that calls one fails
// to build, naming it (the few declared below fail when called instead).
#pragma once
#include "ttnn_moe_emu/compute_api.h"

namespace ckernel {

// Named by tt-metal's reduce helpers (their Int32 SUM fold): declared so such kernels build, failing when
// called (not emulated).
template <DataFormat data_format>
ALWI void add_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttnn_moe_emu::fail("add_int_tile: not emulated");
}
ALWI void add_int_tile_init() {
    ttnn_moe_emu::fail("add_int_tile_init: not emulated");
}

}  // namespace ckernel
