// The SFPU binary ops of tt-metal's Wormhole ckernel_sfpu_binary.h (calculate_sfpu_binary and its init) with
// the same names, template arguments and meaning, written for the emulator: the wheel's header pulls in the
// log and power kernels (and through the exp header, raw SFPU code). Emulated: ADD, SUB, MUL, RSUB and DIV,
// each lane in fp32 (DIV as in0 times the reciprocal of in1, x/0 = +-inf, 0/0 = NaN); the result is stored as
// computed (a 16-bit DST truncates it) unless DstRoundingMode::NearestEven asks for software rounding of
// ADD / SUB / RSUB. The other BinaryOps fail to build.
#pragma once

#include <cstdint>
#include <limits>

#include "ckernel_defs.h"
#include "ckernel_sfpu_recip.h"
#include "sfpi.h"

namespace ckernel::sfpu {

template <bool APPROXIMATION_MODE, BinaryOp BINOP, int ITERATIONS, bool is_fp32_dest_acc_en,
          DstRoundingMode dst_rounding_mode = DstRoundingMode::Default>
inline void calculate_sfpu_binary(const std::uint32_t dst_index_in0, const std::uint32_t dst_index_in1,
                                  const std::uint32_t dst_index_out) {
    static_assert(BINOP == BinaryOp::ADD || BINOP == BinaryOp::SUB || BINOP == BinaryOp::MUL ||
                      BINOP == BinaryOp::RSUB || BINOP == BinaryOp::DIV,
                  "calculate_sfpu_binary: only ADD, SUB, MUL, RSUB and DIV are emulated");
    constexpr std::uint32_t dst_tile_size_sfpi = 32;  // DST rows per tile / SFP_DESTREG_STRIDE
    for (int d = 0; d < ITERATIONS; d++) {
        const sfpi::vFloat in0 = sfpi::dst_reg[dst_index_in0 * dst_tile_size_sfpi];
        const sfpi::vFloat in1 = sfpi::dst_reg[dst_index_in1 * dst_tile_size_sfpi];
        sfpi::vFloat result;
        if constexpr (BINOP == BinaryOp::ADD) {
            result = in0 + in1;
        } else if constexpr (BINOP == BinaryOp::SUB) {
            result = in0 - in1;
        } else if constexpr (BINOP == BinaryOp::RSUB) {
            result = in1 - in0;
        } else if constexpr (BINOP == BinaryOp::MUL) {
            result = in0 * in1;
        } else {
            result = in0 * sfpu_reciprocal_iter<2>(in1);
            v_if(in1 == 0.0f) {
                v_if(in0 == 0.0f) {
                    result = std::numeric_limits<float>::quiet_NaN();
                }
                v_else {
                    result = sfpi::copysgn(std::numeric_limits<float>::infinity(), in0 * in1);
                }
                v_endif;
            }
            v_endif;
        }
        if constexpr (BINOP != BinaryOp::MUL && BINOP != BinaryOp::DIV && !is_fp32_dest_acc_en &&
                      dst_rounding_mode == DstRoundingMode::NearestEven) {
            result = sfpi::convert<sfpi::vFloat16b>(result, sfpi::RoundMode::Nearest);
        }
        sfpi::dst_reg[dst_index_out * dst_tile_size_sfpi] = result;
        sfpi::dst_reg++;
    }
}

template <bool APPROXIMATION_MODE, BinaryOp BINOP>
inline void sfpu_binary_init() {
    if constexpr (BINOP == BinaryOp::DIV) sfpu_reciprocal_init<false>();
}

}  // namespace ckernel::sfpu
