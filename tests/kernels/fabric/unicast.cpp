// Unicast of a buffer to one chip and, independently, reception of one.
// Sender: reads n_bytes from DRAM, writes them over the fabric to the
// receive buffer of the same core on the destination chip (packets of at
// most max_packet bytes), then increments its semaphore 0 once.
// Receiver: waits until semaphore 0 reached `expect`, writes the receive
// buffer to DRAM.
// Runtime args: send, recv, route (hops in 1D, destination chip in 2D),
// n_bytes, max_packet, dram_in, dram_out, expect, then the fabric connection
// args (send only). CBs: c_0 send buffer, c_1 packet header, c_2 receive buffer.
// conformance: kind=dataflow defines=ROUTING_MODE=137 label=1d
// conformance: kind=dataflow defines=ROUTING_MODE=162;FABRIC_2D=1 label=2d
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "fabric_send.hpp"

void kernel_main() {
    size_t arg = 0;
    const uint32_t send = get_arg_val<uint32_t>(arg++);
    const uint32_t recv = get_arg_val<uint32_t>(arg++);
    const uint32_t route = get_arg_val<uint32_t>(arg++);
    const uint32_t n_bytes = get_arg_val<uint32_t>(arg++);
    const uint32_t max_packet = get_arg_val<uint32_t>(arg++);
    const uint32_t dram_in = get_arg_val<uint32_t>(arg++);
    const uint32_t dram_out = get_arg_val<uint32_t>(arg++);
    const uint32_t expect = get_arg_val<uint32_t>(arg++);

    const uint32_t send_buf = get_write_ptr(0);
    auto* header = reinterpret_cast<volatile PACKET_HEADER_TYPE*>(get_write_ptr(1));
    const uint32_t recv_buf = get_write_ptr(2);
    const uint32_t sem = get_semaphore(0);

    if (send) {
        auto sender = tt::tt_fabric::WorkerToFabricEdmSender::build_from_args<ProgrammableCoreType::TENSIX>(arg);
        sender.open_start();
        noc_async_read(get_noc_addr_from_bank_id<true>(0, dram_in), send_buf, n_bytes);
        noc_async_read_barrier();
        sender.open_finish();
        fabric_send_buffer(sender, header, route, send_buf, get_noc_addr(my_x[0], my_y[0], recv_buf), n_bytes,
                           max_packet, false, 0);
        fabric_send_inc(sender, header, route, get_noc_addr(my_x[0], my_y[0], sem));
        sender.close();
    }
    if (recv) {
        noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(sem), expect);
        noc_async_write(recv_buf, get_noc_addr_from_bank_id<true>(0, dram_out), n_bytes);
        noc_async_write_barrier();
    }
}
