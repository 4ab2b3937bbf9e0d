// tt-metal's approximate sigmoid (ckernel_sfpu_sigmoid_appx.h) is a piecewise-linear SFPLUT table, which
// the emulated vector unit does not have: declared for ckernel_sfpu_sigmoid.h, failing when called.
#pragma once

#include "ttnn_moe_emu/sfpu_llk.h"

namespace ckernel::sfpu {

template <int ITERATIONS = 8>
inline void calculate_sigmoid_appx() {
    ttnn_moe_emu::fail("the approximate sigmoid (SFPLUT table) is not emulated");
}
inline void sigmoid_appx_init() {
    ttnn_moe_emu::fail("the approximate sigmoid (SFPLUT table) is not emulated");
}

}  // namespace ckernel::sfpu
