// The part of tt-llk's llk_math_eltwise_unary_sfpu.h the SFPU headers use: the SFPU register setup and the
// LLK call layer (ttnn_moe_emu/sfpu_llk.h).
#pragma once

#include "ttnn_moe_emu/sfpu_llk.h"
