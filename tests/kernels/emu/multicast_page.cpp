// conformance: kind=dataflow
// One page of CB 0 multicast from a sender core to a rectangle of cores, with semaphore 0 as the
// "landed" flag (noc_semaphore_set_multicast), then every core writes its CB 0 page to DRAM page
// `out_page` of an interleaved buffer, so the test sees who received what.
// Runtime args: role (0 sender, 1 receiver, 2 neither), the rectangle's NOC start x, y and end x, y,
// num_dests, page bytes, output address, output page, mode. Sender modes: 0 multicast, flag, flush,
// pop; 1 pops before the flush (the emulator must catch it); 2 loopback (the sender's own page is
// written too, num_dests counts it); 3 unicast writes to each core of the rectangle instead (their
// cost at the sender's port, for the time model's comparison).
#include "api/dataflow/dataflow_api.h"

namespace {

enum Role : uint32_t { kSender, kReceiver, kNeither };
enum Mode : uint32_t { kMulticast, kPopBeforeFlush, kLoopback, kUnicast };

}  // namespace

void kernel_main() {
    const uint32_t role = get_arg_val<uint32_t>(0);
    const uint32_t start_x = get_arg_val<uint32_t>(1), start_y = get_arg_val<uint32_t>(2);
    const uint32_t end_x = get_arg_val<uint32_t>(3), end_y = get_arg_val<uint32_t>(4);
    const uint32_t num_dests = get_arg_val<uint32_t>(5);
    const uint32_t bytes = get_arg_val<uint32_t>(6);
    const InterleavedAddrGen<true> out{.bank_base_address = get_arg_val<uint32_t>(7), .page_size = bytes};
    const uint32_t out_page = get_arg_val<uint32_t>(8);
    const uint32_t mode = get_arg_val<uint32_t>(9);
    const uint32_t flag_addr = get_semaphore(0);
    auto* flag = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(flag_addr);

    cb_reserve_back(0, 1);
    const uint32_t page = get_write_ptr(0);
    if (role == kSender) {
        auto* words = reinterpret_cast<volatile uint32_t*>(page);
        for (uint32_t i = 0; i < bytes / 4; ++i) words[i] = 3 * i + 1;
        const uint64_t pages = get_noc_multicast_addr(start_x, start_y, end_x, end_y, page);
        if (mode == kLoopback) {
            noc_async_write_multicast_loopback_src(page, pages, bytes, num_dests);
        } else if (mode == kUnicast) {
            for (uint32_t y = start_y; y <= end_y; ++y) {
                for (uint32_t x = start_x; x <= end_x; ++x) noc_async_write(page, get_noc_addr(x, y, page), bytes);
            }
        } else {
            noc_async_write_multicast(page, pages, bytes, num_dests);
        }
        noc_semaphore_set(flag, 1);
        if (mode != kUnicast) {
            const uint32_t flag_dests = mode == kLoopback ? num_dests - 1 : num_dests;
            noc_semaphore_set_multicast(flag_addr, get_noc_multicast_addr(start_x, start_y, end_x, end_y, flag_addr),
                                        flag_dests);
        }
    } else if (role == kReceiver) {
        noc_semaphore_wait(flag, 1);
    }
    cb_push_back(0, 1);
    cb_wait_front(0, 1);
    if (role == kSender && mode != kPopBeforeFlush) noc_async_writes_flushed();
    if (role == kSender) {
        cb_pop_front(0, 1);  // the page's data is still in it: L1 is not cleared by a pop
        noc_async_write_barrier();
    }
    noc_async_write(page, out.get_noc_addr(out_page), bytes);
    noc_async_write_barrier();
}
