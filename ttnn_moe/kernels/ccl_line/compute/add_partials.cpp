// reduce_scatter over a line, compute side of one direction's worker: for each page the reader
// feeds, this member's page (cb_own) + the partial the previous member sent (cb_partial) ->
// cb_sum, added in fp32 DST and packed once to the input format (the format the partials travel
// in, as in ttnn's line reduce_scatter). A fixed pair per add, so the result does not depend on
// delivery order or timing. CBs move in whole chunks of `granularity` pages
// (reduce_scatter_line.hpp), the last chunk of a range holding only the pages left.
//
// Named compile-time args: cb_own, cb_partial, cb_sum, granularity.
// Runtime args: slices received, pages per slice.
// conformance: kind=compute named=cb_own:0,cb_partial:1,cb_sum:2,granularity:8 fp32_dest_acc=1 label=bf16
#include <cstdint>

#include "api/compute/cb_api.h"
#include "api/compute/common.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/pack.h"
#include "api/compute/reg_api.h"

namespace {

constexpr uint32_t cb_own = get_named_compile_time_arg_val("cb_own");
constexpr uint32_t cb_partial = get_named_compile_time_arg_val("cb_partial");
constexpr uint32_t cb_sum = get_named_compile_time_arg_val("cb_sum");
constexpr uint32_t granularity = get_named_compile_time_arg_val("granularity");

void add_chunk(uint32_t pages) {
    cb_wait_front(cb_own, granularity);
    cb_wait_front(cb_partial, granularity);
    cb_reserve_back(cb_sum, granularity);
    for (uint32_t i = 0; i < pages; ++i) {
        tile_regs_acquire();
        add_tiles(cb_own, cb_partial, i, i, 0);
        tile_regs_commit();
        tile_regs_wait();
        pack_tile(0, cb_sum);
        tile_regs_release();
    }
    cb_pop_front(cb_own, granularity);
    cb_pop_front(cb_partial, granularity);
    cb_push_back(cb_sum, granularity);
}

}  // namespace

void kernel_main() {
    const uint32_t slices = get_arg_val<uint32_t>(0);
    const uint32_t pages = get_arg_val<uint32_t>(1);
    compute_kernel_hw_startup(cb_own, cb_partial, cb_sum);
    add_init(cb_own, cb_partial);
    for (uint32_t s = 0; s < slices; ++s) {
        for (uint32_t done = 0; done < pages; done += granularity) {
            add_chunk(pages - done < granularity ? pages - done : granularity);
        }
    }
}
