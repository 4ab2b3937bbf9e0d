// RoutingPlaneConnectionManager, PacketHeaderPool routes and the fused scatter write + increment on a line: the
// middle chip sends its buffer (n_pages pages, two per packet) to both neighbours over one route of two
// connections. Each packet writes its first page to the receive buffer's page i + 1 and its second to page i
// (pairs swapped) and increments semaphore 0 by 3: _set_state prepares the route's headers once, _with_state
// then changes only the write addresses per packet. Receivers wait for 3 per packet and write the receive buffer
// to DRAM.
// Runtime args: send, n_pages, page bytes, dram_in, dram_out, number of connections, then per connection its tag
// and its fabric connection args. CBs: c_0 send buffer, c_2 receive buffer.
// conformance: kind=dataflow defines=ROUTING_MODE=137;API_TYPE_Linear=1 label=1d
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "tt_metal/fabric/hw/inc/linear/api.h"
#include "tt_metal/fabric/hw/inc/packet_header_pool.h"

using namespace tt::tt_fabric::linear::experimental;

void kernel_main() {
    size_t arg = 0;
    const uint32_t send = get_arg_val<uint32_t>(arg++);
    const uint32_t n_pages = get_arg_val<uint32_t>(arg++);
    const uint32_t page = get_arg_val<uint32_t>(arg++);
    const uint32_t dram_in = get_arg_val<uint32_t>(arg++);
    const uint32_t dram_out = get_arg_val<uint32_t>(arg++);
    const uint32_t connections = get_arg_val<uint32_t>(arg++);
    constexpr uint16_t increment = 3;

    const uint32_t send_buf = get_write_ptr(0);
    const uint32_t recv_buf = get_write_ptr(2);
    const uint32_t sem = get_semaphore(0);

    if (send) {
        tt::tt_fabric::RoutingPlaneConnectionManager manager;
        open_connections(manager, connections, arg);
        const uint8_t route = PacketHeaderPool::allocate_header_n(connections);
        uint8_t hops[2] = {1, 1};
        noc_async_read(get_noc_addr_from_bank_id<true>(0, dram_in), send_buf, n_pages * page);
        noc_async_read_barrier();
        const uint64_t sem_noc = get_noc_addr(my_x[0], my_y[0], sem);
        fabric_unicast_noc_fused_scatter_write_atomic_inc_set_state<UnicastFusedScatterWriteAtomicIncUpdateMask::All>(
            manager, route, hops,
            tt::tt_fabric::NocUnicastScatterAtomicIncFusedCommandHeader({0, 0}, sem_noc, {static_cast<uint16_t>(page)},
                                                                        increment, true),
            2 * page);
        for (uint32_t i = 0; i < n_pages; i += 2) {
            const uint64_t first = get_noc_addr(my_x[0], my_y[0], recv_buf + (i + 1) * page);
            const uint64_t second = get_noc_addr(my_x[0], my_y[0], recv_buf + i * page);
            fabric_unicast_noc_fused_scatter_write_atomic_inc_with_state<
                UnicastFusedScatterWriteAtomicIncUpdateMask::WriteDstAddrs>(
                manager, route, send_buf + i * page,
                tt::tt_fabric::NocUnicastScatterAtomicIncFusedCommandHeader(
                    {first, second}, sem_noc, {static_cast<uint16_t>(page)}, increment, true));
        }
        close_connections(manager);
    } else {
        noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(sem), increment * n_pages / 2);
        noc_async_write(recv_buf, get_noc_addr_from_bank_id<true>(0, dram_out), n_pages * page);
        noc_async_write_barrier();
    }
}
