// The Tensix instructions a compute kernel issues itself to hand DST from the MATH thread to the PACK
// thread's SFPU (tt-metal's moe_compute: activation on the packer's SFPU), and the register writes they
// make. The compute context runs the three TRISCs in program order, so each one means its effect on
// DST ownership:
// - TTI_SEMWAIT(..., t6_sem(MATH_PACK), STALL_ON_ZERO): the packer waits until math committed a DST
//   half, what tile_regs_wait() issues: DST passes to the PACK thread.
// - TT_SETC16(DEST_TARGET_REG_CFG_MATH_Offset_ADDR32, packer::get_packer_dest_offset()): the PACK thread's
//   SFPU addresses the DST half the packer holds; without it the PACK thread's SFPU calls are errors.
// - TTI_STALLWAIT(stall, wait): waits for busy units; every unit has finished when the next instruction
//   runs here, so it orders nothing.
// - zeroacc(): ZEROACC of all of DST by the MATH thread (DST must not be held by the packer).
// Any other semaphore wait or configuration register write fails: it is not modelled.
#pragma once

#include <cstdint>

#include "ttnn_moe_emu/kernel_common.h"

namespace ckernel {

struct p_stall {
    static constexpr uint32_t STALL_TDMA = 0x1;
    static constexpr uint32_t STALL_PACK = 0x4;
    static constexpr uint32_t STALL_MATH = 0x8;
    static constexpr uint32_t STALL_CFG = 0x80;
    static constexpr uint32_t WAIT_SFPU = 0x4000;
    static constexpr uint32_t STALL_ON_ZERO = 0x1;
    static constexpr uint32_t STALL_ON_MAX = 0x2;
};

namespace semaphore {
inline constexpr uint32_t MATH_PACK = 1;
constexpr uint32_t t6_sem(uint32_t index) {
    return 1u << index;
}
}  // namespace semaphore

namespace packer {
// The DST row offset of the half the packer holds (0 or DEST_REGISTER_HALF_SIZE).
inline uint32_t get_packer_dest_offset() {
    return ttnn_moe_emu::services->packer_dest_offset();
}
}  // namespace packer

inline void zeroacc() {
    ttnn_moe_emu::services->tensix_instruction(ttnn_moe_emu::TensixInstruction::ZeroAcc, 0, 0, 0);
}

}  // namespace ckernel

// Wormhole's configuration register word of DEST_TARGET_REG_CFG_MATH_Offset (cfg_defines.h).
#define DEST_TARGET_REG_CFG_MATH_Offset_ADDR32 1

#define TTI_SEMWAIT(stall_res, sem_sel, wait_sem_cond)                                                           \
    ttnn_moe_emu::services->tensix_instruction(ttnn_moe_emu::TensixInstruction::SemWait, (stall_res), (sem_sel), \
                                               (wait_sem_cond))
#define TT_SETC16(setc16_reg, setc16_value) \
    ttnn_moe_emu::services->tensix_instruction(ttnn_moe_emu::TensixInstruction::SetC16, (setc16_reg), (setc16_value), 0)
#define TTI_SETC16(setc16_reg, setc16_value) TT_SETC16(setc16_reg, setc16_value)
#define TTI_STALLWAIT(stall_res, wait_res) ((void)(stall_res), (void)(wait_res))
