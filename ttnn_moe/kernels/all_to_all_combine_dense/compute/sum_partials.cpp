// all_to_all_combine_dense compute: for each token, the number n of its partial rows arrives
// first (a uint32 in a cb_count page); then its n rows in ascending source position, one push of
// num_chunks pages (1024-element chunks) each: the first row's chunks start the fp32 accumulator
// (a row of num_chunks pages), each next row's are added to it chunk by chunk, the last sums are
// packed to the output format. Every element sees the same additions in the same order as when
// the rows came chunk by chunk. Rows are treated as element-wise "tiles": layout does not matter
// to add.
//
// conformance: kind=compute named=cb_partial:0,cb_acc:1,cb_out:2,cb_count:3 formats=1:float32,3:uint32 fp32_dest_acc=1 label=bf16-out
// conformance: kind=compute named=cb_partial:0,cb_acc:1,cb_out:2,cb_count:3 formats=1:float32,2:float32,3:uint32 fp32_dest_acc=1 label=fp32-out
//
// Runtime args (compute_arg) and named compile-time args: all_to_all_combine_dense_shared.hpp.
#include <cstdint>

#include "../../../cpp/ops/all_to_all_combine_dense/all_to_all_combine_dense_shared.hpp"
#include "../../common/compute/accumulate.hpp"
#include "api/compute/cb_api.h"
#include "api/compute/common.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/pack.h"
#include "api/compute/reconfig_data_format.h"
#include "api/compute/reg_api.h"
#include "api/compute/tile_move_copy.h"

using namespace ttnn_moe::all_to_all_combine_dense_shared;
using moe_compute::pack_dst0_to;

namespace {

constexpr uint32_t cb_partial = get_named_compile_time_arg_val(named_arg::kCbPartial);
constexpr uint32_t cb_acc = get_named_compile_time_arg_val(named_arg::kCbAcc);
constexpr uint32_t cb_out = get_named_compile_time_arg_val(named_arg::kCbOut);
constexpr uint32_t cb_count = get_named_compile_time_arg_val(named_arg::kCbCount);

struct Args {
    uint32_t num_tokens, num_chunks;
};

Args read_args() {
    Args a;
    a.num_tokens = get_arg_val<uint32_t>(compute_arg::kNumTokens);
    a.num_chunks = get_arg_val<uint32_t>(compute_arg::kNumChunks);
    return a;
}

// Partial rows the reader feeds for the next token (>= 1).
uint32_t receive_partial_count() {
    cb_wait_front(cb_count, 1);
    const uint32_t count = read_tile_value(cb_count, 0, 0);
    cb_pop_front(cb_count, 1);
    return count;
}

// Partial row i of `count` (its chunks at the front of cb_partial): the first is copied into the
// accumulator, each next one added to it chunk by chunk; the last sums go to cb_out.
void add_row(uint32_t i, uint32_t count, uint32_t num_chunks) {
    const uint32_t dst = i + 1 == count ? cb_out : cb_acc;
    cb_wait_front(cb_partial, num_chunks);
    for (uint32_t chunk = 0; chunk < num_chunks; ++chunk) {
        if (i == 0) {
            reconfig_data_format_srca(cb_partial);
            copy_init(cb_partial);
            tile_regs_acquire();
            copy_tile(cb_partial, chunk, 0);
        } else {
            cb_wait_front(cb_acc, 1);
            reconfig_data_format(cb_acc, cb_partial);
            add_init(cb_acc, cb_partial);
            tile_regs_acquire();
            add_tiles(cb_acc, cb_partial, 0, chunk, 0);
            cb_pop_front(cb_acc, 1);
        }
        pack_dst0_to(dst);
    }
    cb_pop_front(cb_partial, num_chunks);
}

}  // namespace

void kernel_main() {
    const Args args = read_args();
    compute_kernel_hw_startup(cb_partial, cb_acc, cb_out);
    for (uint32_t t = 0; t < args.num_tokens; ++t) {
        const uint32_t count = receive_partial_count();
        for (uint32_t i = 0; i < count; ++i) add_row(i, count, args.num_chunks);
    }
}
