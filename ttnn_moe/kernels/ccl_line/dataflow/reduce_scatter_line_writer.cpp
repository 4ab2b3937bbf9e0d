// reduce_scatter over a line of the mesh, writer of one direction's worker (reduce_scatter_line.hpp
// has the algorithm and the runtime args). It owns the worker's fabric connection: one link, the
// direction's side.
//
// 1. Handshake: a worker that sends increments sem_barrier of the opposite-direction worker on
//    the member it sends to (the worker that sends back to it over the same link) and waits for
//    that worker's increment, so both members run this program before partials flow.
// 2. Per sent slice and page: the page cb_sum holds (the reader's input page at the member that
//    starts the direction, else the compute kernel's sum) goes to the same staging page of the
//    next member as fused write + increment packets on its sem_arrived.
// 3. A member that receives (or a line of one): the pages of its own slice (cb_sum) go to the output; a middle
//    member's forward worker then increments the backward worker's sem_forward_done by each
//    chunk's pages, after they have landed.
//
// Compile-time args: TensorAccessorArgs of the staging tensor, then of the output.
// Named: cb_sum, cb_headers (one packet header), sem_barrier, sem_arrived, sem_forward_done,
// granularity.
// conformance: kind=dataflow ct_args=130,130 named=cb_sum:2,cb_headers:3,sem_barrier:0,sem_arrived:1,sem_forward_done:2,granularity:8 defines=ROUTING_MODE=137 label=1d
// conformance: kind=dataflow ct_args=130,130 named=cb_sum:2,cb_headers:3,sem_barrier:0,sem_arrived:1,sem_forward_done:2,granularity:8 defines=ROUTING_MODE=162;FABRIC_2D=1 label=2d
#include <cstdint>

#include "../../common/dataflow/fabric_line.hpp"
#include "../../common/dataflow/scratch.hpp"
#include "api/dataflow/dataflow_api.h"
#include "reduce_scatter_line.hpp"

using moe_fabric::FabricLine;

namespace {

constexpr uint32_t cb_sum = get_named_compile_time_arg_val("cb_sum");
constexpr uint32_t cb_headers = get_named_compile_time_arg_val("cb_headers");
constexpr uint32_t sem_barrier = get_named_compile_time_arg_val("sem_barrier");
constexpr uint32_t sem_arrived = get_named_compile_time_arg_val("sem_arrived");
constexpr uint32_t sem_forward_done = get_named_compile_time_arg_val("sem_forward_done");
constexpr uint32_t granularity = get_named_compile_time_arg_val("granularity");

constexpr auto kStagingArgs = TensorAccessorArgs<0>();
constexpr auto kOutputArgs = TensorAccessorArgs<kStagingArgs.next_compile_time_args_offset()>();

uint32_t next_member(const moe_rs_line::Args& a) {
    return a.forward() ? a.position + 1 : a.position - 1;
}

void handshake(const moe_rs_line::Args& a, FabricLine& line) {
    const uint32_t sem_l1 = get_semaphore(sem_barrier);
    line.atomic_inc(next_member(a), get_noc_addr(a.opposite_x, a.opposite_y, sem_l1));
    noc_semaphore_wait_min(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(sem_l1), 1);
}

template <typename Staging>
void send_partials(const moe_rs_line::Args& a, FabricLine& line, const Staging& staging) {
    const uint64_t sem_noc = get_noc_addr(get_semaphore(sem_arrived));
    for (uint32_t i = 0; i < a.targets(); ++i) {
        const uint32_t d = a.slice(i);
        for (uint32_t k = a.first; k < a.first + a.count; k += granularity) {
            cb_wait_front(cb_sum, granularity);
            const uint32_t l1 = get_read_ptr(cb_sum);
            for (uint32_t j = 0; j < a.chunk_pages(k, granularity); ++j) {
                line.write_and_signal(next_member(a), l1 + j * a.page_bytes,
                                      staging.get_noc_addr(a.staging_page(k + j, d)), a.page_bytes, sem_noc);
            }
            cb_pop_front(cb_sum, granularity);
        }
    }
}

template <typename Output>
void write_own_slice(const moe_rs_line::Args& a, const Output& output) {
    const bool signal_backward = a.forward() && a.middle();
    const uint64_t done_noc = get_noc_addr(a.opposite_x, a.opposite_y, get_semaphore(sem_forward_done));
    for (uint32_t k = a.first; k < a.first + a.count; k += granularity) {
        const uint32_t n = a.chunk_pages(k, granularity);
        cb_wait_front(cb_sum, granularity);
        const uint32_t l1 = get_read_ptr(cb_sum);
        for (uint32_t j = 0; j < n; ++j)
            noc_async_write(l1 + j * a.page_bytes, output.get_noc_addr(k + j), a.page_bytes);
        if (signal_backward) {
            noc_async_write_barrier();
            noc_semaphore_inc(done_noc, n);
        } else {
            noc_async_writes_flushed();
        }
        cb_pop_front(cb_sum, granularity);
    }
    noc_async_write_barrier();
    noc_async_atomic_barrier();
}

}  // namespace

void kernel_main() {
    const moe_rs_line::Args a = moe_rs_line::read_args();
    const auto staging = TensorAccessor(kStagingArgs, a.staging, a.page_bytes);
    const auto output = TensorAccessor(kOutputArgs, a.output, a.page_bytes);
    if (a.targets() > 0) {
        const uint32_t header_l1 = moe_scratch::reserve(cb_headers, sizeof(PACKET_HEADER_TYPE));
        FabricLine line(a.line_size, a.position, 1, moe_rs_line::kRouteArg, header_l1, a.max_payload);
        line.open(a.connection_arg());
        handshake(a, line);
        send_partials(a, line, staging);
        line.close();
    }
    if (!a.first_in_direction() || a.copies_own_slice()) write_own_slice(a, output);
}
