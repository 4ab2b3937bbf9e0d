// The part of tt-llk's cmath_common.h the SFPU headers use (math::reset_counters, p_setrwc), from the
// emulator's LLK layer (ttnn_moe_emu/sfpu_llk.h).
#pragma once

#include "ttnn_moe_emu/sfpu_llk.h"
