// moe_bmm compute: one output tile at a time, accumulating x_tile(r, k) @ w_tile(k, n)
// over k in DST, then packing it to cb_out. The schedule is computed on the device by
// the reader and arrives through cb_work (read_tile_value): this core's output tile
// count, then before each column run (consecutive tiles sharing expert l and column n)
// its number of row tiles.
//
// Resident weights (common arg 2 = 1): the run's Kt weight tiles sit in cb_w for the
// whole run; every row tile's matmuls index into them (tile k of the column is cb_w
// tile k), and the column is popped only when the run ends. Streamed (0): cb_w brings
// inner_block weight tiles next to every x block, as many times as there are row tiles.
//
// Named compile-time args: cb_x, cb_w, cb_work, cb_out.
// Common runtime args: Kt (inner tiles), inner_block (k tiles per x push; divides Kt), resident_weights.
//
// conformance: kind=compute named=cb_x:0,cb_w:1,cb_work:2,cb_out:16 formats=2:uint32 label=bf16-weights
// conformance: kind=compute named=cb_x:0,cb_w:1,cb_work:2,cb_out:16 formats=1:bfloat8_b,2:uint32 fp32_dest_acc=1 math_fidelity=HiFi2 label=bfp8-weights-fp32-acc
#include <cstdint>

#include "api/compute/cb_api.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/matmul.h"
#include "api/compute/pack.h"
#include "api/compute/reg_api.h"
#include "api/dataflow/dataflow_buffer.h"

void kernel_main() {
    constexpr uint32_t cb_x = get_named_compile_time_arg_val("cb_x");
    constexpr uint32_t cb_w = get_named_compile_time_arg_val("cb_w");
    constexpr uint32_t cb_work = get_named_compile_time_arg_val("cb_work");
    constexpr uint32_t cb_out = get_named_compile_time_arg_val("cb_out");
    const uint32_t inner_tiles = get_common_arg_val<uint32_t>(0);
    const uint32_t inner_block = get_common_arg_val<uint32_t>(1);
    const bool resident_weights = get_common_arg_val<uint32_t>(2) != 0;
    constexpr uint32_t dst = 0;

    DataflowBuffer x_dfb(cb_x);
    DataflowBuffer w_dfb(cb_w);
    DataflowBuffer work_dfb(cb_work);
    DataflowBuffer out_dfb(cb_out);

    compute_kernel_hw_startup<SrcOrder::Reverse>(cb_x, cb_w, cb_out);
    matmul_init(cb_x, cb_w);

    auto receive_word = [&work_dfb]() {
        work_dfb.wait_front(1);
        const uint32_t value = read_tile_value(cb_work, 0, 0);
        work_dfb.pop_front(1);
        return value;
    };

    const uint32_t num_tiles = receive_word();
    for (uint32_t done = 0; done < num_tiles;) {
        const uint32_t run = receive_word();  // row tiles sharing this weight column
        if (resident_weights) w_dfb.wait_front(inner_tiles);
        for (uint32_t r = 0; r < run; ++r) {
            tile_regs_acquire();
            for (uint32_t k0 = 0; k0 < inner_tiles; k0 += inner_block) {
                x_dfb.wait_front(inner_block);
                if (resident_weights) {
                    for (uint32_t j = 0; j < inner_block; ++j) matmul_tiles(cb_x, cb_w, j, k0 + j, dst);
                } else {
                    w_dfb.wait_front(inner_block);
                    for (uint32_t j = 0; j < inner_block; ++j) matmul_tiles(cb_x, cb_w, j, j, dst);
                    w_dfb.pop_front(inner_block);
                }
                x_dfb.pop_front(inner_block);
            }
            tile_regs_commit();

            out_dfb.reserve_back(1);
            tile_regs_wait();
            pack_tile(dst, cb_out);
            tile_regs_release();
            out_dfb.push_back(1);
        }
        if (resident_weights) w_dfb.pop_front(inner_tiles);
        done += run;
    }
}
