// conformance: kind=dataflow
// Reads `size` bytes from DRAM bank 0 into CB 0's page, then uses them in one of four
// ways; all but the first forget noc_async_read_barrier(), which the emulator must catch.
// Runtime args: bank address, size, mode (0: barrier then push, 1: push without a
// barrier, 2: return without a barrier, 3: write the page back out without a barrier),
// bank address to write back to (mode 0 and 3).
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t bank_addr = get_arg_val<uint32_t>(0);
    const uint32_t size = get_arg_val<uint32_t>(1);
    const uint32_t mode = get_arg_val<uint32_t>(2);
    const uint32_t out_addr = get_arg_val<uint32_t>(3);
    cb_reserve_back(0, 1);
    const uint32_t page = get_write_ptr(0);
    noc_async_read(get_noc_addr_from_bank_id<true>(0, bank_addr), page, size);
    if (mode == 0) noc_async_read_barrier();
    if (mode == 0 || mode == 3) {
        noc_async_write(page, get_noc_addr_from_bank_id<true>(0, out_addr), size);
        noc_async_write_barrier();
    }
    if (mode == 0 || mode == 1) cb_push_back(0, 1);
}
