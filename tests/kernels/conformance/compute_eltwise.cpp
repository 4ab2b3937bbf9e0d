// Element-wise epilogue of an MoE expert, tile by tile:
//   out_act  = silu(gate) * up                      (SwiGLU, the multiply reuses DST)
//   out_bias = x + bias, bias broadcast over rows    (only with ADD_ROW_BIAS)
//   out_x    = x * scale, scale broadcast from one tile element (only with ADD_ROW_BIAS)
// bias and scale are single tiles kept for the whole kernel.
//
// Named compile-time args: cb_gate, cb_up, cb_act (outputs), and with ADD_ROW_BIAS
// cb_x, cb_bias, cb_scale, cb_out_bias, cb_out_x.
// Runtime args: num_tiles.
//
// conformance: kind=compute named=cb_gate:0,cb_up:1,cb_act:16 label=swiglu
// conformance: kind=compute named=cb_gate:0,cb_up:1,cb_act:16,cb_x:2,cb_bias:3,cb_scale:4,cb_out_bias:17,cb_out_x:18 defines=ADD_ROW_BIAS=1 label=swiglu+bias

#include <cstdint>

#include "api/compute/bcast.h"
#include "api/compute/cb_api.h"
#include "api/compute/compute_kernel_api.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/eltwise_unary/eltwise_unary.h"
#include "api/compute/pack.h"
#include "api/compute/reg_api.h"
#include "api/compute/tile_move_copy.h"

namespace {

// out = silu(gate) * up for one tile, through DST tile 0.
void swiglu_tile(uint32_t cb_gate, uint32_t cb_up, uint32_t cb_act) {
    cb_wait_front(cb_gate, 1);
    cb_wait_front(cb_up, 1);
    tile_regs_acquire();
    copy_init(cb_gate);
    copy_tile(cb_gate, 0, 0);
    silu_tile_init();
    silu_tile(0);
    mul_reuse_dest_init<EltwiseBinaryReuseDestType::DEST_TO_SRCA>(cb_up);
    mul_reuse_dest_tiles<EltwiseBinaryReuseDestType::DEST_TO_SRCA>(cb_up, 0, 0);
    tile_regs_commit();
    cb_pop_front(cb_gate, 1);
    cb_pop_front(cb_up, 1);

    cb_reserve_back(cb_act, 1);
    tile_regs_wait();
    pack_tile(0, cb_act);
    tile_regs_release();
    cb_push_back(cb_act, 1);
}

}  // namespace

void kernel_main() {
    const uint32_t num_tiles = get_arg_val<uint32_t>(0);

    constexpr uint32_t cb_gate = get_named_compile_time_arg_val("cb_gate");
    constexpr uint32_t cb_up = get_named_compile_time_arg_val("cb_up");
    constexpr uint32_t cb_act = get_named_compile_time_arg_val("cb_act");

    compute_kernel_hw_startup(cb_gate, cb_up, cb_act);

#ifdef ADD_ROW_BIAS
    constexpr uint32_t cb_x = get_named_compile_time_arg_val("cb_x");
    constexpr uint32_t cb_bias = get_named_compile_time_arg_val("cb_bias");
    constexpr uint32_t cb_scale = get_named_compile_time_arg_val("cb_scale");
    constexpr uint32_t cb_out_bias = get_named_compile_time_arg_val("cb_out_bias");
    constexpr uint32_t cb_out_x = get_named_compile_time_arg_val("cb_out_x");
    cb_wait_front(cb_bias, 1);
    cb_wait_front(cb_scale, 1);
#endif

    for (uint32_t i = 0; i < num_tiles; ++i) {
        swiglu_tile(cb_gate, cb_up, cb_act);
#ifdef ADD_ROW_BIAS
        cb_wait_front(cb_x, 1);
        tile_regs_acquire();
        add_bcast_rows_init(cb_x, cb_bias);
        add_tiles_bcast_rows(cb_x, cb_bias, 0, 0, 0);
        mul_bcast_scalar_init(cb_x, cb_scale);
        mul_tiles_bcast_scalar(cb_x, cb_scale, 0, 0, 1);
        tile_regs_commit();
        cb_pop_front(cb_x, 1);

        cb_reserve_back(cb_out_bias, 1);
        cb_reserve_back(cb_out_x, 1);
        tile_regs_wait();
        pack_tile(0, cb_out_bias);
        pack_tile(1, cb_out_x);
        tile_regs_release();
        cb_push_back(cb_out_bias, 1);
        cb_push_back(cb_out_x, 1);
#endif
    }

#ifdef ADD_ROW_BIAS
    cb_pop_front(cb_bias, 1);
    cb_pop_front(cb_scale, 1);
#endif
}
