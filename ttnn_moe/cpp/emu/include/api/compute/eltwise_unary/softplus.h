// Included by Tenstorrent's matmul activation helper (bmm_fused_activation.hpp). The SFPU ops this
// header declares in tt-metal are not emulated unless listed in ttnn_moe_emu/compute_api.h: a kernel
// that calls one fails to build, naming it.
#pragma once
#include "ttnn_moe_emu/compute_api.h"
