// to_layout ROW_MAJOR -> TILE, compute: each strip of cb_rows (32 rows x block * 32
// elements) becomes `block` tiles in cb_tiles.
//
// Named compile-time args: cb_rows, cb_tiles. Runtime args: strips, block.
// conformance: kind=compute named=cb_rows:0,cb_tiles:1
#include <cstdint>

#include "api/compute/cb_api.h"
#include "api/compute/common.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tilize.h"

void kernel_main() {
    constexpr uint32_t cb_rows = get_named_compile_time_arg_val("cb_rows");
    constexpr uint32_t cb_tiles = get_named_compile_time_arg_val("cb_tiles");
    const uint32_t strips = get_arg_val<uint32_t>(0);
    const uint32_t block = get_arg_val<uint32_t>(1);
    compute_kernel_hw_startup(cb_rows, cb_tiles);
    tilize_init(cb_rows, block, cb_tiles);
    for (uint32_t s = 0; s < strips; ++s) {
        cb_wait_front(cb_rows, block);
        cb_reserve_back(cb_tiles, block);
        tilize_block(cb_rows, block, cb_tiles);
        cb_push_back(cb_tiles, block);
        cb_pop_front(cb_rows, block);
    }
    tilize_uninit(cb_rows, cb_tiles);
}
