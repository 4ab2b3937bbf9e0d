// conformance: kind=compute named=cb_in:0,cb_out:16 defines=ACTIVATION=0;CLAMP_LIMIT=7.0f label=silu
// conformance: kind=compute named=cb_in:0,cb_out:16 defines=ACTIVATION=1;CLAMP_LIMIT=7.0f label=swiglu
// moe_compute's activation step as its compute kernel issues it: per step, four DST tiles (gate 0, up 0,
// gate 1, up 1) filled by math, committed, taken by the PACK thread with its own semaphore wait, the PACK
// thread's SFPU pointed at the packer's DST half, then the activation of each (gate, up) pair into DST 0 and 2,
// and DST 0 and 2 packed out of order. Here math copies the four tiles from cb_in instead of running the matmul.
// ACTIVATION (moe_compute's MoEActivationFunction): 0 SILU (silu on DST 0 and 2, then the SFPU multiply
// 0 * 1 -> 0 and 2 * 3 -> 2), 1 SWIGLU (moe_gpt's, GPT-OSS constants), 2 GELU (gelu re-initialised every step,
// then the multiply), 3 CLAMPED_SILU (swiglu with alpha 1, CLAMP_LIMIT, no up bias).
// Runtime args: steps. cb_out receives 2 tiles per step: act(gate 0, up 0), act(gate 1, up 1).
#include <cstdint>

#include "api/compute/common.h"
#include "api/compute/compute_kernel_api.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"
#ifdef TRISC_PACK
#include "ckernel_sfpu_binary.h"
#include "ckernel_sfpu_gelu.h"
#include "ckernel_sfpu_silu.h"
#include "llk_math_eltwise_binary_sfpu_macros.h"
#include "llk_math_eltwise_unary_sfpu_macros.h"
#include "ttnn/cpp/ttnn/operations/experimental/ccl/moe_gpt/device/kernels/swiglu_sfpu.h"
#endif

struct ClampedSiluConfig {
    static constexpr float alpha = 1.0f;
    static constexpr float clamp_limit = CLAMP_LIMIT;
};

// The SFPU multiply of moe_compute's SILU and GELU steps: DST[gate] *= DST[gate + 1].
inline void multiply_by_up(uint32_t gate) {
    PACK((SFPU_BINARY_CALL(DST_SYNC_MODE, DST_ACCUM_MODE, calculate_sfpu_binary,
                           (true, ckernel::BinaryOp::MUL, 8, DST_ACCUM_MODE), gate, gate + 1, gate,
                           ::ckernel::VectorMode::RC)));
}

inline void activation(uint32_t gate) {
    if constexpr (ACTIVATION == 0) {
        PACK(SFPU_UNARY_CALL(DST_SYNC_MODE, DST_ACCUM_MODE, calculate_silu, (DST_ACCUM_MODE, 8), gate,
                             ::ckernel::VectorMode::RC));
        multiply_by_up(gate);
    } else if constexpr (ACTIVATION == 1) {
        PACK((llk_math_eltwise_binary_sfpu_swiglu<DST_ACCUM_MODE>(gate, gate + 1, gate)));
    } else if constexpr (ACTIVATION == 2) {
        PACK((llk_math_eltwise_unary_sfpu_init<SfpuType::gelu>(ckernel::sfpu::gelu_init<true, DST_ACCUM_MODE>)));
        PACK(SFPU_UNARY_CALL(DST_SYNC_MODE, DST_ACCUM_MODE, calculate_gelu, (true, DST_ACCUM_MODE, 8), gate,
                             ::ckernel::VectorMode::RC));
        multiply_by_up(gate);
    } else {
        PACK((llk_math_eltwise_binary_sfpu_swiglu<DST_ACCUM_MODE, ClampedSiluConfig, false>(gate, gate + 1, gate)));
    }
}

void kernel_main() {
    const uint32_t steps = get_arg_val<uint32_t>(0);
    constexpr uint32_t cb_in = get_named_compile_time_arg_val("cb_in");
    constexpr uint32_t cb_out = get_named_compile_time_arg_val("cb_out");

    compute_kernel_hw_startup(cb_in, cb_out);
    copy_init(cb_in);
    MATH((ckernel::zeroacc()));
    for (uint32_t step = 0; step < steps; ++step) {
        if constexpr (ACTIVATION == 0) {
            PACK(SFPU_UNARY_INIT_FN(silu, sfpu::silu_init, (true)));
        } else if constexpr (ACTIVATION != 2) {
            PACK((llk_math_eltwise_binary_sfpu_swiglu_init()));
        }
        cb_wait_front(cb_in, 4);
        tile_regs_acquire();
        for (uint32_t i = 0; i < 4; ++i) copy_tile(cb_in, i, i);
        tile_regs_commit();
        cb_pop_front(cb_in, 4);

        PACK(TTI_SEMWAIT(p_stall::STALL_TDMA | p_stall::STALL_CFG, semaphore::t6_sem(semaphore::MATH_PACK),
                         p_stall::STALL_ON_ZERO));
        PACK(TT_SETC16(DEST_TARGET_REG_CFG_MATH_Offset_ADDR32, ckernel::packer::get_packer_dest_offset()));
        activation(0);
        activation(2);
        PACK(TTI_STALLWAIT(p_stall::STALL_PACK, p_stall::WAIT_SFPU));

        cb_reserve_back(cb_out, 2);
        pack_tile<true>(0, cb_out, 0);
        pack_tile<true>(2, cb_out, 1);
        tile_regs_release();
        cb_push_back(cb_out, 2);
    }
}
