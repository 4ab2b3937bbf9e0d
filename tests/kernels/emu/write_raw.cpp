// conformance: kind=dataflow
// Writes `size` bytes of CB 0, from an offset into its page, to DRAM bank 0 at a raw bank address.
// Runtime args: bank address, size, L1 offset into the CB page.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t bank_addr = get_arg_val<uint32_t>(0);
    const uint32_t size = get_arg_val<uint32_t>(1);
    const uint32_t l1_offset = get_arg_val<uint32_t>(2);
    noc_async_write(get_write_ptr(0) + l1_offset, get_noc_addr_from_bank_id<true>(0, bank_addr), size);
    noc_async_write_barrier();
}
