// tt::tt_fabric::linear::experimental (tt-metal 0.81.1) for the emulator: chip
// unicast over a 1D fabric connection, `num_hops` chips along its line, and
// chip multicast of a write, a scatter write or an atomic increment to `range`
// chips from `start_distance` on (each chip's same NOC addresses). Each
// wrapper fills the header, waits for a free buffer slot, sends the payload
// and then the header, like the real ones.
#pragma once

#include <cstdint>

#include "hostdev/fabric_edm_packet_header.hpp"
#include "tt_metal/fabric/hw/inc/api_common.h"
#include "tt_metal/fabric/hw/inc/edm_fabric/edm_fabric_worker_adapters.hpp"
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

}  // namespace tt::tt_fabric::linear::experimental
