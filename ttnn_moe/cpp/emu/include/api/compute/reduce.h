// reduce_init / reduce_tile / reduce_uninit (tt-metal 0.81.1 names). SUM and AVG reduce with the weights
// of the scaler tile's row 0 (the kernel helpers write 1/N there for AVG, 1 for SUM, 0 past the valid
// elements); MAX and MIN are not emulated.
#pragma once

#include "ttnn_moe_emu/compute_api.h"

namespace ckernel {

namespace emu_detail {
template <PoolType reduce_type>
ALWI void require_weighted_pool() {
    if constexpr (reduce_type != PoolType::SUM && reduce_type != PoolType::AVG) {
        ttnn_moe_emu::fail("reduce with PoolType MAX or MIN is not emulated (SUM and AVG are)");
    }
}
}  // namespace emu_detail

template <PoolType reduce_type, ReduceDim reduce_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void reduce_init(uint32_t icb, uint32_t icb_scaler, uint32_t ocb, uint32_t call_line = __builtin_LINE()) {
    emu_detail::require_weighted_pool<reduce_type>();
}
ALWI void reduce_uninit(uint32_t icb = 0) {}

template <PoolType reduce_type, ReduceDim reduce_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void reduce_tile(uint32_t icb, uint32_t icb_scaler, uint32_t itile, uint32_t itile_scaler, uint32_t idst) {
    emu_detail::require_weighted_pool<reduce_type>();
    emu_detail::svc().reduce_tile(static_cast<uint32_t>(reduce_dim), icb, icb_scaler, itile, itile_scaler, idst);
}

template <PoolType reduce_type, ReduceDim reduce_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void reduce_block(uint32_t icb, uint32_t icb_scaler, uint32_t start_itile, uint32_t itile_scaler,
                       uint32_t start_idst, uint32_t ntiles) {
    for (uint32_t i = 0; i < ntiles; ++i)
        reduce_tile<reduce_type, reduce_dim>(icb, icb_scaler, start_itile + i, itile_scaler, start_idst + i);
}

// The SFPU reduce (compute_kernel_api.h), which tt-metal's reduce helpers take for Int32 and fp32-accurate
// inputs: declared so they build, failing when called (not emulated).
template <PoolType pool_type, DataFormat format, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sfpu_reduce_init() {
    ttnn_moe_emu::fail("sfpu_reduce_init: the SFPU reduce is not emulated");
}
template <PoolType pool_type, DataFormat format, ReduceDim reduce_dim = ReduceDim::REDUCE_COL,
          bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sfpu_reduce(uint32_t idst, uint32_t ct_dim = 1, uint32_t rt_dim = 1) {
    ttnn_moe_emu::fail("sfpu_reduce: the SFPU reduce is not emulated");
}

}  // namespace ckernel
