// Included unconditionally by Tenstorrent's eltwise_sfpu.cpp. The SFPU ops this
// header declares in tt-metal are not emulated: a kernel that calls one fails
// to build, naming it.
#pragma once
#include "ttnn_moe_emu/compute_api.h"
