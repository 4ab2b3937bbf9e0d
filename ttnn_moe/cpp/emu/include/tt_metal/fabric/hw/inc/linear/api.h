// tt::tt_fabric::linear::experimental (tt-metal 0.81.1) for the emulator: chip
// unicast over a 1D fabric connection, `num_hops` chips along its line, and
// chip multicast of a write, a scatter write or an atomic increment to `range`
// chips from `start_distance` on (each chip's same NOC addresses). Each
// wrapper fills the header, waits for a free buffer slot, sends the payload
// and then the header, like the real ones. The route variants take a
// RoutingPlaneConnectionManager and a PacketHeaderPool route id and send on each
// of the route's connections with its header (1D: no route to set per header).
#pragma once

#include <cstdint>

#include "hostdev/fabric_edm_packet_header.hpp"
#include "tt_metal/fabric/hw/inc/api_common.h"
#include "tt_metal/fabric/hw/inc/edm_fabric/edm_fabric_worker_adapters.hpp"
#include "tt_metal/fabric/hw/inc/edm_fabric/routing_plane_connection_manager.hpp"
#include "tt_metal/fabric/hw/inc/packet_header_pool.h"
#include "tt_metal/fabric/hw/inc/tt_fabric_api.h"
#include "ttnn_moe_emu/fabric_packet_send.h"

using namespace tt::tt_fabric::common::experimental;
namespace tt::tt_fabric::linear::experimental {

template <typename FabricSenderType>
FORCE_INLINE void fabric_unicast_noc_unicast_write(tt_l1_ptr FabricSenderType* client_interface,
                                                   volatile PACKET_HEADER_TYPE* packet_header, uint32_t src_addr,
                                                   uint32_t size,
                                                   tt::tt_fabric::NocUnicastCommandHeader noc_unicast_command_header,
                                                   uint8_t num_hops) {
    [[maybe_unused]] CheckFabricSenderType<FabricSenderType> check;
    packet_header->to_chip_unicast(num_hops);
    packet_header->to_noc_unicast_write(noc_unicast_command_header, size);
    ttnn_moe_emu::fabric_send_with_payload(client_interface, packet_header, src_addr, size);
}

template <typename FabricSenderType>
FORCE_INLINE void fabric_unicast_noc_unicast_atomic_inc(
    tt_l1_ptr FabricSenderType* client_interface, volatile PACKET_HEADER_TYPE* packet_header,
    tt::tt_fabric::NocUnicastAtomicIncCommandHeader noc_unicast_atomic_inc_command_header, uint8_t num_hops) {
    [[maybe_unused]] CheckFabricSenderType<FabricSenderType> check;
    packet_header->to_chip_unicast(num_hops);
    packet_header->to_noc_unicast_atomic_inc(noc_unicast_atomic_inc_command_header);
    ttnn_moe_emu::fabric_send_header_only(client_interface, packet_header);
}

template <typename FabricSenderType>
FORCE_INLINE void fabric_unicast_noc_fused_unicast_with_atomic_inc(
    tt_l1_ptr FabricSenderType* client_interface, volatile PACKET_HEADER_TYPE* packet_header, uint32_t src_addr,
    uint32_t size, tt::tt_fabric::NocUnicastAtomicIncFusedCommandHeader noc_fused_unicast_atomic_inc_command_header,
    uint8_t num_hops) {
    [[maybe_unused]] CheckFabricSenderType<FabricSenderType> check;
    packet_header->to_chip_unicast(num_hops);
    packet_header->to_noc_fused_unicast_write_atomic_inc(noc_fused_unicast_atomic_inc_command_header, size);
    ttnn_moe_emu::fabric_send_with_payload(client_interface, packet_header, src_addr, size);
}

template <typename FabricSenderType>
FORCE_INLINE void fabric_multicast_noc_unicast_atomic_inc(
    tt_l1_ptr FabricSenderType* client_interface, volatile PACKET_HEADER_TYPE* packet_header,
    tt::tt_fabric::NocUnicastAtomicIncCommandHeader noc_unicast_atomic_inc_command_header, uint8_t start_distance,
    uint8_t range) {
    [[maybe_unused]] CheckFabricSenderType<FabricSenderType> check;
    packet_header->to_chip_multicast(tt::tt_fabric::MulticastRoutingCommandHeader{start_distance, range});
    packet_header->to_noc_unicast_atomic_inc(noc_unicast_atomic_inc_command_header);
    ttnn_moe_emu::fabric_send_header_only(client_interface, packet_header);
}

template <typename FabricSenderType>
FORCE_INLINE void fabric_multicast_noc_unicast_write(tt_l1_ptr FabricSenderType* client_interface,
                                                     volatile PACKET_HEADER_TYPE* packet_header, uint32_t src_addr,
                                                     uint32_t size,
                                                     tt::tt_fabric::NocUnicastCommandHeader noc_unicast_command_header,
                                                     uint8_t start_distance, uint8_t range) {
    [[maybe_unused]] CheckFabricSenderType<FabricSenderType> check;
    packet_header->to_chip_multicast(tt::tt_fabric::MulticastRoutingCommandHeader{start_distance, range});
    packet_header->to_noc_unicast_write(noc_unicast_command_header, size);
    ttnn_moe_emu::fabric_send_with_payload(client_interface, packet_header, src_addr, size);
}

template <typename FabricSenderType>
FORCE_INLINE void fabric_unicast_noc_scatter_write(
    tt_l1_ptr FabricSenderType* client_interface, volatile PACKET_HEADER_TYPE* packet_header, uint32_t src_addr,
    uint32_t size, tt::tt_fabric::NocUnicastScatterCommandHeader noc_unicast_scatter_command_header, uint8_t num_hops) {
    [[maybe_unused]] CheckFabricSenderType<FabricSenderType> check;
    packet_header->to_chip_unicast(num_hops);
    packet_header->to_noc_unicast_scatter_write(noc_unicast_scatter_command_header, size);
    ttnn_moe_emu::fabric_send_with_payload(client_interface, packet_header, src_addr, size);
}

template <typename FabricSenderType>
FORCE_INLINE void fabric_multicast_noc_scatter_write(
    tt_l1_ptr FabricSenderType* client_interface, volatile PACKET_HEADER_TYPE* packet_header, uint32_t src_addr,
    uint32_t size, tt::tt_fabric::NocUnicastScatterCommandHeader noc_unicast_scatter_command_header,
    uint8_t start_distance, uint8_t range) {
    [[maybe_unused]] CheckFabricSenderType<FabricSenderType> check;
    packet_header->to_chip_multicast(tt::tt_fabric::MulticastRoutingCommandHeader{start_distance, range});
    packet_header->to_noc_unicast_scatter_write(noc_unicast_scatter_command_header, size);
    ttnn_moe_emu::fabric_send_with_payload(client_interface, packet_header, src_addr, size);
}

// 1D: the hop count alone routes a unicast packet.
FORCE_INLINE void fabric_set_unicast_route(tt::tt_fabric::RoutingPlaneConnectionManager&, volatile PACKET_HEADER_TYPE*,
                                           uint8_t) {}

FORCE_INLINE void fabric_unicast_noc_unicast_atomic_inc(
    tt::tt_fabric::RoutingPlaneConnectionManager& connection_manager, uint8_t route_id,
    tt::tt_fabric::NocUnicastAtomicIncCommandHeader noc_unicast_atomic_inc_command_header, uint8_t* num_hops) {
    PacketHeaderPool::for_each_header(route_id, [&](volatile PACKET_HEADER_TYPE* packet_header, uint8_t i) {
        fabric_set_unicast_route(connection_manager, packet_header, i);
        fabric_unicast_noc_unicast_atomic_inc(&connection_manager.get(i).sender, packet_header,
                                              noc_unicast_atomic_inc_command_header, num_hops[i]);
    });
}

template <typename FabricSenderType>
FORCE_INLINE void fabric_unicast_noc_fused_scatter_write_atomic_inc(
    tt_l1_ptr FabricSenderType* client_interface, volatile PACKET_HEADER_TYPE* packet_header, uint32_t src_addr,
    uint32_t size, tt::tt_fabric::NocUnicastScatterAtomicIncFusedCommandHeader command_header, uint8_t num_hops) {
    [[maybe_unused]] CheckFabricSenderType<FabricSenderType> check;
    packet_header->to_chip_unicast(num_hops);
    packet_header->to_noc_fused_unicast_scatter_write_atomic_inc(command_header, size);
    ttnn_moe_emu::fabric_send_with_payload(client_interface, packet_header, src_addr, size);
}

FORCE_INLINE void fabric_unicast_noc_fused_scatter_write_atomic_inc(
    tt::tt_fabric::RoutingPlaneConnectionManager& connection_manager, uint8_t route_id, uint32_t src_addr,
    uint32_t size, tt::tt_fabric::NocUnicastScatterAtomicIncFusedCommandHeader command_header, uint8_t* num_hops) {
    PacketHeaderPool::for_each_header(route_id, [&](volatile PACKET_HEADER_TYPE* packet_header, uint8_t i) {
        fabric_set_unicast_route(connection_manager, packet_header, i);
        fabric_unicast_noc_fused_scatter_write_atomic_inc(&connection_manager.get(i).sender, packet_header, src_addr,
                                                          size, command_header, num_hops[i]);
    });
}

// Stateful form: rewrites the masked fields of a header prepared by the _set_state call, then sends
// payload_size_bytes (as the header holds it) from src_addr.
template <UnicastFusedScatterWriteAtomicIncUpdateMask UpdateMask = UnicastFusedScatterWriteAtomicIncUpdateMask::None,
          typename FabricSenderType, typename CommandHeaderT = std::nullptr_t>
FORCE_INLINE void fabric_unicast_noc_fused_scatter_write_atomic_inc_with_state(
    tt_l1_ptr FabricSenderType* client_interface, volatile PACKET_HEADER_TYPE* packet_header, uint32_t src_addr,
    CommandHeaderT command_header = nullptr, uint16_t packet_size_bytes = 0) {
    [[maybe_unused]] CheckFabricSenderType<FabricSenderType> check;
    populate_unicast_fused_scatter_write_atomic_inc_fields<UpdateMask>(packet_header, packet_size_bytes,
                                                                       command_header);
    ttnn_moe_emu::fabric_send_with_payload(client_interface, packet_header, src_addr,
                                           packet_header->payload_size_bytes);
}

template <UnicastFusedScatterWriteAtomicIncUpdateMask UpdateMask = UnicastFusedScatterWriteAtomicIncUpdateMask::None,
          typename CommandHeaderT = std::nullptr_t>
FORCE_INLINE void fabric_unicast_noc_fused_scatter_write_atomic_inc_with_state(
    tt::tt_fabric::RoutingPlaneConnectionManager& connection_manager, uint8_t route_id, uint32_t src_addr,
    CommandHeaderT command_header = nullptr, uint16_t packet_size_bytes = 0) {
    PacketHeaderPool::for_each_header(route_id, [&](volatile PACKET_HEADER_TYPE* packet_header, uint8_t i) {
        fabric_unicast_noc_fused_scatter_write_atomic_inc_with_state<UpdateMask>(
            &connection_manager.get(i).sender, packet_header, src_addr, command_header, packet_size_bytes);
    });
}

// Prepares a header for repeated stateful sends: the route, the scatter type and the masked fields (the Flush
// field must be among them: it sets the chunk encodings).
template <UnicastFusedScatterWriteAtomicIncUpdateMask UpdateMask, typename CommandHeaderT = std::nullptr_t>
FORCE_INLINE void fabric_unicast_noc_fused_scatter_write_atomic_inc_set_state(
    volatile PACKET_HEADER_TYPE* packet_header, uint8_t num_hops, CommandHeaderT command_header = nullptr,
    uint16_t packet_size_bytes = 0) {
    static_assert(has_flag(UpdateMask, UnicastFusedScatterWriteAtomicIncUpdateMask::Flush),
                  "When setting state, the Flush field must be updated to set the chunk encoding for the semaphore "
                  "increment chunk");
    packet_header->to_chip_unicast(num_hops);
    packet_header->noc_send_type = tt::tt_fabric::NOC_UNICAST_SCATTER_WRITE;
    populate_unicast_fused_scatter_write_atomic_inc_fields<UpdateMask>(packet_header, packet_size_bytes,
                                                                       command_header);
}

template <UnicastFusedScatterWriteAtomicIncUpdateMask UpdateMask, typename CommandHeaderT = std::nullptr_t>
FORCE_INLINE void fabric_unicast_noc_fused_scatter_write_atomic_inc_set_state(
    tt::tt_fabric::RoutingPlaneConnectionManager& connection_manager, uint8_t route_id, uint8_t* num_hops,
    CommandHeaderT command_header = nullptr, uint16_t packet_size_bytes = 0) {
    PacketHeaderPool::for_each_header(route_id, [&](volatile PACKET_HEADER_TYPE* packet_header, uint8_t i) {
        fabric_set_unicast_route(connection_manager, packet_header, i);
        fabric_unicast_noc_fused_scatter_write_atomic_inc_set_state<UpdateMask>(packet_header, num_hops[i],
                                                                                command_header, packet_size_bytes);
    });
}

}  // namespace tt::tt_fabric::linear::experimental
