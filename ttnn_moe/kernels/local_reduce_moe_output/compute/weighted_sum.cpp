// local_reduce_moe_output compute: for each of this core's output rows (the reader sends how
// many: it reads the rows used on the device) and 1024-element chunk, sums
// w_j * y_j over the row's assignments in the order fed (ascending l): the first product
// starts the fp32 accumulator, each next one is added to it, the last sum is packed to bf16.
// Rows of H values are treated as element-wise "tiles": layout does not matter to mul/add.
//
// Runtime args (compute_arg) and named compile-time args: local_reduce_moe_output_shared.hpp.
// conformance: kind=compute named=cb_y:0,cb_weight:1,cb_row_length:2,cb_product:3,cb_acc:4,cb_out:5 formats=2:uint32,3:float32,4:float32 fp32_dest_acc=1 math_fidelity=HiFi4
#include <cstdint>

#include "../../../cpp/ops/local_reduce_moe_output/local_reduce_moe_output_shared.hpp"
#include "../../common/compute/accumulate.hpp"
#include "api/compute/bcast.h"
#include "api/compute/cb_api.h"
#include "api/compute/common.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/pack.h"
#include "api/compute/reconfig_data_format.h"
#include "api/compute/reg_api.h"

using namespace ttnn_moe::local_reduce_moe_output_shared;
using moe_compute::add_front_tiles_to;
using moe_compute::pack_dst0_to;

namespace {

constexpr uint32_t cb_y = get_named_compile_time_arg_val(named_arg::kCbY);
constexpr uint32_t cb_weight = get_named_compile_time_arg_val(named_arg::kCbWeight);
constexpr uint32_t cb_row_length = get_named_compile_time_arg_val(named_arg::kCbRowLength);
constexpr uint32_t cb_product = get_named_compile_time_arg_val(named_arg::kCbProduct);
constexpr uint32_t cb_acc = get_named_compile_time_arg_val(named_arg::kCbAcc);
constexpr uint32_t cb_out = get_named_compile_time_arg_val(named_arg::kCbOut);

// The word the reader sends next on cb_row_length: first this core's number of rows (counted on
// the device), then per row the pairs it feeds per chunk (>= 1).
uint32_t receive_row_word() {
    cb_wait_front(cb_row_length, 1);
    const uint32_t length = read_tile_value(cb_row_length, 0, 0);
    cb_pop_front(cb_row_length, 1);
    return length;
}

// DST[0] = w * y of the next (y, weight) pair; pops the pair.
void multiply_next_pair() {
    cb_wait_front(cb_y, 1);
    cb_wait_front(cb_weight, 1);
    reconfig_data_format(cb_y, cb_weight);
    mul_bcast_scalar_init(cb_y, cb_weight);
    tile_regs_acquire();
    mul_tiles_bcast_scalar(cb_y, cb_weight, 0, 0, 0);
    cb_pop_front(cb_y, 1);
    cb_pop_front(cb_weight, 1);
}

// The first product starts the accumulator, each next one is added to it (earlier
// experts first); the last sum goes to cb_out.
void sum_chunk(uint32_t length) {
    for (uint32_t j = 0; j < length; ++j) {
        const bool last = j + 1 == length;
        multiply_next_pair();
        if (j == 0) {
            pack_dst0_to(last ? cb_out : cb_acc);
            continue;
        }
        pack_dst0_to(cb_product);
        add_front_tiles_to(cb_acc, cb_product, last ? cb_out : cb_acc);
    }
}

}  // namespace

void kernel_main() {
    const uint32_t num_chunks = get_arg_val<uint32_t>(compute_arg::kNumChunks);
    compute_kernel_hw_startup(cb_y, cb_weight, cb_acc);
    const uint32_t num_rows = receive_row_word();
    for (uint32_t row = 0; row < num_rows; ++row) {
        const uint32_t length = receive_row_word();
        for (uint32_t chunk = 0; chunk < num_chunks; ++chunk) sum_chunk(length);
    }
}
