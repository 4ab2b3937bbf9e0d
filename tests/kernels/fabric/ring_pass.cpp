// A buffer passed along a line or ring of chips. Every chip waits for the
// buffer from its predecessor (semaphore 0, raised by the fused write + inc of
// the last packet), adds 1 to every uint32 word, writes it to DRAM and
// forwards it one hop. The start chip reads the input first and forwards it
// unchanged; on a ring it receives the buffer back at the end.
// Runtime args: has_prev, has_next, is_start, n_bytes, max_packet, dram_in,
// dram_out, then the fabric connection args (has_next only).
// CBs: c_0 the buffer (n_bytes), c_1 the packet header.
// conformance: kind=dataflow defines=ROUTING_MODE=137 label=1d
// conformance: kind=dataflow defines=ROUTING_MODE=162;FABRIC_2D=1 label=2d
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "fabric_send.hpp"

void kernel_main() {
    size_t arg = 0;
    const uint32_t has_prev = get_arg_val<uint32_t>(arg++);
    const uint32_t has_next = get_arg_val<uint32_t>(arg++);
    const uint32_t is_start = get_arg_val<uint32_t>(arg++);
    const uint32_t n_bytes = get_arg_val<uint32_t>(arg++);
    const uint32_t max_packet = get_arg_val<uint32_t>(arg++);
    const uint32_t dram_in = get_arg_val<uint32_t>(arg++);
    const uint32_t dram_out = get_arg_val<uint32_t>(arg++);

    const uint32_t buf = get_write_ptr(0);
    auto* header = reinterpret_cast<volatile PACKET_HEADER_TYPE*>(get_write_ptr(1));
    const uint32_t sem = get_semaphore(0);
    // Every chip runs this program, so the buffer and semaphore sit at the same place on the next chip.
    const uint64_t next_buf = get_noc_addr(my_x[0], my_y[0], buf);
    const uint64_t next_sem = get_noc_addr(my_x[0], my_y[0], sem);

    tt::tt_fabric::WorkerToFabricEdmSender sender;
    if (has_next) {
        sender = tt::tt_fabric::WorkerToFabricEdmSender::build_from_args<ProgrammableCoreType::TENSIX>(arg);
        sender.open();
    }
    if (is_start) {
        noc_async_read(get_noc_addr_from_bank_id<true>(0, dram_in), buf, n_bytes);
        noc_async_read_barrier();
        if (has_next) {
            fabric_send_buffer(sender, header, 1, buf, next_buf, n_bytes, max_packet, true, next_sem);
            noc_async_writes_flushed();
        }
    }
    if (has_prev) {
        noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(sem), 1);
        auto* words = reinterpret_cast<volatile uint32_t*>(buf);
        for (uint32_t i = 0; i < n_bytes / 4; ++i) words[i] = words[i] + 1;
        if (!is_start && has_next) {
            fabric_send_buffer(sender, header, 1, buf, next_buf, n_bytes, max_packet, true, next_sem);
            noc_async_writes_flushed();
        }
    }
    noc_async_write(buf, get_noc_addr_from_bank_id<true>(0, dram_out), n_bytes);
    noc_async_write_barrier();
    if (has_next) sender.close();
}
