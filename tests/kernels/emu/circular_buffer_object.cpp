// conformance: kind=dataflow
// The CircularBuffer object, Noc::async_write_zeros and semaphores addressed
// by a bare L1 offset (as a host-allocated global semaphore is).
// Runtime args: result DRAM address, bytes to zero, semaphore 0's L1 offset.
// CB c_0: one page of 64 bytes. The kernel fills the page with 0xAB, zeroes
// its first `zero_bytes` through the Noc, sets semaphore 0 to 7 through the
// bare offset, waits for it, and writes the page with the semaphore value
// (read through get_semaphore) in its last word to DRAM.
#include <cstdint>

#include "api/dataflow/circular_buffer.h"
#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/noc.h"

void kernel_main() {
    const uint32_t result_addr = get_arg_val<uint32_t>(0);
    const uint32_t zero_bytes = get_arg_val<uint32_t>(1);
    const uint32_t semaphore_offset = get_arg_val<uint32_t>(2);
    constexpr uint32_t page_bytes = 64;

    CircularBuffer cb(0);
    cb.reserve_back(1);
    auto* page = reinterpret_cast<volatile uint8_t*>(cb.get_write_ptr());
    for (uint32_t i = 0; i < page_bytes; ++i) page[i] = 0xAB;

    Noc noc;
    noc.async_write_zeros(cb, zero_bytes);
    noc.write_zeros_l1_barrier();

    auto* semaphore = reinterpret_cast<volatile uint32_t*>(semaphore_offset);
    noc_semaphore_set(semaphore, 7);
    noc_semaphore_wait(semaphore, 7);
    reinterpret_cast<volatile uint32_t*>(page)[page_bytes / 4 - 1] =
        *reinterpret_cast<volatile uint32_t*>(get_semaphore(0));

    cb.push_back(1);
    cb.wait_front(1);
    noc_async_write(cb.get_read_ptr(), get_noc_addr_from_bank_id<true>(0, result_addr), page_bytes);
    noc_async_write_barrier();
    cb.pop_front(1);
}
