// Output-stationary tile matmul: for each of num_out_tiles output tiles, multiply
// Kt pairs of input tiles (in0 row tile k, in1 column tile k, as the reader pushes
// them) and accumulate in DST, then pack the tile. Shapes are runtime args so one
// build serves every shape.
//
// Named compile-time args: cb_in0, cb_in1, cb_out.
// Runtime args: num_out_tiles, Kt.
//
// conformance: kind=compute named=cb_in0:0,cb_in1:1,cb_out:16
// conformance: kind=compute named=cb_in0:0,cb_in1:1,cb_out:16 formats=1:bfloat8_b fp32_dest_acc=1 math_fidelity=HiFi2 label=bfp8-weights-fp32-acc
// conformance: kind=compute named=cb_in0:0,cb_in1:1,cb_out:16 formats=1:bfloat4_b math_fidelity=LoFi label=bfp4-weights-lofi

#include <cstdint>

#include "api/compute/cb_api.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/matmul.h"
#include "api/compute/pack.h"
#include "api/compute/reg_api.h"

void kernel_main() {
    const uint32_t num_out_tiles = get_arg_val<uint32_t>(0);
    const uint32_t kt = get_arg_val<uint32_t>(1);

    constexpr uint32_t cb_in0 = get_named_compile_time_arg_val("cb_in0");
    constexpr uint32_t cb_in1 = get_named_compile_time_arg_val("cb_in1");
    constexpr uint32_t cb_out = get_named_compile_time_arg_val("cb_out");

    // Matmul feeds in0 through SrcB and in1 through SrcA.
    compute_kernel_hw_startup<SrcOrder::Reverse>(cb_in0, cb_in1, cb_out);
    matmul_init(cb_in0, cb_in1);

    for (uint32_t out_tile = 0; out_tile < num_out_tiles; ++out_tile) {
        tile_regs_acquire();
        for (uint32_t k = 0; k < kt; ++k) {
            cb_wait_front(cb_in0, 1);
            cb_wait_front(cb_in1, 1);
            matmul_tiles(cb_in0, cb_in1, 0, 0, 0);
            cb_pop_front(cb_in0, 1);
            cb_pop_front(cb_in1, 1);
        }
        tile_regs_commit();

        cb_reserve_back(cb_out, 1);
        tile_regs_wait();
        pack_tile(0, cb_out);
        tile_regs_release();
        cb_push_back(cb_out, 1);
    }
}
