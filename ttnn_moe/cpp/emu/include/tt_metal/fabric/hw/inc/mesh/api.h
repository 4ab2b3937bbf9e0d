// tt::tt_fabric::mesh::experimental (tt-metal 0.81.1) for the emulator: chip
// unicast over a 2D fabric to a destination (chip id, mesh id). The route is
// set in the header (SetRoute = false keeps a route set earlier); the
// connection must point in the route's first-hop direction.
#pragma once

#include <cstdint>

#include "hostdev/fabric_edm_packet_header.hpp"
#include "tt_metal/fabric/hw/inc/api_common.h"
#include "tt_metal/fabric/hw/inc/edm_fabric/edm_fabric_worker_adapters.hpp"
#include "tt_metal/fabric/hw/inc/tt_fabric_api.h"
#include "ttnn_moe_emu/fabric_packet_send.h"

using namespace tt::tt_fabric::common::experimental;
namespace tt::tt_fabric::mesh::experimental {

template <typename FabricSenderType, bool SetRoute = true>
FORCE_INLINE void fabric_unicast_noc_unicast_write(tt_l1_ptr FabricSenderType* client_interface,
                                                   volatile PACKET_HEADER_TYPE* packet_header, uint8_t dst_dev_id,
                                                   uint16_t dst_mesh_id, uint32_t src_addr, uint32_t size,
                                                   tt::tt_fabric::NocUnicastCommandHeader noc_unicast_command_header) {
    [[maybe_unused]] CheckFabricSenderType<FabricSenderType> check;
    if constexpr (SetRoute) {
        fabric_set_unicast_route(packet_header, dst_dev_id, dst_mesh_id);
    }
    packet_header->to_noc_unicast_write(noc_unicast_command_header, size);
    ttnn_moe_emu::fabric_send_with_payload(client_interface, packet_header, src_addr, size);
}

template <typename FabricSenderType>
FORCE_INLINE void fabric_unicast_noc_unicast_atomic_inc(
    tt_l1_ptr FabricSenderType* client_interface, volatile PACKET_HEADER_TYPE* packet_header, uint8_t dst_dev_id,
    uint16_t dst_mesh_id, tt::tt_fabric::NocUnicastAtomicIncCommandHeader noc_unicast_atomic_inc_command_header) {
    [[maybe_unused]] CheckFabricSenderType<FabricSenderType> check;
    fabric_set_unicast_route(packet_header, dst_dev_id, dst_mesh_id);
    packet_header->to_noc_unicast_atomic_inc(noc_unicast_atomic_inc_command_header);
    ttnn_moe_emu::fabric_send_header_only(client_interface, packet_header);
}

template <typename FabricSenderType, bool SetRoute = true>
FORCE_INLINE void fabric_unicast_noc_fused_unicast_with_atomic_inc(
    tt_l1_ptr FabricSenderType* client_interface, volatile PACKET_HEADER_TYPE* packet_header, uint8_t dst_dev_id,
    uint16_t dst_mesh_id, uint32_t src_addr, uint32_t size,
    tt::tt_fabric::NocUnicastAtomicIncFusedCommandHeader noc_fused_unicast_atomic_inc_command_header) {
    [[maybe_unused]] CheckFabricSenderType<FabricSenderType> check;
    if constexpr (SetRoute) {
        fabric_set_unicast_route(packet_header, dst_dev_id, dst_mesh_id);
    }
    packet_header->to_noc_fused_unicast_write_atomic_inc(noc_fused_unicast_atomic_inc_command_header, size);
    ttnn_moe_emu::fabric_send_with_payload(client_interface, packet_header, src_addr, size);
}

}  // namespace tt::tt_fabric::mesh::experimental
