// conformance: kind=dataflow
// Inline 32-bit writes through a programmed command buffer, as moe_compute's dm1 signals its ring neighbour.
// The sender (role 0) programs write_at_cmd_buf with the receiver's semaphore 0 (noc_inline_dw_write_set_state)
// and writes 1 .. rounds there, waiting for the receiver's echo (its semaphore 1 = the round) in between; then
// it programs the value 7 once (set_val) and writes it to semaphore 2 by replacing the address's local part
// (update_addr_lo) without a value (update_val false). The receiver (role 1) waits for each round, echoes it
// with a plain semaphore increment, waits for semaphore 2 == 7 and stores semaphores 0 and 2 to DRAM.
// Runtime args: role, peer NOC x, peer NOC y, rounds, DRAM result address (receiver).
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t role = get_arg_val<uint32_t>(0);
    const uint32_t peer_x = get_arg_val<uint32_t>(1);
    const uint32_t peer_y = get_arg_val<uint32_t>(2);
    const uint32_t rounds = get_arg_val<uint32_t>(3);
    const uint32_t result = get_arg_val<uint32_t>(4);
    auto* sem0 = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(0));
    auto* sem1 = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(1));
    auto* sem2 = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(2));
    if (role == 0) {
        noc_inline_dw_write_set_state</*posted=*/true>(get_noc_addr(peer_x, peer_y, get_semaphore(0)), 0, 0xF,
                                                       write_at_cmd_buf, noc_index);
        for (uint32_t round = 1; round <= rounds; ++round) {
            noc_inline_dw_write_with_state</*update_addr_lo=*/false, /*update_counter=*/true, /*posted=*/true,
                                           /*update_addr_hi=*/false, /*update_val=*/true>(round);
            noc_semaphore_wait(sem1, round);
        }
        noc_inline_dw_write_set_state</*posted=*/false, /*set_val=*/true>(get_noc_addr(peer_x, peer_y, 0), 7, 0xF,
                                                                          write_at_cmd_buf, noc_index);
        noc_inline_dw_write_with_state</*update_addr_lo=*/true>(0, get_semaphore(2));
        noc_async_write_barrier();
        return;
    }
    const uint64_t echo = get_noc_addr(peer_x, peer_y, get_semaphore(1));
    for (uint32_t round = 1; round <= rounds; ++round) {
        noc_semaphore_wait(sem0, round);
        noc_semaphore_inc(echo, 1);
    }
    noc_semaphore_wait(sem2, 7);
    cb_reserve_back(0, 1);
    auto* out = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(0));
    out[0] = *sem0;
    out[1] = *sem2;
    noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(0, result), 32);
    noc_async_write_barrier();
    noc_async_atomic_barrier();
}
