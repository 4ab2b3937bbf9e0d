// 1D sparse multicast of a write and chip multicast of a scatter write (linear::experimental), each
// followed by a multicast increment that announces it.
// Sender: writes CB 0 (n_bytes) to the same L1 address (CB 2) of every chip whose bit is set in
// `hop_mask` (bit i: i + 1 hops along its connection), then scatters CB 0 over CB 3 (the first
// `chunk` bytes) and CB 4 (the rest) of the chips `start` .. `start + range - 1` hops away, then
// increments semaphore 0 of every chip 1 .. `last_hop` hops away.
// Receiver: waits for semaphore 0, writes CBs 2, 3 and 4 back to back to DRAM.
// Runtime args: send, hop_mask, start, range, last_hop, n_bytes, chunk, dram_in, dram_out, then the
// fabric connection args (send only). CBs: c_0 payload, c_1 packet header, c_2 .. c_4 landing areas.
// conformance: kind=dataflow defines=ROUTING_MODE=137 label=1d
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "tt_metal/fabric/hw/inc/edm_fabric/edm_fabric_worker_adapters.hpp"
#include "tt_metal/fabric/hw/inc/linear/api.h"
#include "tt_metal/fabric/hw/inc/tt_fabric_api.h"

void kernel_main() {
    size_t arg = 0;
    const uint32_t send = get_arg_val<uint32_t>(arg++);
    const uint32_t hop_mask = get_arg_val<uint32_t>(arg++);
    const uint32_t start = get_arg_val<uint32_t>(arg++);
    const uint32_t range = get_arg_val<uint32_t>(arg++);
    const uint32_t last_hop = get_arg_val<uint32_t>(arg++);
    const uint32_t n_bytes = get_arg_val<uint32_t>(arg++);
    const uint32_t chunk = get_arg_val<uint32_t>(arg++);
    const uint32_t dram_in = get_arg_val<uint32_t>(arg++);
    const uint32_t dram_out = get_arg_val<uint32_t>(arg++);

    auto* header = reinterpret_cast<volatile PACKET_HEADER_TYPE*>(get_write_ptr(1));
    const uint32_t sem = get_semaphore(0);

    if (send) {
        const uint32_t payload = get_write_ptr(0);
        noc_async_read(get_noc_addr_from_bank_id<true>(0, dram_in), payload, n_bytes);
        noc_async_read_barrier();
        auto sender = tt::tt_fabric::WorkerToFabricEdmSender::build_from_args<ProgrammableCoreType::TENSIX>(arg);
        sender.open();
        tt::tt_fabric::fabric_set_sparse_multicast_route(header, static_cast<uint16_t>(hop_mask));
        header->to_noc_unicast_write(
            tt::tt_fabric::NocUnicastCommandHeader{get_noc_addr(my_x[0], my_y[0], get_write_ptr(2))}, n_bytes);
        sender.wait_for_empty_write_slot();
        sender.send_payload_without_header_non_blocking_from_address(payload, n_bytes);
        sender.send_payload_flush_blocking_from_address(static_cast<uint32_t>(reinterpret_cast<uintptr_t>(header)),
                                                        sizeof(PACKET_HEADER_TYPE));

        const uint64_t addresses[2] = {get_noc_addr(my_x[0], my_y[0], get_write_ptr(3)),
                                       get_noc_addr(my_x[0], my_y[0], get_write_ptr(4))};
        const uint16_t chunk_sizes[1] = {static_cast<uint16_t>(chunk)};
        tt::tt_fabric::linear::experimental::fabric_multicast_noc_scatter_write(
            &sender, header, payload, n_bytes, tt::tt_fabric::NocUnicastScatterCommandHeader{addresses, chunk_sizes, 2},
            static_cast<uint8_t>(start), static_cast<uint8_t>(range));
        tt::tt_fabric::linear::experimental::fabric_multicast_noc_unicast_atomic_inc(
            &sender, header,
            tt::tt_fabric::NocUnicastAtomicIncCommandHeader{get_noc_addr(my_x[0], my_y[0], sem), 1, true},
            static_cast<uint8_t>(1), static_cast<uint8_t>(last_hop));
        sender.close();
    } else {
        noc_semaphore_wait_min(reinterpret_cast<volatile uint32_t*>(sem), 1);
        for (uint32_t i = 0; i < 3; ++i) {
            noc_async_write(get_write_ptr(2 + i), get_noc_addr_from_bank_id<true>(0, dram_out + i * n_bytes), n_bytes);
        }
        noc_async_write_barrier();
    }
}
