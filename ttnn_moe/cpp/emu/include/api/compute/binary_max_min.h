// Included unconditionally by Tenstorrent's binary_ng SFPU kernels. The SFPU ops this
// header declares in tt-metal are not emulated: a kernel that calls one fails
// to build, naming it (the few declared below fail when called instead).
#pragma once
#include "ttnn_moe_emu/compute_api.h"

namespace ckernel {

// The ops tt-metal's reduce helpers name for their SFPU MAX / MIN folds: declared so such kernels build,
// failing when called (not emulated).
#define EMU_SFPU_BINARY_NOT_EMULATED(name)                          \
    ALWI void name(uint32_t idst0, uint32_t idst1, uint32_t odst) { \
        ttnn_moe_emu::fail(#name ": not emulated");                 \
    }                                                               \
    ALWI void name##_init() {                                       \
        ttnn_moe_emu::fail(#name "_init: not emulated");            \
    }
EMU_SFPU_BINARY_NOT_EMULATED(binary_max_tile)
EMU_SFPU_BINARY_NOT_EMULATED(binary_min_tile)
EMU_SFPU_BINARY_NOT_EMULATED(binary_max_int32_tile)
EMU_SFPU_BINARY_NOT_EMULATED(binary_min_int32_tile)
EMU_SFPU_BINARY_NOT_EMULATED(binary_max_uint32_tile)
EMU_SFPU_BINARY_NOT_EMULATED(binary_min_uint32_tile)
#undef EMU_SFPU_BINARY_NOT_EMULATED

}  // namespace ckernel
