// reduce_scatter over a line of the mesh, reader of one direction's worker (reduce_scatter_line.hpp
// has the algorithm, the chunking and the runtime args).
//
// The member that starts the direction: its input pages of every slice it sends go straight to
// cb_sum (the writer sends them; a line of one: its pages, for the writer to store). Every other
// member: per slice of its walk (the forwarded ones, then its own) and per chunk, its own pages to
// cb_own and, once the previous member's packets for them have landed (sem_arrived counts one
// increment per packet), the received partials to cb_partial, for the compute kernel
// (add_partials.cpp) to add. A middle member's backward worker takes, for its own slice, the
// output pages the forward worker wrote (after its signal on sem_forward_done) instead of its
// input pages.
//
// Compile-time args: TensorAccessorArgs of the input, the staging tensor and the output.
// Named: cb_own, cb_partial, cb_sum, sem_arrived, sem_forward_done, granularity.
// conformance: kind=dataflow ct_args=130,130,130 named=cb_own:0,cb_partial:1,cb_sum:2,sem_arrived:1,sem_forward_done:2,granularity:8
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "reduce_scatter_line.hpp"

namespace {

constexpr uint32_t cb_own = get_named_compile_time_arg_val("cb_own");
constexpr uint32_t cb_partial = get_named_compile_time_arg_val("cb_partial");
constexpr uint32_t cb_sum = get_named_compile_time_arg_val("cb_sum");
constexpr uint32_t sem_arrived = get_named_compile_time_arg_val("sem_arrived");
constexpr uint32_t sem_forward_done = get_named_compile_time_arg_val("sem_forward_done");
constexpr uint32_t granularity = get_named_compile_time_arg_val("granularity");

constexpr auto kInputArgs = TensorAccessorArgs<0>();
constexpr auto kStagingArgs = TensorAccessorArgs<kInputArgs.next_compile_time_args_offset()>();
constexpr auto kOutputArgs = TensorAccessorArgs<kStagingArgs.next_compile_time_args_offset()>();

volatile tt_l1_ptr uint32_t* semaphore(uint32_t id) {
    return reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(id));
}

// Issues the reads of pages k .. k + n - 1 (page_of(k) gives each one's NOC address) into a
// reserved chunk of `cb`.
template <typename PageOf>
void read_chunk(uint32_t cb, uint32_t k, uint32_t n, uint32_t page_bytes, PageOf page_of) {
    cb_reserve_back(cb, granularity);
    const uint32_t l1 = get_write_ptr(cb);
    for (uint32_t j = 0; j < n; ++j) noc_async_read(page_of(k + j), l1 + j * page_bytes, page_bytes);
}

}  // namespace

void kernel_main() {
    const moe_rs_line::Args a = moe_rs_line::read_args();
    const auto input = TensorAccessor(kInputArgs, a.input, a.page_bytes);
    const auto staging = TensorAccessor(kStagingArgs, a.staging, a.page_bytes);
    const auto output = TensorAccessor(kOutputArgs, a.output, a.page_bytes);
    const uint32_t end = a.first + a.count;
    if (a.first_in_direction()) {
        const uint32_t slices = a.targets() + (a.copies_own_slice() ? 1 : 0);
        for (uint32_t i = 0; i < slices; ++i) {
            const uint32_t d = a.slice(i);
            for (uint32_t k = a.first; k < end; k += granularity) {
                read_chunk(cb_sum, k, a.chunk_pages(k, granularity), a.page_bytes,
                           [&](uint32_t p) { return input.get_noc_addr(a.input_page(p, d)); });
                noc_async_read_barrier();
                cb_push_back(cb_sum, granularity);
            }
        }
        return;
    }
    const uint32_t packets_per_page = (a.page_bytes + a.max_payload - 1) / a.max_payload;
    const bool add_to_output = !a.forward() && a.middle();
    uint32_t pages_arrived = 0, pages_written_by_forward = 0;
    for (uint32_t i = 0; i < a.received(); ++i) {
        const uint32_t d = a.slice(i);
        const bool from_output = add_to_output && i == a.targets();
        for (uint32_t k = a.first; k < end; k += granularity) {
            const uint32_t n = a.chunk_pages(k, granularity);
            if (from_output) {
                pages_written_by_forward += n;
                noc_semaphore_wait_min(semaphore(sem_forward_done), pages_written_by_forward);
                read_chunk(cb_own, k, n, a.page_bytes, [&](uint32_t p) { return output.get_noc_addr(p); });
            } else {
                read_chunk(cb_own, k, n, a.page_bytes,
                           [&](uint32_t p) { return input.get_noc_addr(a.input_page(p, d)); });
            }
            pages_arrived += n;
            noc_semaphore_wait_min(semaphore(sem_arrived), pages_arrived * packets_per_page);
            read_chunk(cb_partial, k, n, a.page_bytes,
                       [&](uint32_t p) { return staging.get_noc_addr(a.staging_page(p, d)); });
            noc_async_read_barrier();
            cb_push_back(cb_own, granularity);
            cb_push_back(cb_partial, granularity);
        }
    }
}
