// FabricConnectionManager on a line: the middle chip sends its buffer to both
// neighbours, one hop over the forward and one over the backward connection
// (fused write + increment of semaphore 0), the end chips receive it.
// Runtime args: send, n_bytes, max_packet, dram_in, dram_out, then the
// manager's args: forward flag [+ 3 connection args], backward flag
// [+ 3 connection args]. Receivers pass no connections (flags 0).
// CBs: c_0 send buffer, c_1 packet header, c_2 receive buffer.
// conformance: kind=dataflow defines=ROUTING_MODE=137 label=1d
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "fabric_send.hpp"
#include "tt_metal/fabric/hw/inc/edm_fabric/fabric_connection_manager.hpp"

void kernel_main() {
    size_t arg = 0;
    const uint32_t send = get_arg_val<uint32_t>(arg++);
    const uint32_t n_bytes = get_arg_val<uint32_t>(arg++);
    const uint32_t max_packet = get_arg_val<uint32_t>(arg++);
    const uint32_t dram_in = get_arg_val<uint32_t>(arg++);
    const uint32_t dram_out = get_arg_val<uint32_t>(arg++);

    auto manager =
        FabricConnectionManager::build_from_args<FabricConnectionManager::BUILD_AND_OPEN_CONNECTION_START_ONLY>(arg);
    const uint32_t send_buf = get_write_ptr(0);
    auto* header = reinterpret_cast<volatile PACKET_HEADER_TYPE*>(get_write_ptr(1));
    const uint32_t recv_buf = get_write_ptr(2);
    const uint32_t sem = get_semaphore(0);

    if (send) {
        noc_async_read(get_noc_addr_from_bank_id<true>(0, dram_in), send_buf, n_bytes);
        noc_async_read_barrier();
        manager.open_finish();
        const uint64_t dst = get_noc_addr(my_x[0], my_y[0], recv_buf);
        const uint64_t sem_noc = get_noc_addr(my_x[0], my_y[0], sem);
        fabric_send_buffer(manager.get_forward_connection(), header, 1, send_buf, dst, n_bytes, max_packet, true,
                           sem_noc);
        fabric_send_buffer(manager.get_backward_connection(), header, 1, send_buf, dst, n_bytes, max_packet, true,
                           sem_noc);
        manager.close();
    } else {
        ASSERT(!manager.is_logically_connected());
        noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(sem), 1);
        noc_async_write(recv_buf, get_noc_addr_from_bank_id<true>(0, dram_out), n_bytes);
        noc_async_write_barrier();
    }
}
