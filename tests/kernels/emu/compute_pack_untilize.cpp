// conformance: kind=compute named=block_rt:1,block_ct:1,full_ct:1,blocks:1
// Packs tiles of CB 0 as row-major rows into CB 16 with pack_untilize_dest: `blocks` column blocks,
// each block_rt x block_ct tiles (row-major in CB 0) copied to DST 0.. and packed into the columns of
// its block of rows of full_ct tiles. CB 16 is pushed once, holding block_rt * 32 rows.
#include <cstdint>

#include "api/compute/compute_kernel_api.h"
#include "api/compute/pack_untilize.h"
#include "api/compute/tile_move_copy.h"

void kernel_main() {
    constexpr uint32_t block_rt = get_named_compile_time_arg_val("block_rt");
    constexpr uint32_t block_ct = get_named_compile_time_arg_val("block_ct");
    constexpr uint32_t full_ct = get_named_compile_time_arg_val("full_ct");
    constexpr uint32_t blocks = get_named_compile_time_arg_val("blocks");
    constexpr uint32_t block_tiles = block_rt * block_ct;
    constexpr uint32_t out_pages = block_rt * full_ct;  // CB 16 pages are tile-sized
    compute_kernel_hw_startup(0, 16);
    copy_init(0);
    pack_untilize_dest_init<block_ct, full_ct>(16);
    cb_reserve_back(16, out_pages);
    for (uint32_t c = 0; c < blocks; ++c) {
        cb_wait_front(0, block_tiles);
        tile_regs_acquire();
        for (uint32_t i = 0; i < block_tiles; ++i) copy_tile(0, i, i);
        tile_regs_commit();
        tile_regs_wait();
        pack_untilize_dest<block_ct, full_ct>(16, block_rt, c);
        tile_regs_release();
        cb_pop_front(0, block_tiles);
    }
    cb_push_back(16, out_pages);
    pack_untilize_uninit(16);
}
