// Semaphore exchange between a "sender" and a "receiver" core.
// Runtime args: role (0 sender, 1 receiver), peer noc x, peer noc y, rounds, result DRAM address.
// The sender increments the receiver's semaphore 0 once per round, each time
// after the receiver acknowledged the previous round by setting the sender's
// semaphore 1 (remote set). The receiver waits for each count, then writes
// its final semaphore value and round count to DRAM (one 32-byte page).
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t role = get_arg_val<uint32_t>(0);
    const uint32_t peer_x = get_arg_val<uint32_t>(1);
    const uint32_t peer_y = get_arg_val<uint32_t>(2);
    const uint32_t rounds = get_arg_val<uint32_t>(3);
    const uint32_t result_addr = get_arg_val<uint32_t>(4);

    const uint32_t counter = get_semaphore(0);
    const uint32_t ack = get_semaphore(1);
    auto* counter_ptr = reinterpret_cast<volatile uint32_t*>(counter);
    auto* ack_ptr = reinterpret_cast<volatile uint32_t*>(ack);

    if (role == 0) {
        for (uint32_t r = 0; r < rounds; ++r) {
            noc_semaphore_wait(ack_ptr, r);  // the receiver acknowledged round r - 1
            noc_semaphore_inc(get_noc_addr(peer_x, peer_y, counter), 1);
        }
    } else {
        // A scratch word next to the semaphores carries the ack value to the sender.
        const uint32_t scratch = get_semaphore(2);
        auto* scratch_ptr = reinterpret_cast<volatile uint32_t*>(scratch);
        for (uint32_t r = 1; r <= rounds; ++r) {
            noc_semaphore_wait_min(counter_ptr, r);
            noc_semaphore_set(scratch_ptr, r);
            noc_semaphore_set_remote(scratch, get_noc_addr(peer_x, peer_y, ack));
        }
        // Result page: [final counter, rounds seen, 6 words of zeros].
        const uint32_t page = get_semaphore(4);
        auto* out = reinterpret_cast<volatile uint32_t*>(page);
        out[0] = *counter_ptr;
        out[1] = rounds;
        for (int i = 2; i < 8; ++i) out[i] = 0;
        noc_async_write(page, get_noc_addr_from_bank_id<true>(0, result_addr), 32);
        noc_async_write_barrier();
    }
}
