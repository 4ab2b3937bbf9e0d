// A fabric mux (V2) client: sends a buffer to the same core `hops` chips along the line, then one
// semaphore increment, through tt::tt_fabric::FabricMuxV2Sender (the client tt-metal's MoE combine uses),
// and records the channel's free slots right after the open and after the sends have drained.
// Sender: reads n_bytes from DRAM, sends them in packets of at most max_packet bytes, waits until the
// channel is back at its capacity, sends the increment, closes. Receiver: waits until semaphore 0 is 1,
// writes the receive buffer to DRAM. Both write [capacity at open, free slots after draining] after
// the data (receiver: zeros).
// Runtime args: send, recv, hops, n_bytes, max_packet, dram_in, dram_out, then the 11 mux client args
// (send only). CBs: c_0 send buffer, c_1 packet header, c_2 receive buffer, c_3 two words.
// conformance: kind=dataflow defines=ROUTING_MODE=137 label=1d
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "tt_metal/fabric/hw/inc/linear/api.h"
#include "tt_metal/fabric/hw/inc/tt_fabric_mux_v2_sender.hpp"

void kernel_main() {
    size_t arg = 0;
    const uint32_t send = get_arg_val<uint32_t>(arg++);
    const uint32_t recv = get_arg_val<uint32_t>(arg++);
    const uint32_t hops = get_arg_val<uint32_t>(arg++);
    const uint32_t n_bytes = get_arg_val<uint32_t>(arg++);
    const uint32_t max_packet = get_arg_val<uint32_t>(arg++);
    const uint32_t dram_in = get_arg_val<uint32_t>(arg++);
    const uint32_t dram_out = get_arg_val<uint32_t>(arg++);

    const uint32_t send_buf = get_write_ptr(0);
    auto* header = reinterpret_cast<volatile PACKET_HEADER_TYPE*>(get_write_ptr(1));
    const uint32_t recv_buf = get_write_ptr(2);
    auto* slots = reinterpret_cast<volatile uint32_t*>(get_write_ptr(3));
    const uint32_t sem = get_semaphore(0);
    slots[0] = slots[1] = 0;

    if (send) {
        auto mux = tt::tt_fabric::FabricMuxV2Sender<>::build_from_args(arg);
        mux.open();
        const uint32_t capacity = mux.get_num_free_write_slots();
        noc_async_read(get_noc_addr_from_bank_id<true>(0, dram_in), send_buf, n_bytes);
        noc_async_read_barrier();
        for (uint32_t offset = 0; offset < n_bytes; offset += max_packet) {
            const uint32_t size = n_bytes - offset < max_packet ? n_bytes - offset : max_packet;
            tt::tt_fabric::linear::experimental::fabric_unicast_noc_unicast_write(
                &mux, header, send_buf + offset, size,
                tt::tt_fabric::NocUnicastCommandHeader{get_noc_addr(my_x[0], my_y[0], recv_buf + offset)},
                static_cast<uint8_t>(hops));
            noc_async_writes_flushed();
        }
        while (mux.get_num_free_write_slots() != capacity) {
        }
        slots[0] = capacity;
        slots[1] = mux.get_num_free_write_slots();
        tt::tt_fabric::linear::experimental::fabric_unicast_noc_unicast_atomic_inc(
            &mux, header, tt::tt_fabric::NocUnicastAtomicIncCommandHeader(get_noc_addr(my_x[0], my_y[0], sem), 1, true),
            static_cast<uint8_t>(hops));
        mux.close();
    }
    if (recv) {
        noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(sem), 1);
        noc_async_write(recv_buf, get_noc_addr_from_bank_id<true>(0, dram_out), n_bytes);
    }
    noc_async_write(get_write_ptr(3), get_noc_addr_from_bank_id<true>(0, dram_out + n_bytes), 2 * sizeof(uint32_t));
    noc_async_write_barrier();
}
