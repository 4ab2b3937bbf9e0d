// moe_compute's SILU activation step as its compute kernel issues it: per step, four DST tiles
// (gate 0, up 0, gate 1, up 1) filled by math, committed, taken by the PACK thread with its own semaphore
// wait, the PACK thread's SFPU pointed at the packer's DST half, then silu on DST 0 and 2 and the SFPU
// multiply 0 * 1 -> 0 and 2 * 3 -> 2, and DST 0 and 2 packed out of order. Here math copies the four tiles
// from cb_in instead of running the matmul.
// Runtime args: steps. cb_out receives 2 tiles per step: silu(gate 0) * up 0, silu(gate 1) * up 1.
#include <cstdint>

#include "api/compute/common.h"
#include "api/compute/compute_kernel_api.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"
#ifdef TRISC_PACK
#include "ckernel_sfpu_binary.h"
#include "ckernel_sfpu_silu.h"
#include "llk_math_eltwise_binary_sfpu_macros.h"
#include "llk_math_eltwise_unary_sfpu_macros.h"
#endif

void kernel_main() {
    const uint32_t steps = get_arg_val<uint32_t>(0);
    constexpr uint32_t cb_in = get_named_compile_time_arg_val("cb_in");
    constexpr uint32_t cb_out = get_named_compile_time_arg_val("cb_out");

    compute_kernel_hw_startup(cb_in, cb_out);
    copy_init(cb_in);
    MATH((ckernel::zeroacc()));
    for (uint32_t step = 0; step < steps; ++step) {
        PACK(SFPU_UNARY_INIT_FN(silu, sfpu::silu_init, (true)));
        cb_wait_front(cb_in, 4);
        tile_regs_acquire();
        for (uint32_t i = 0; i < 4; ++i) copy_tile(cb_in, i, i);
        tile_regs_commit();
        cb_pop_front(cb_in, 4);

        PACK(TTI_SEMWAIT(p_stall::STALL_TDMA | p_stall::STALL_CFG, semaphore::t6_sem(semaphore::MATH_PACK),
                         p_stall::STALL_ON_ZERO));
        PACK(TT_SETC16(DEST_TARGET_REG_CFG_MATH_Offset_ADDR32, ckernel::packer::get_packer_dest_offset()));
        for (uint32_t gate : {0u, 2u}) {
            PACK(SFPU_UNARY_CALL(DST_SYNC_MODE, DST_ACCUM_MODE, calculate_silu, (DST_ACCUM_MODE, 8), gate,
                                 ::ckernel::VectorMode::RC));
        }
        for (uint32_t gate : {0u, 2u}) {
            PACK((SFPU_BINARY_CALL(DST_SYNC_MODE, DST_ACCUM_MODE, calculate_sfpu_binary,
                                   (true, ckernel::BinaryOp::MUL, 8, DST_ACCUM_MODE), gate, gate + 1, gate,
                                   ::ckernel::VectorMode::RC)));
        }
        PACK(TTI_STALLWAIT(p_stall::STALL_PACK, p_stall::WAIT_SFPU));

        cb_reserve_back(cb_out, 2);
        pack_tile<true>(0, cb_out, 0);
        pack_tile<true>(2, cb_out, 1);
        tile_regs_release();
        cb_push_back(cb_out, 2);
    }
}
