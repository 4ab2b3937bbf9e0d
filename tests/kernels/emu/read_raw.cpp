// Reads `size` bytes from DRAM bank 0 at a raw bank address into CB 0.
// Runtime args: bank address, size, L1 offset into the CB page.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t bank_addr = get_arg_val<uint32_t>(0);
    const uint32_t size = get_arg_val<uint32_t>(1);
    const uint32_t l1_offset = get_arg_val<uint32_t>(2);
    cb_reserve_back(0, 1);
    noc_async_read(get_noc_addr_from_bank_id<true>(0, bank_addr), get_write_ptr(0) + l1_offset, size);
    noc_async_read_barrier();
    cb_push_back(0, 1);
}
