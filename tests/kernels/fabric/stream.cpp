// Ordering probe. The sender writes `count` 64-byte packets into 4 rotating
// slots of the receiver (packet i fills slot i % 4 with words i * 16 + j);
// the first and the last packet are fused writes + increments of semaphore 0.
// In-order delivery leaves every slot holding its last packet. The receiver
// waits for semaphore 0 to reach `wait_for` (2: all packets; 1: only the
// first, the bug of a kernel that forgets to wait for the rest) and writes its
// 4 slots to DRAM.
// Runtime args: role (0 sender, 1 receiver), count, wait_for, dram_out, then
// the fabric connection args (sender). CBs: c_0 source chunks (count * 64 B),
// c_1 packet header, c_2 the 4 receive slots.
// conformance: kind=dataflow defines=ROUTING_MODE=137 label=1d
// conformance: kind=dataflow defines=ROUTING_MODE=162;FABRIC_2D=1 label=2d
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "fabric_send.hpp"

void kernel_main() {
    size_t arg = 0;
    const uint32_t role = get_arg_val<uint32_t>(arg++);
    const uint32_t count = get_arg_val<uint32_t>(arg++);
    const uint32_t wait_for = get_arg_val<uint32_t>(arg++);
    const uint32_t dram_out = get_arg_val<uint32_t>(arg++);

    constexpr uint32_t chunk = 64;
    const uint32_t src = get_write_ptr(0);
    auto* header = reinterpret_cast<volatile PACKET_HEADER_TYPE*>(get_write_ptr(1));
    const uint32_t slots = get_write_ptr(2);
    const uint32_t sem = get_semaphore(0);

    if (role == 0) {
        auto sender = tt::tt_fabric::WorkerToFabricEdmSender::build_from_args<ProgrammableCoreType::TENSIX>(arg);
        sender.open();
        for (uint32_t i = 0; i < count; ++i) {
            auto* words = reinterpret_cast<volatile uint32_t*>(src + i * chunk);
            for (uint32_t j = 0; j < chunk / 4; ++j) words[j] = i * 16 + j;
            const bool fused = i == 0 || i + 1 == count;
            fabric_send_buffer(sender, header, 1, src + i * chunk,
                               get_noc_addr(my_x[0], my_y[0], slots + (i % 4) * chunk), chunk, chunk, fused,
                               get_noc_addr(my_x[0], my_y[0], sem));
        }
        sender.close();
    } else {
        noc_semaphore_wait_min(reinterpret_cast<volatile uint32_t*>(sem), wait_for);
        noc_async_write(slots, get_noc_addr_from_bank_id<true>(0, dram_out), 4 * chunk);
        noc_async_write_barrier();
    }
}
