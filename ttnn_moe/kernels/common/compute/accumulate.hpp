// Compute helpers shared by the kernels that sum rows in a fixed order with an fp32
// accumulator CB (local_reduce_moe_output, all_to_all_combine_dense).
#pragma once

#include <cstdint>

#include "api/compute/cb_api.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/pack.h"
#include "api/compute/reconfig_data_format.h"
#include "api/compute/reg_api.h"

namespace moe_compute {

// DST[0] -> one tile of `cb` (reserve, pack, push).
inline void pack_dst0_to(uint32_t cb) {
    tile_regs_commit();
    cb_reserve_back(cb, 1);
    tile_regs_wait();
    pack_reconfig_data_format(cb);
    pack_tile(0, cb);
    tile_regs_release();
    cb_push_back(cb, 1);
}

// Front tile of `cb_acc` + front tile of `cb_next` -> one tile of `cb_dst`; pops both inputs.
inline void add_front_tiles_to(uint32_t cb_acc, uint32_t cb_next, uint32_t cb_dst) {
    cb_wait_front(cb_acc, 1);
    cb_wait_front(cb_next, 1);
    reconfig_data_format(cb_acc, cb_next);
    add_init(cb_acc, cb_next);
    tile_regs_acquire();
    add_tiles(cb_acc, cb_next, 0, 0, 0);
    cb_pop_front(cb_acc, 1);
    cb_pop_front(cb_next, 1);
    pack_dst0_to(cb_dst);
}

}  // namespace moe_compute
