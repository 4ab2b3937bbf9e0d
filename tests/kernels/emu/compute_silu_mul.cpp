// conformance: kind=compute named=cb_in:0,cb_out:16
// count output tiles, each silu(a) * b of a pair of input tiles (a, b) taken from cb_in: both go to
// DST (0 and 1), silu on DST 0, then the SFPU multiply of the two DST tiles into DST 0, packed to cb_out.
// Runtime args: count.
#include <cstdint>

#include "api/compute/cb_api.h"
#include "api/compute/common.h"
#include "api/compute/compute_kernel_api.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_binary_sfpu.h"
#include "api/compute/pack.h"
#include "api/compute/reg_api.h"
#include "api/compute/tile_move_copy.h"

void kernel_main() {
    const uint32_t count = get_arg_val<uint32_t>(0);
    constexpr uint32_t cb_in = get_named_compile_time_arg_val("cb_in");
    constexpr uint32_t cb_out = get_named_compile_time_arg_val("cb_out");

    compute_kernel_hw_startup(cb_in, cb_out);
    copy_init(cb_in);
    for (uint32_t t = 0; t < count; ++t) {
        cb_wait_front(cb_in, 2);
        tile_regs_acquire();
        copy_tile(cb_in, 0, 0);
        copy_tile(cb_in, 1, 1);
        silu_tile_init();
        silu_tile(0);
        mul_binary_tile_init();
        mul_binary_tile(0, 1, 0);
        tile_regs_commit();
        cb_pop_front(cb_in, 2);
        cb_reserve_back(cb_out, 1);
        tile_regs_wait();
        pack_tile(0, cb_out);
        tile_regs_release();
        cb_push_back(cb_out, 1);
    }
}
