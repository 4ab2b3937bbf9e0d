// conformance: kind=dataflow
// Allocates routes of packet headers from the PacketHeaderPool and reports, per route, its id, the L1 offset of its
// first header and its header count (three words each, at most five routes) by writing them to a DRAM bank.
// Runtime args: DRAM bank id, bank address, CB 0's L1 offset, the number of routes, then each route's header count.
#include "api/dataflow/dataflow_api.h"
#include "tt_metal/fabric/hw/inc/packet_header_pool.h"

void kernel_main() {
    const uint32_t bank = get_arg_val<uint32_t>(0);
    const uint32_t bank_addr = get_arg_val<uint32_t>(1);
    const uint32_t cb_offset = get_arg_val<uint32_t>(2);
    const uint32_t routes = get_arg_val<uint32_t>(3);
    volatile tt_l1_ptr uint32_t* words = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(0));
    // A pointer into this core's L1 minus this gives its L1 offset.
    const uintptr_t l1_base = get_write_ptr(0) - cb_offset;
    for (uint32_t i = 0; i < 16; ++i) words[i] = 0;
    for (uint32_t r = 0; r < routes; ++r) {
        const uint8_t route = PacketHeaderPool::allocate_header_n(get_arg_val<uint32_t>(4 + r));
        uint32_t first = 0;
        PacketHeaderPool::for_each_header(route, [&](volatile tt_l1_ptr PACKET_HEADER_TYPE* header, uint8_t i) {
            if (i == 0) first = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(header) - l1_base);
        });
        words[3 * r] = route;
        words[3 * r + 1] = first;
        words[3 * r + 2] = PacketHeaderPool::get_num_headers(route);
    }
    noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(bank, bank_addr), 64);
    noc_async_write_barrier();
}
