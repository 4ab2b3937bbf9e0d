// copy_dest_values: DST tile idst_in copied to idst_out by the SFPU (tt-metal's copy_dest_values.h names), through
// the emulator's LLK SFPU call. The wheel's LLK moves the raw bits with SFPLOAD/SFPSTORE instructions; here the
// sfpi lanes carry them, exact for float tiles in either DST mode. DST tiles holding integer bits are not
// emulated (the SFPU call reports them).
#pragma once
#include "ttnn_moe_emu/compute_api.h"
#include "ttnn_moe_emu/sfpu_llk.h"

namespace ckernel {

namespace sfpu {
template <int ITERATIONS = 8>
inline void emu_copy_dest_value(uint32_t dst_index_in, uint32_t dst_index_out, uint32_t) {
    constexpr uint32_t dst_tile_size_sfpi = 32;
    for (int d = 0; d < ITERATIONS; d++) {
        sfpi::dst_reg[dst_index_out * dst_tile_size_sfpi] =
            sfpi::vFloat(sfpi::dst_reg[dst_index_in * dst_tile_size_sfpi]);
        sfpi::dst_reg++;
    }
}
}  // namespace sfpu

template <DataFormat DATA_FORMAT>
ALWI void copy_dest_values(uint32_t idst_in, uint32_t idst_out) {
    MATH((_llk_math_eltwise_binary_sfpu_params_(sfpu::emu_copy_dest_value<8>, idst_in, idst_out, 0, VectorMode::RC)));
}
ALWI void copy_dest_values(uint32_t idst_in, uint32_t idst_out) {
    MATH((_llk_math_eltwise_binary_sfpu_params_(sfpu::emu_copy_dest_value<8>, idst_in, idst_out, 0, VectorMode::RC)));
}
ALWI void copy_dest_values_init() {}

}  // namespace ckernel
