// local_reduce_moe_output compute: for each output row and 1024-element chunk, sums
// w_j * y_j over the row's assignments in the order fed (ascending l): the first product
// starts the fp32 accumulator, each next one is added to it, the last sum is packed to bf16.
// Rows of H values are treated as element-wise "tiles": layout does not matter to mul/add.
//
// named compile-time args: cb_y, cb_weight, cb_row_length, cb_product, cb_acc, cb_out
// runtime args: num_rows, num_chunks (ceil(H / 1024))
// conformance: kind=compute named=cb_y:0,cb_weight:1,cb_row_length:2,cb_product:3,cb_acc:4,cb_out:5 formats=2:uint32,3:float32,4:float32 fp32_dest_acc=1 math_fidelity=HiFi4
#include <cstdint>

#include "api/compute/bcast.h"
#include "api/compute/cb_api.h"
#include "api/compute/common.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/pack.h"
#include "api/compute/reconfig_data_format.h"
#include "api/compute/reg_api.h"
#include "../../common/compute/accumulate.hpp"

using moe_compute::add_front_tiles_to;
using moe_compute::pack_dst0_to;

void kernel_main() {
    const uint32_t num_rows = get_arg_val<uint32_t>(0);
    const uint32_t num_chunks = get_arg_val<uint32_t>(1);

    constexpr uint32_t cb_y = get_named_compile_time_arg_val("cb_y");
    constexpr uint32_t cb_weight = get_named_compile_time_arg_val("cb_weight");
    constexpr uint32_t cb_row_length = get_named_compile_time_arg_val("cb_row_length");
    constexpr uint32_t cb_product = get_named_compile_time_arg_val("cb_product");
    constexpr uint32_t cb_acc = get_named_compile_time_arg_val("cb_acc");
    constexpr uint32_t cb_out = get_named_compile_time_arg_val("cb_out");

    compute_kernel_hw_startup(cb_y, cb_weight, cb_acc);
    for (uint32_t row = 0; row < num_rows; ++row) {
        cb_wait_front(cb_row_length, 1);
        const uint32_t length = read_tile_value(cb_row_length, 0, 0);  // assignments fed for this row, >= 1
        cb_pop_front(cb_row_length, 1);
        for (uint32_t chunk = 0; chunk < num_chunks; ++chunk) {
            for (uint32_t j = 0; j < length; ++j) {
                const bool last = j + 1 == length;
                // product = w_j * y_j
                cb_wait_front(cb_y, 1);
                cb_wait_front(cb_weight, 1);
                reconfig_data_format(cb_y, cb_weight);
                mul_bcast_scalar_init(cb_y, cb_weight);
                tile_regs_acquire();
                mul_tiles_bcast_scalar(cb_y, cb_weight, 0, 0, 0);
                cb_pop_front(cb_y, 1);
                cb_pop_front(cb_weight, 1);
                if (j == 0) {
                    pack_dst0_to(last ? cb_out : cb_acc);
                    continue;
                }
                pack_dst0_to(cb_product);
                // acc = acc + product (earlier experts first)
                add_front_tiles_to(cb_acc, cb_product, last ? cb_out : cb_acc);
            }
        }
    }
}
