// tt-metal's SFPU call macros (llk_math_eltwise_unary_sfpu_macros.h, 0.81.1 names and arguments) over the
// emulator's LLK layer (ttnn_moe_emu/sfpu_llk.h). DST_SYNC and DST_ACCUM are the build's; the DST index is
// checked where the SFPU addresses it.
#pragma once

#include "ttnn_moe_emu/sfpu_llk.h"

#define SFPU_EMU_EXPAND(...) __VA_ARGS__

#define SFPU_UNARY_CALL(DST_SYNC, DST_ACCUM, FN, TEMPLATES, DST_IDX, VECTOR_MODE, ...)                       \
    ::ckernel::_llk_math_eltwise_unary_sfpu_params_(::ckernel::sfpu::FN<SFPU_EMU_EXPAND TEMPLATES>, DST_IDX, \
                                                    VECTOR_MODE, ##__VA_ARGS__)
#define SFPU_UNARY_CALL_NO_TEMPLATE_ARGS(DST_SYNC, DST_ACCUM, FN, DST_IDX, VECTOR_MODE, ...) \
    ::ckernel::_llk_math_eltwise_unary_sfpu_params_(::ckernel::sfpu::FN, DST_IDX, VECTOR_MODE, ##__VA_ARGS__)

#define SFPU_UNARY_INIT(OP) ::ckernel::llk_math_eltwise_unary_sfpu_init<::SfpuType::OP>()
#define SFPU_UNARY_INIT_FN(OP, INIT_FN, TEMPLATES) \
    ::ckernel::llk_math_eltwise_unary_sfpu_init<::SfpuType::OP>(INIT_FN<SFPU_EMU_EXPAND TEMPLATES>)
#define SFPU_UNARY_INIT_FN_ARGS(OP, INIT_FN, TEMPLATES, ...) \
    ::ckernel::llk_math_eltwise_unary_sfpu_init<::SfpuType::OP>(INIT_FN<SFPU_EMU_EXPAND TEMPLATES>, ##__VA_ARGS__)
