// conformance: kind=dataflow
// Writes the write pointers of CBs 0..3 (four uint32) to DRAM bank 0 at a raw bank address, staged in CB 0.
// Runtime args: bank address.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t bank_addr = get_arg_val<uint32_t>(0);
    uint32_t pointers[4];
    for (uint32_t i = 0; i < 4; ++i) pointers[i] = get_write_ptr(i);
    auto* staging = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
    for (uint32_t i = 0; i < 4; ++i) staging[i] = pointers[i];
    noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(0, bank_addr), 16);
    noc_async_write_barrier();
}
