// conformance: kind=dataflow
// Reserves `pages` pages of CB 0 and stores a ramp into the first `stored` bytes through a pointer,
// then writes `size` bytes of the first page to DRAM bank 0 (mode 0) or pushes the pages (mode 1).
// Runtime args: bank address, size, stored bytes, mode, pages.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t bank_addr = get_arg_val<uint32_t>(0);
    const uint32_t size = get_arg_val<uint32_t>(1);
    const uint32_t stored = get_arg_val<uint32_t>(2);
    const uint32_t mode = get_arg_val<uint32_t>(3);
    const uint32_t pages = get_arg_val<uint32_t>(4);
    cb_reserve_back(0, pages);
    volatile uint8_t* page = reinterpret_cast<volatile uint8_t*>(get_write_ptr(0));
    for (uint32_t i = 0; i < stored; ++i) page[i] = static_cast<uint8_t>(i);
    if (mode == 0) {
        noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(0, bank_addr), size);
        noc_async_write_barrier();
    } else {
        cb_push_back(0, pages);
    }
}
