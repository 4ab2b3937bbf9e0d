// The send sequence every fabric unicast wrapper (linear/api.h, mesh/api.h) ends with,
// once it has filled the packet header: wait for a free buffer slot on the connection,
// send the payload (if the packet has one), then the header, which completes the
// packet, as the real wrappers do. Emulator-internal: kernels call the wrappers.
#pragma once

#include <cstdint>

#include "hostdev/fabric_edm_packet_header.hpp"
#include "tt_metal/fabric/hw/inc/edm_fabric/edm_fabric_worker_adapters.hpp"

namespace ttnn_moe_emu {

template <typename FabricSenderType>
FORCE_INLINE void fabric_send_header(tt_l1_ptr FabricSenderType* client_interface,
                                     volatile PACKET_HEADER_TYPE* packet_header) {
    client_interface->send_payload_flush_non_blocking_from_address((uint32_t)(uintptr_t)packet_header,
                                                                   sizeof(PACKET_HEADER_TYPE));
}

// A packet without payload (an atomic increment).
template <typename FabricSenderType>
FORCE_INLINE void fabric_send_header_only(tt_l1_ptr FabricSenderType* client_interface,
                                          volatile PACKET_HEADER_TYPE* packet_header) {
    client_interface->wait_for_empty_write_slot();
    fabric_send_header(client_interface, packet_header);
}

// A packet carrying `size` bytes from L1 `src_addr` (a write, or a write fused with an increment).
template <typename FabricSenderType>
FORCE_INLINE void fabric_send_with_payload(tt_l1_ptr FabricSenderType* client_interface,
                                           volatile PACKET_HEADER_TYPE* packet_header, uint32_t src_addr,
                                           uint32_t size) {
    client_interface->wait_for_empty_write_slot();
    client_interface->send_payload_without_header_non_blocking_from_address(src_addr, size);
    fabric_send_header(client_interface, packet_header);
}

}  // namespace ttnn_moe_emu
