// count output tiles, each the sum over Kt of cb_a tile @ cb_b tile, packed to cb_out.
// Runtime args: Kt, count.
#include <cstdint>

#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/matmul.h"
#include "api/compute/tile_move_copy.h"
#include "api/dataflow/dataflow_buffer.h"

void kernel_main() {
    const uint32_t Kt = get_arg_val<uint32_t>(0);
    const uint32_t count = get_arg_val<uint32_t>(1);
    constexpr uint32_t cb_a = get_named_compile_time_arg_val("cb_a");
    constexpr uint32_t cb_b = get_named_compile_time_arg_val("cb_b");
    constexpr uint32_t cb_out = get_named_compile_time_arg_val("cb_out");
    DataflowBuffer a(cb_a), b(cb_b), out(cb_out);

    compute_kernel_hw_startup<SrcOrder::Reverse>(cb_a, cb_b, cb_out);
    matmul_init(cb_a, cb_b);
    for (uint32_t t = 0; t < count; ++t) {
        tile_regs_acquire();
        for (uint32_t k = 0; k < Kt; ++k) {
            a.wait_front(1);
            b.wait_front(1);
            matmul_tiles(cb_a, cb_b, 0, 0, 0);
            a.pop_front(1);
            b.pop_front(1);
        }
        tile_regs_commit();
        out.reserve_back(1);
        tile_regs_wait();
        pack_tile(0, cb_out);
        tile_regs_release();
        out.push_back(1);
    }
}
