// 1D chip multicast of an atomic increment (linear::experimental), then a unicast one.
// Sender: increments semaphore 0 of the same core on the chips `start` .. `start + range - 1`
// hops along its connection, then increments it by `tail_inc` on the chip `tail_hops` away.
// Receiver: waits until semaphore 0 reached `expect`, writes its value to DRAM.
// Runtime args: send, start, range, tail_hops, tail_inc, expect, dram_out, then the fabric
// connection args (send only). CBs: c_0 packet header, c_1 staging word.
// conformance: kind=dataflow defines=ROUTING_MODE=137 label=1d
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "tt_metal/fabric/hw/inc/edm_fabric/edm_fabric_worker_adapters.hpp"
#include "tt_metal/fabric/hw/inc/linear/api.h"

void kernel_main() {
    size_t arg = 0;
    const uint32_t send = get_arg_val<uint32_t>(arg++);
    const uint32_t start = get_arg_val<uint32_t>(arg++);
    const uint32_t range = get_arg_val<uint32_t>(arg++);
    const uint32_t tail_hops = get_arg_val<uint32_t>(arg++);
    const uint32_t tail_inc = get_arg_val<uint32_t>(arg++);
    const uint32_t expect = get_arg_val<uint32_t>(arg++);
    const uint32_t dram_out = get_arg_val<uint32_t>(arg++);

    auto* header = reinterpret_cast<volatile PACKET_HEADER_TYPE*>(get_write_ptr(0));
    const uint32_t sem = get_semaphore(0);
    const uint64_t sem_noc = get_noc_addr(my_x[0], my_y[0], sem);

    if (send) {
        auto sender = tt::tt_fabric::WorkerToFabricEdmSender::build_from_args<ProgrammableCoreType::TENSIX>(arg);
        sender.open();
        tt::tt_fabric::linear::experimental::fabric_multicast_noc_unicast_atomic_inc(
            &sender, header, tt::tt_fabric::NocUnicastAtomicIncCommandHeader{sem_noc, 1, true},
            static_cast<uint8_t>(start), static_cast<uint8_t>(range));
        tt::tt_fabric::linear::experimental::fabric_unicast_noc_unicast_atomic_inc(
            &sender, header, tt::tt_fabric::NocUnicastAtomicIncCommandHeader{sem_noc, tail_inc, true},
            static_cast<uint8_t>(tail_hops));
        sender.close();
    } else {
        auto* value = reinterpret_cast<volatile uint32_t*>(sem);
        noc_semaphore_wait_min(value, expect);
        auto* staging = reinterpret_cast<volatile uint32_t*>(get_write_ptr(1));
        staging[0] = *value;
        noc_async_write(get_write_ptr(1), get_noc_addr_from_bank_id<true>(0, dram_out), 4);
        noc_async_write_barrier();
    }
}
