// to_layout TILE -> ROW_MAJOR, compute: each `block` tiles of cb_tiles become one strip
// of cb_rows (32 rows x block * 32 elements).
//
// Named compile-time args: cb_tiles, cb_rows. Runtime args: strips, block.
// conformance: kind=compute named=cb_tiles:0,cb_rows:1
#include <cstdint>

#include "api/compute/cb_api.h"
#include "api/compute/common.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/untilize.h"

void kernel_main() {
    constexpr uint32_t cb_tiles = get_named_compile_time_arg_val("cb_tiles");
    constexpr uint32_t cb_rows = get_named_compile_time_arg_val("cb_rows");
    const uint32_t strips = get_arg_val<uint32_t>(0);
    const uint32_t block = get_arg_val<uint32_t>(1);
    compute_kernel_hw_startup(cb_tiles, cb_rows);
    untilize_init(cb_tiles);
    for (uint32_t s = 0; s < strips; ++s) {
        cb_wait_front(cb_tiles, block);
        cb_reserve_back(cb_rows, block);
        untilize_block(cb_tiles, block, cb_rows);
        cb_push_back(cb_rows, block);
        cb_pop_front(cb_tiles, block);
    }
    untilize_uninit(cb_tiles);
}
