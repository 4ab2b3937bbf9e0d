// conformance: kind=dataflow
// Adds 1 to each of `count` uint32 words at an L1 address of another core: reads them over the NOC into
// CB 0, increments them there and writes them back.
// Runtime args: NOC x, NOC y, L1 address, word count.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t noc_x = get_arg_val<uint32_t>(0);
    const uint32_t noc_y = get_arg_val<uint32_t>(1);
    const uint32_t address = get_arg_val<uint32_t>(2);
    const uint32_t count = get_arg_val<uint32_t>(3);
    const uint64_t remote = get_noc_addr(noc_x, noc_y, address);
    const uint32_t local = get_write_ptr(0);
    noc_async_read(remote, local, count * sizeof(uint32_t));
    noc_async_read_barrier();
    auto* words = reinterpret_cast<volatile uint32_t*>(local);
    for (uint32_t i = 0; i < count; ++i) words[i] = words[i] + 1;
    noc_async_write(local, remote, count * sizeof(uint32_t));
    noc_async_write_barrier();
}
