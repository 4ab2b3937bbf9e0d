// reduce_scatter over a line, compute side: for each output page, the line_size tiles the
// reader feeds (ascending position) are summed in that order in an fp32 accumulator
// (cb_acc, Float32, fp32 DST): acc = t0, acc = acc + t1, ...; the last sum is packed to
// cb_out in the output format, so the result is the fp32 sum rounded once.
//
// Named compile-time args: cb_in, cb_acc, cb_out. Runtime args: pages, line size.
// conformance: kind=compute named=cb_in:0,cb_acc:1,cb_out:2 formats=1:float32 fp32_dest_acc=1 label=bf16-out
#include <cstdint>

#include "../../common/compute/accumulate.hpp"
#include "api/compute/cb_api.h"
#include "api/compute/common.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/tile_move_copy.h"

namespace {

constexpr uint32_t cb_in = get_named_compile_time_arg_val("cb_in");
constexpr uint32_t cb_acc = get_named_compile_time_arg_val("cb_acc");
constexpr uint32_t cb_out = get_named_compile_time_arg_val("cb_out");

void sum_page(uint32_t line_size) {
    cb_wait_front(cb_in, 1);
    reconfig_data_format_srca(cb_in);
    copy_init(cb_in);
    tile_regs_acquire();
    copy_tile(cb_in, 0, 0);
    cb_pop_front(cb_in, 1);
    moe_compute::pack_dst0_to(line_size == 1 ? cb_out : cb_acc);
    for (uint32_t s = 1; s < line_size; ++s) {
        moe_compute::add_front_tiles_to(cb_acc, cb_in, s + 1 == line_size ? cb_out : cb_acc);
    }
}

}  // namespace

void kernel_main() {
    const uint32_t pages = get_arg_val<uint32_t>(0);
    const uint32_t line_size = get_arg_val<uint32_t>(1);
    compute_kernel_hw_startup(cb_in, cb_acc, cb_out);
    for (uint32_t k = 0; k < pages; ++k) sum_page(line_size);
}
