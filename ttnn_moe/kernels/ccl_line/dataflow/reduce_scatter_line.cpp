// reduce_scatter over a line of the mesh, reader side: one data-movement kernel per worker
// core, each on its own fabric link, each owning the same range of output pages on every
// member of the line.
//
// Output page k of the member at position j is the sum over positions of input page
//   (k / chunk) * (line_size * chunk) + j * chunk + k % chunk
// (chunk = output pages per slab of the split dim). Staging holds line_size slots of
// out_pages pages: slot s receives member s's contribution.
//
// 1. Line barrier (every member runs this program before remote writes start).
// 2. For each page k of the range and each other member j: its input page goes to page
//    position * out_pages + k of j's staging as fused write + increment packets.
// 3. Wait for every other member's increments (same range, same packet count).
// 4. For each page k of the range, feed cb_in its line_size contributions in ascending
//    position (this member's own from its input, the others' from staging) for the
//    compute kernel (sum_in_order.cpp) to add in that order.
//
// Compile-time args: TensorAccessorArgs of the input, then of the staging tensor.
// Named: cb_in, cb_page (one page of L1), cb_headers (one packet header), sem_init, sem_pages.
// Runtime args: input address, staging address, page bytes, first output page, page count,
// chunk, out_pages, line size, position, max packet payload, then the route words of every
// line position (fabric_line.hpp), then the fabric connections (one link).
// conformance: kind=dataflow ct_args=130,130 named=cb_in:0,cb_page:1,cb_headers:2,sem_init:0,sem_pages:1 defines=ROUTING_MODE=137 label=1d
// conformance: kind=dataflow ct_args=130,130 named=cb_in:0,cb_page:1,cb_headers:2,sem_init:0,sem_pages:1 defines=ROUTING_MODE=162;FABRIC_2D=1 label=2d
#include <cstdint>

#include "../../common/dataflow/fabric_line.hpp"
#include "../../common/dataflow/scratch.hpp"
#include "api/dataflow/dataflow_api.h"

using moe_fabric::FabricLine;

namespace {

constexpr uint32_t cb_in = get_named_compile_time_arg_val("cb_in");
constexpr uint32_t cb_page = get_named_compile_time_arg_val("cb_page");
constexpr uint32_t cb_headers = get_named_compile_time_arg_val("cb_headers");
constexpr uint32_t sem_init = get_named_compile_time_arg_val("sem_init");
constexpr uint32_t sem_pages = get_named_compile_time_arg_val("sem_pages");
constexpr uint32_t kRouteArg = 10;

constexpr auto kInputArgs = TensorAccessorArgs<0>();
constexpr auto kStagingArgs = TensorAccessorArgs<kInputArgs.next_compile_time_args_offset()>();

struct Args {
    uint32_t input, staging, page_bytes, first, count, chunk, out_pages, line_size, position, max_payload;
    size_t connection_arg() const { return kRouteArg + ttnn_moe::common_shared::kRouteWordsPerPosition * line_size; }
    // Input page that holds member j's share of output page k.
    uint32_t input_page(uint32_t k, uint32_t j) const {
        return (k / chunk) * (line_size * chunk) + j * chunk + k % chunk;
    }
};

Args read_args() {
    Args a;
    a.input = get_arg_val<uint32_t>(0);
    a.staging = get_arg_val<uint32_t>(1);
    a.page_bytes = get_arg_val<uint32_t>(2);
    a.first = get_arg_val<uint32_t>(3);
    a.count = get_arg_val<uint32_t>(4);
    a.chunk = get_arg_val<uint32_t>(5);
    a.out_pages = get_arg_val<uint32_t>(6);
    a.line_size = get_arg_val<uint32_t>(7);
    a.position = get_arg_val<uint32_t>(8);
    a.max_payload = get_arg_val<uint32_t>(9);
    return a;
}

template <typename Input, typename Staging>
void send_shares(const Args& a, FabricLine& line, const Input& input, const Staging& staging, uint32_t page_l1) {
    const uint64_t sem_noc = get_noc_addr(get_semaphore(sem_pages));
    for (uint32_t k = a.first; k < a.first + a.count; ++k) {
        const uint64_t slot_noc = staging.get_noc_addr(a.position * a.out_pages + k);
        for (uint32_t j = 0; j < a.line_size; ++j) {
            if (j == a.position) continue;
            noc_async_read(input.get_noc_addr(a.input_page(k, j)), page_l1, a.page_bytes);
            noc_async_read_barrier();
            line.write_and_signal(j, page_l1, slot_noc, a.page_bytes, sem_noc);
        }
    }
}

template <typename Input, typename Staging>
void feed_contributions(const Args& a, const Input& input, const Staging& staging) {
    for (uint32_t k = a.first; k < a.first + a.count; ++k) {
        for (uint32_t s = 0; s < a.line_size; ++s) {
            cb_reserve_back(cb_in, 1);
            const uint64_t src =
                s == a.position ? input.get_noc_addr(a.input_page(k, s)) : staging.get_noc_addr(s * a.out_pages + k);
            noc_async_read(src, get_write_ptr(cb_in), a.page_bytes);
            noc_async_read_barrier();
            cb_push_back(cb_in, 1);
        }
    }
}

}  // namespace

void kernel_main() {
    const Args args = read_args();
    const auto input = TensorAccessor(kInputArgs, args.input, args.page_bytes);
    const auto staging = TensorAccessor(kStagingArgs, args.staging, args.page_bytes);
    const uint32_t page_l1 = moe_scratch::reserve(cb_page, args.page_bytes);
    const uint32_t header_l1 = moe_scratch::reserve(cb_headers, sizeof(PACKET_HEADER_TYPE));
    FabricLine line(args.line_size, args.position, 1, kRouteArg, header_l1, args.max_payload);
    line.open(args.connection_arg());
    moe_fabric::line_barrier(line, sem_init);
    send_shares(args, line, input, staging, page_l1);
    moe_fabric::wait_for_line(line, sem_pages, args.count * line.packets_for(args.page_bytes));
    line.close();
    feed_contributions(args, input, staging);
}
