// tt-metal's binary SFPU call macros (llk_math_eltwise_binary_sfpu_macros.h, 0.81.1 names and arguments) over
// the emulator's LLK layer (ttnn_moe_emu/sfpu_llk.h). The DST indices are checked where the SFPU addresses them.
#pragma once

#include "ttnn_moe_emu/sfpu_llk.h"

#define SFPU_EMU_BINARY_EXPAND(...) __VA_ARGS__

#define SFPU_BINARY_CALL(DST_SYNC, DST_ACCUM, FN, TEMPLATES, DST_IN0, DST_IN1, DST_OUT, VECTOR_MODE, ...)            \
    ::ckernel::_llk_math_eltwise_binary_sfpu_params_(::ckernel::sfpu::FN<SFPU_EMU_BINARY_EXPAND TEMPLATES>, DST_IN0, \
                                                     DST_IN1, DST_OUT, VECTOR_MODE, ##__VA_ARGS__)
#define SFPU_BINARY_CALL_NO_TEMPLATE_ARGS(DST_SYNC, DST_ACCUM, FN, DST_IN0, DST_IN1, DST_OUT, VECTOR_MODE, ...)   \
    ::ckernel::_llk_math_eltwise_binary_sfpu_params_(::ckernel::sfpu::FN, DST_IN0, DST_IN1, DST_OUT, VECTOR_MODE, \
                                                     ##__VA_ARGS__)

#define SFPU_BINARY_INIT(OP) ::ckernel::llk_math_eltwise_binary_sfpu_init<::SfpuType::OP>()
#define SFPU_BINARY_INIT_FN_NO_ARGS(OP, INIT_FN) ::ckernel::llk_math_eltwise_binary_sfpu_init<::SfpuType::OP>(INIT_FN)
#define SFPU_BINARY_INIT_FN(OP, INIT_FN, TEMPLATES) \
    ::ckernel::llk_math_eltwise_binary_sfpu_init<::SfpuType::OP>(INIT_FN<SFPU_EMU_BINARY_EXPAND TEMPLATES>)
#define SFPU_BINARY_INIT_FN_ARGS(OP, INIT_FN, TEMPLATES, ...)                                               \
    ::ckernel::llk_math_eltwise_binary_sfpu_init<::SfpuType::OP>(INIT_FN<SFPU_EMU_BINARY_EXPAND TEMPLATES>, \
                                                                 ##__VA_ARGS__)
