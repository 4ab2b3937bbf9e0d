// all_gather over a line of the mesh: one data-movement kernel per worker core, each on its
// own fabric link. Every member of the line runs it on the same page range of its input.
//
// 1. Line barrier (every member runs this program before remote writes start).
// 2. Each input page p of the range: read into L1; its output page is
//      (p / block) * (line_size * block) + position * block + p % block
//    (block = input pages per gathered slab, so the slabs of the members interleave in
//    position order), or, when output pages are line_size input pages wide (a ROW_MAJOR
//    gather along the rows), page p at byte offset position * page bytes; write it there
//    locally over the NOC and, on every other member,
//    as fused write + increment packets to the same page of its output (1D: one chip
//    multicast per side of the line, so each link carries a page once).
// 3. Wait for every other member's increments (the same range, the same packet count),
//    so the output is complete when the kernel ends.
//
// Compile-time args: TensorAccessorArgs of the input, then of the output.
// Named: cb_page (one page of L1), cb_headers (one packet header), sem_init, sem_pages.
// Runtime args: input address, output address, input page bytes, output page bytes, first
// page, page count, block, line size, position, max packet payload, then the route words of every line
// position (fabric_line.hpp), then the fabric connections ([has_forward][3 args]
// [has_backward][3 args], one link).
// conformance: kind=dataflow ct_args=130,130 named=cb_page:0,cb_headers:1,sem_init:0,sem_pages:1 defines=ROUTING_MODE=137 label=1d
// conformance: kind=dataflow ct_args=130,130 named=cb_page:0,cb_headers:1,sem_init:0,sem_pages:1 defines=ROUTING_MODE=162;FABRIC_2D=1 label=2d
#include <cstdint>

#include "../../common/dataflow/fabric_line.hpp"
#include "../../common/dataflow/scratch.hpp"
#include "api/dataflow/dataflow_api.h"

using moe_fabric::FabricLine;

namespace {

constexpr uint32_t cb_page = get_named_compile_time_arg_val("cb_page");
constexpr uint32_t cb_headers = get_named_compile_time_arg_val("cb_headers");
constexpr uint32_t sem_init = get_named_compile_time_arg_val("sem_init");
constexpr uint32_t sem_pages = get_named_compile_time_arg_val("sem_pages");
constexpr uint32_t kRouteArg = 10;

constexpr auto kInputArgs = TensorAccessorArgs<0>();
constexpr auto kOutputArgs = TensorAccessorArgs<kInputArgs.next_compile_time_args_offset()>();

struct Args {
    uint32_t input, output, page_bytes, out_page_bytes, first, count, block, line_size, position, max_payload;
    size_t connection_arg() const { return kRouteArg + ttnn_moe::common_shared::kRouteWordsPerPosition * line_size; }
};

Args read_args() {
    Args a;
    a.input = get_arg_val<uint32_t>(0);
    a.output = get_arg_val<uint32_t>(1);
    a.page_bytes = get_arg_val<uint32_t>(2);
    a.out_page_bytes = get_arg_val<uint32_t>(3);
    a.first = get_arg_val<uint32_t>(4);
    a.count = get_arg_val<uint32_t>(5);
    a.block = get_arg_val<uint32_t>(6);
    a.line_size = get_arg_val<uint32_t>(7);
    a.position = get_arg_val<uint32_t>(8);
    a.max_payload = get_arg_val<uint32_t>(9);
    return a;
}

void send_pages(const Args& a, FabricLine& line, uint32_t page_l1) {
    const auto input = TensorAccessor(kInputArgs, a.input, a.page_bytes);
    const auto output = TensorAccessor(kOutputArgs, a.output, a.out_page_bytes);
    const bool row_segments = a.out_page_bytes != a.page_bytes;
    const uint64_t sem_noc = get_noc_addr(get_semaphore(sem_pages));
    for (uint32_t p = a.first; p < a.first + a.count; ++p) {
        noc_async_read(input.get_noc_addr(p), page_l1, a.page_bytes);
        noc_async_read_barrier();
        const uint64_t out_noc =
            row_segments
                ? output.get_noc_addr(p, a.position * a.page_bytes)
                : output.get_noc_addr((p / a.block) * (a.line_size * a.block) + a.position * a.block + p % a.block);
        noc_async_write(page_l1, out_noc, a.page_bytes);
        line.write_and_signal_all(page_l1, out_noc, a.page_bytes, sem_noc);
        noc_async_write_barrier();
    }
}

}  // namespace

void kernel_main() {
    const Args args = read_args();
    const uint32_t page_l1 = moe_scratch::reserve(cb_page, args.page_bytes);
    const uint32_t header_l1 = moe_scratch::reserve(cb_headers, sizeof(PACKET_HEADER_TYPE));
    FabricLine line(args.line_size, args.position, 1, kRouteArg, header_l1, args.max_payload);
    line.open(args.connection_arg());
    moe_fabric::line_barrier(line, sem_init);
    send_pages(args, line, page_l1);
    moe_fabric::wait_for_line(line, sem_pages, args.count * line.packets_for(args.page_bytes));
    line.close();
}
