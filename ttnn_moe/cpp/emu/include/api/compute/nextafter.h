// Included unconditionally by Tenstorrent's binary_ng SFPU kernels. The SFPU ops this
// header declares in tt-metal are not emulated: a kernel that calls one fails
// to build, naming it.
#pragma once
#include "ttnn_moe_emu/compute_api.h"
