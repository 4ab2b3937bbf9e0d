// all_to_all_combine_dense compute: for each token, the number n of partials fed per
// chunk arrives first (a uint32 in a cb_count page); then the token's partials in one
// push of line_size pages per 1024-element chunk of the row, chunk c's n partial tiles at
// pages c * line_size .. + n - 1 in ascending source position: the first starts the fp32
// accumulator, each next one is added to it, the last sum is packed to the output
// format. Rows are treated as element-wise "tiles": layout does not matter to add.
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
    uint32_t num_tokens, num_chunks, line_size;
};

Args read_args() {
    Args a;
    a.num_tokens = get_arg_val<uint32_t>(compute_arg::kNumTokens);
    a.num_chunks = get_arg_val<uint32_t>(compute_arg::kNumChunks);
    a.line_size = get_arg_val<uint32_t>(compute_arg::kLineSize);
    return a;
}

// Partials the dataflow kernel feeds per chunk of the next token (>= 1).
uint32_t receive_partial_count() {
    cb_wait_front(cb_count, 1);
    const uint32_t count = read_tile_value(cb_count, 0, 0);
    cb_pop_front(cb_count, 1);
    return count;
}

// acc = partial `first`, then acc = acc + each next one; the last sum goes to cb_out.
void sum_chunk(uint32_t first, uint32_t count) {
    reconfig_data_format_srca(cb_partial);
    copy_init(cb_partial);
    tile_regs_acquire();
    copy_tile(cb_partial, first, 0);
    pack_dst0_to(count == 1 ? cb_out : cb_acc);
    for (uint32_t i = 1; i < count; ++i) {
        cb_wait_front(cb_acc, 1);
        reconfig_data_format(cb_acc, cb_partial);
        add_init(cb_acc, cb_partial);
        tile_regs_acquire();
        add_tiles(cb_acc, cb_partial, 0, first + i, 0);
        cb_pop_front(cb_acc, 1);
        pack_dst0_to(i + 1 == count ? cb_out : cb_acc);
    }
}

}  // namespace

void kernel_main() {
    const Args args = read_args();
    compute_kernel_hw_startup(cb_partial, cb_acc, cb_out);
    const uint32_t token_pages = args.line_size * args.num_chunks;
    for (uint32_t t = 0; t < args.num_tokens; ++t) {
        const uint32_t count = receive_partial_count();
        cb_wait_front(cb_partial, token_pages);
        for (uint32_t chunk = 0; chunk < args.num_chunks; ++chunk) sum_chunk(chunk * args.line_size, count);
        cb_pop_front(cb_partial, token_pages);
    }
}
