// Raw SFPU instructions (TTI_SFP* / TT_SFP*, replay buffers, the Dst counter instructions) and the operand names
// they take, as tt-metal's hand-scheduled SFPU code (moe_gate_mm's top-k networks, the fast approximate exp) is
// written. The emulator runs sfpi code, not Tensix instruction streams: these are declared so that such kernels
// build, and each fails when executed, naming the instruction.
#pragma once

#include <cstdint>

#include "ttnn_moe_emu/kernel_common.h"
#include "ttnn_moe_emu/sfpu_llk.h"

namespace ckernel {

namespace emu_raw {
[[noreturn]] inline int unsupported(const char* instruction) {
    ttnn_moe_emu::fail((std::string("raw SFPU instruction ") + instruction +
                        " is not emulated (the emulator runs sfpi code, not Tensix instruction sequences)")
                           .c_str());
}
}  // namespace emu_raw

// LReg operands of the raw instructions (Wormhole: LREG0-7 general, 8-15 constants).
struct p_sfpu {
    static constexpr uint32_t LREG0 = 0, LREG1 = 1, LREG2 = 2, LREG3 = 3, LREG4 = 4, LREG5 = 5, LREG6 = 6, LREG7 = 7;
    static constexpr uint32_t LCONST_0_8373 = 8, LCONST_0 = 9, LCONST_1 = 10, LREG11 = 11, LREG12 = 12, LREG13 = 13,
                              LREG14 = 14, LREG15 = 15, LCONST_neg1 = 11;
    static constexpr uint32_t kCONST_1_FP16B = 0x3F80;
};
// SFPLOAD / SFPSTORE data formats.
enum class InstrModLoadStore : uint32_t {
    DEFAULT = 0,
    FP16A = 1,
    FP16B = 2,
    FP32 = 3,
    INT32 = 4,
    INT8 = 5,
    LO16 = 6,
    HI16 = 7,
    INT32_2S_COMP = 12,
    INT8_2S_COMP = 13,
    LO16_ONLY = 14,
    HI16_ONLY = 15
};

}  // namespace ckernel

namespace sfpi {
// Instruction modifier operands of the raw SFPU instructions.
inline constexpr uint32_t SFPLOADI_MOD0_FLOATB = 0, SFPLOADI_MOD0_FLOATA = 1, SFPLOADI_MOD0_USHORT = 2,
                          SFPLOADI_MOD0_SHORT = 4, SFPLOADI_MOD0_UPPER = 8, SFPLOADI_MOD0_LOWER = 10;
inline constexpr uint32_t SFPIADD_MOD1_ARG_LREG_DST = 0, SFPIADD_MOD1_ARG_IMM = 1, SFPIADD_MOD1_ARG_2SCOMP_LREG_DST = 2,
                          SFPIADD_MOD1_CC_LT0 = 0, SFPIADD_MOD1_CC_NONE = 4, SFPIADD_MOD1_CC_GTE0 = 8;
inline constexpr uint32_t SFPSETCC_MOD1_LREG_LT0 = 0, SFPSETCC_MOD1_IMM_BIT0 = 1, SFPSETCC_MOD1_LREG_NE0 = 2,
                          SFPSETCC_MOD1_LREG_GTE0 = 4, SFPSETCC_MOD1_LREG_EQ0 = 6;
inline constexpr uint32_t SFPSHFT2_MOD1_COPY4 = 0, SFPSHFT2_MOD1_SUBVEC_CHAINED_COPY4 = 1,
                          SFPSHFT2_MOD1_SUBVEC_SHFLROR1_AND_COPY4 = 2, SFPSHFT2_MOD1_SUBVEC_SHFLROR1 = 3,
                          SFPSHFT2_MOD1_SUBVEC_SHFLSHR1 = 4, SFPSHFT2_MOD1_SHFT_LREG = 5, SFPSHFT2_MOD1_SHFT_IMM = 6;
inline constexpr uint32_t SFPSWAP_MOD1_SWAP = 0, SFPSWAP_MOD1_VEC_MIN_MAX = 1;
inline constexpr uint32_t SFPEXMAN_MOD1_PAD8 = 0, SFPEXMAN_MOD1_PAD9 = 1;
inline constexpr uint32_t SFPCAST_MOD1_INT32_TO_FP32_RNE = 0;
inline constexpr uint32_t SFPSTOCHRND_MOD1_FP32_TO_UINT16 = 6, SFPSTOCHRND_MOD1_FP32_TO_INT16 = 7;
inline constexpr uint32_t SFPSETEXP_MOD1_ARG_EXPONENT = 2;
}  // namespace sfpi

// Replay buffers: recording and replaying instruction sequences.
namespace lltt {
enum ExecBool : bool { NoExec = false, Exec = true };
template <ExecBool exec = NoExec>
inline void record(uint32_t, uint32_t) {
    ::ckernel::emu_raw::unsupported("lltt::record (replay buffer)");
}
inline void replay(uint32_t, uint32_t) {
    ::ckernel::emu_raw::unsupported("lltt::replay (replay buffer)");
}
}  // namespace lltt

#define TTNN_MOE_EMU_RAW(name) ::ckernel::emu_raw::unsupported(#name)
#define TTI_SFPLOAD(...) TTNN_MOE_EMU_RAW(SFPLOAD)
#define TT_SFPLOAD(...) TTNN_MOE_EMU_RAW(SFPLOAD)
#define TTI_SFPSTORE(...) TTNN_MOE_EMU_RAW(SFPSTORE)
#define TT_SFPSTORE(...) TTNN_MOE_EMU_RAW(SFPSTORE)
#define TTI_SFPLOADI(...) TTNN_MOE_EMU_RAW(SFPLOADI)
#define TT_SFPLOADI(...) TTNN_MOE_EMU_RAW(SFPLOADI)
#define TTI_SFPLOADMACRO(...) TTNN_MOE_EMU_RAW(SFPLOADMACRO)
#define TTI_SFPMAD(...) TTNN_MOE_EMU_RAW(SFPMAD)
#define TTI_SFPADD(...) TTNN_MOE_EMU_RAW(SFPADD)
#define TTI_SFPMUL(...) TTNN_MOE_EMU_RAW(SFPMUL)
#define TTI_SFPMULI(...) TTNN_MOE_EMU_RAW(SFPMULI)
#define TTI_SFPADDI(...) TTNN_MOE_EMU_RAW(SFPADDI)
#define TTI_SFPIADD(...) TTNN_MOE_EMU_RAW(SFPIADD)
#define TT_SFPIADD(...) TTNN_MOE_EMU_RAW(SFPIADD)
#define TTI_SFPMOV(...) TTNN_MOE_EMU_RAW(SFPMOV)
#define TTI_SFPSWAP(...) TTNN_MOE_EMU_RAW(SFPSWAP)
#define TTI_SFPTRANSP(...) TTNN_MOE_EMU_RAW(SFPTRANSP)
#define TTI_SFPSHFT(...) TTNN_MOE_EMU_RAW(SFPSHFT)
#define TTI_SFPSHFT2(...) TTNN_MOE_EMU_RAW(SFPSHFT2)
#define TTI_SFPAND(...) TTNN_MOE_EMU_RAW(SFPAND)
#define TTI_SFPOR(...) TTNN_MOE_EMU_RAW(SFPOR)
#define TTI_SFPXOR(...) TTNN_MOE_EMU_RAW(SFPXOR)
#define TTI_SFPNOT(...) TTNN_MOE_EMU_RAW(SFPNOT)
#define TTI_SFPENCC(...) TTNN_MOE_EMU_RAW(SFPENCC)
#define TTI_SFPSETCC(...) TTNN_MOE_EMU_RAW(SFPSETCC)
#define TTI_SFPPUSHC(...) TTNN_MOE_EMU_RAW(SFPPUSHC)
#define TTI_SFPPOPC(...) TTNN_MOE_EMU_RAW(SFPPOPC)
#define TTI_SFPCOMPC(...) TTNN_MOE_EMU_RAW(SFPCOMPC)
#define TTI_SFPEXEXP(...) TTNN_MOE_EMU_RAW(SFPEXEXP)
#define TTI_SFPEXMAN(...) TTNN_MOE_EMU_RAW(SFPEXMAN)
#define TTI_SFPSETEXP(...) TTNN_MOE_EMU_RAW(SFPSETEXP)
#define TTI_SFPSETMAN(...) TTNN_MOE_EMU_RAW(SFPSETMAN)
#define TTI_SFPSETSGN(...) TTNN_MOE_EMU_RAW(SFPSETSGN)
#define TTI_SFPABS(...) TTNN_MOE_EMU_RAW(SFPABS)
#define TTI_SFPLZ(...) TTNN_MOE_EMU_RAW(SFPLZ)
#define TTI_SFPCAST(...) TTNN_MOE_EMU_RAW(SFPCAST)
#define TTI_SFP_STOCH_RND(...) TTNN_MOE_EMU_RAW(SFP_STOCH_RND)
#define TTI_SFPCONFIG(...) TTNN_MOE_EMU_RAW(SFPCONFIG)
#define TTI_SFPLUT(...) TTNN_MOE_EMU_RAW(SFPLUT)
#define TTI_SFPNOP TTNN_MOE_EMU_RAW(SFPNOP)
#define TTI_NOP TTNN_MOE_EMU_RAW(NOP)
#define TTI_REPLAY(...) TTNN_MOE_EMU_RAW(REPLAY)
#define TTI_SETRWC(...) TTNN_MOE_EMU_RAW(SETRWC)
#define TTI_INCRWC(...) TTNN_MOE_EMU_RAW(INCRWC)
