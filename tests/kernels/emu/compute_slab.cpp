// conformance: kind=compute named=in_tiles:1,aux_tiles:0,out_tiles:1,out_index_tiles:0 defines=OPS=copy_tile(0,0,0)
// One DST section over "in_tiles" tiles of CB 0 and "aux_tiles" tiles of CB 1 (index tiles, or a reduce
// scaler): the OPS define loads DST and runs the ops under test, then DST 0.. packs to CB 16 ("out_tiles"
// tiles) and DST 2.. to CB 17 ("out_index_tiles").
#include <cstdint>

#include "api/compute/compute_kernel_api.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/pack.h"
#include "api/compute/reduce.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/topk.h"
#include "api/compute/transpose.h"

void kernel_main() {
    constexpr uint32_t in_tiles = get_named_compile_time_arg_val("in_tiles");
    constexpr uint32_t aux_tiles = get_named_compile_time_arg_val("aux_tiles");
    constexpr uint32_t out_tiles = get_named_compile_time_arg_val("out_tiles");
    constexpr uint32_t out_index_tiles = get_named_compile_time_arg_val("out_index_tiles");
    compute_kernel_hw_startup(0, 1, 16);
    cb_wait_front(0, in_tiles);
    if constexpr (aux_tiles > 0) cb_wait_front(1, aux_tiles);
    tile_regs_acquire();
    OPS;
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(16, out_tiles);
    for (uint32_t i = 0; i < out_tiles; ++i) pack_tile(i, 16);
    cb_push_back(16, out_tiles);
    if constexpr (out_index_tiles > 0) {
        cb_reserve_back(17, out_index_tiles);
        for (uint32_t i = 0; i < out_index_tiles; ++i) pack_tile(2 + i, 17);
        cb_push_back(17, out_index_tiles);
    }
    tile_regs_release();
    cb_pop_front(0, in_tiles);
    if constexpr (aux_tiles > 0) cb_pop_front(1, aux_tiles);
}
