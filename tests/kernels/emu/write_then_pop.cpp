// conformance: kind=dataflow
// Fills a page of CB 0 with a byte pattern, writes it to DRAM bank 0 and pops it, either
// after noc_async_writes_flushed() (mode 0) or before (mode 1: the emulator must catch it).
// Runtime args: bank address, size, mode.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t bank_addr = get_arg_val<uint32_t>(0);
    const uint32_t size = get_arg_val<uint32_t>(1);
    const uint32_t mode = get_arg_val<uint32_t>(2);
    cb_reserve_back(0, 1);
    volatile uint8_t* bytes = reinterpret_cast<volatile uint8_t*>(get_write_ptr(0));
    for (uint32_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 1);
    cb_push_back(0, 1);
    cb_wait_front(0, 1);
    noc_async_write(get_read_ptr(0), get_noc_addr_from_bank_id<true>(0, bank_addr), size);
    if (mode == 0) noc_async_writes_flushed();
    cb_pop_front(0, 1);
    noc_async_write_barrier();
}
