// conformance: kind=dataflow
// Copies `pages` pages of an interleaved DRAM buffer to another with tt-metal's stateful NOC calls, as
// moe_compute's dm0 streams its weights: the read command buffer is programmed with a bank's coordinates and
// the page size once per bank run (noc_async_read_one_packet_set_state), every page is read with a transaction
// id (1, 2, 3 in turn) into its own CB slot and waited for by that id only; the write command buffer is
// programmed per bank and pages are written with noc_async_write_one_packet_with_state, tagged with id 4 (each
// flushed by its id before its slot is read into again, all waited for by that id at the end).
// Runtime args: source address, destination address, page size, pages, mode (0: copy; 1: write a page whose
// read (id 2) is still outstanding after waiting for id 1 only, after writing the one of id 1; 2: a with_state read before any set_state).
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t src = get_arg_val<uint32_t>(0);
    const uint32_t dst = get_arg_val<uint32_t>(1);
    const uint32_t page_size = get_arg_val<uint32_t>(2);
    const uint32_t pages = get_arg_val<uint32_t>(3);
    const uint32_t mode = get_arg_val<uint32_t>(4);
    constexpr uint32_t num_banks = 12;
    constexpr uint32_t num_slots = 3;
    cb_reserve_back(0, num_slots);
    const uint32_t slots = get_write_ptr(0);
    DPRINT("copying {} pages of {} bytes\n", pages, page_size);

    if (mode == 2) {
        noc_async_read_one_packet_with_state(src, slots);
        return;
    }
    if (mode == 1) {
        noc_async_read_one_packet_set_state<true>(get_noc_addr_from_bank_id<true>(0, 0), page_size, 1);
        noc_async_read_set_trid(1);
        noc_async_read_one_packet_with_state_with_trid(get_noc_addr_from_bank_id<true>(0, 0), src, slots, 1);
        noc_async_read_set_trid(2);
        noc_async_read_one_packet_with_state_with_trid(get_noc_addr_from_bank_id<true>(0, 0), src, slots + page_size,
                                                       2);
        noc_async_read_barrier_with_trid(1);
        noc_async_write(slots, get_noc_addr_from_bank_id<true>(0, dst), page_size);  // landed: id 1 was waited for
        noc_async_write(slots + page_size, get_noc_addr_from_bank_id<true>(0, dst), page_size);
        noc_async_read_barrier();
        return;
    }
    // Issue one page ahead of the one copied out: read page i + 1 (id 1 + (i + 1) % 3) while page i lands.
    auto issue = [&](uint32_t page) {
        const uint32_t bank = page % num_banks;
        const uint32_t trid = 1 + page % num_slots;
        noc_async_read_one_packet_set_state<true>(get_noc_addr_from_bank_id<true>(bank, 0), page_size, 1);
        noc_async_read_set_trid(trid);
        noc_async_read_one_packet_with_state_with_trid(get_noc_addr_from_bank_id<true>(bank, 0),
                                                       src + (page / num_banks) * page_size,
                                                       slots + (page % num_slots) * page_size, trid);
    };
    issue(0);
    for (uint32_t page = 0; page < pages; ++page) {
        if (page + 1 < pages) issue(page + 1);
        noc_async_read_barrier_with_trid(1 + page % num_slots);
        const uint32_t bank = page % num_banks;
        noc_async_write_one_packet_set_state(get_noc_addr_from_bank_id<true>(bank, 0), page_size);
        noc_async_write_set_trid(4);
        noc_async_write_one_packet_with_state(slots + (page % num_slots) * page_size,
                                              dst + (page / num_banks) * page_size);
        noc_async_write_flushed_with_trid(4);
    }
    noc_async_write_barrier_with_trid(4);
    noc_async_write_set_trid(0);
}
