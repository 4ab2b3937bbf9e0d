// conformance: kind=dataflow defines=ROUTING_MODE=137 label=1d
// Fabric connection misuse the emulator must report. Runtime args: mode, then
// the fabric connection args. mode 0: sends an increment without open();
// mode 1: opens, sends, never closes. CB c_1: the packet header.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "fabric_send.hpp"

void kernel_main() {
    size_t arg = 0;
    const uint32_t mode = get_arg_val<uint32_t>(arg++);
    auto sender = tt::tt_fabric::WorkerToFabricEdmSender::build_from_args<ProgrammableCoreType::TENSIX>(arg);
    auto* header = reinterpret_cast<volatile PACKET_HEADER_TYPE*>(get_write_ptr(1));
    if (mode == 1) sender.open();
    fabric_send_inc(sender, header, 1, get_noc_addr(my_x[0], my_y[0], get_semaphore(0)));
}
