// moe_gate: a token row tile of x into cb_x, read by a writer kernel (NOC 0) while the reader streams
// the gate weight over NOC 1. Pushed in blocks of inner_block tiles along H, so the compute kernel
// starts on the first block; the whole row tile stays in cb_x while it is scored.
#pragma once

#include <cstdint>

#include "api/dataflow/dataflow_api.h"

namespace moe_gate {

template <typename Tensor>
void read_x_row_tile(uint32_t cb_x, const Tensor& x, uint32_t row_tile, uint32_t inner_tiles, uint32_t inner_block) {
    const uint32_t tile_bytes = get_tile_size(cb_x);
    for (uint32_t k0 = 0; k0 < inner_tiles; k0 += inner_block) {
        cb_reserve_back(cb_x, inner_block);
        const uint32_t l1 = get_write_ptr(cb_x);
        for (uint32_t j = 0; j < inner_block; ++j) {
            noc_async_read(x.get_noc_addr(row_tile * inner_tiles + k0 + j), l1 + j * tile_bytes, tile_bytes);
        }
        noc_async_read_barrier();
        cb_push_back(cb_x, inner_block);
    }
}

}  // namespace moe_gate
