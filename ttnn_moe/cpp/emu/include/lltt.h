// The replay-buffer helpers of Tenstorrent's SFPI toolchain (lltt::record / replay): raw instruction streams,
// declared so that kernels using them build, failing when executed (ttnn_moe_emu/sfpu_raw.h).
#pragma once
#include "ttnn_moe_emu/sfpu_raw.h"
