// Route helpers of tt-metal 0.81.1's tt_fabric_api.h for the emulator:
// fabric_set_unicast_route for 1D headers (hops or a chip on the line) and 2D
// headers (destination chip and mesh ids), the first-hop direction of a
// destination, and the direction of a connection's channel. Like the real
// header it brings tt::tt_fabric into the global namespace (the CCL kernel
// helpers name WorkerToFabricEdmSender and eth_chan_directions unqualified).
// fabric_set_sparse_multicast_route: 1D headers, the chips i + 1 hops away for
// every bit i of the mask (at most 16 hops, as the real fabric).
#pragma once

#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "hostdev/fabric_edm_packet_header.hpp"
#include "hostdevcommon/fabric_common.h"
#include "tt-metalium/experimental/fabric/fabric_edm_types.hpp"

namespace tt::tt_fabric {

inline eth_chan_directions get_next_hop_router_direction(uint32_t dst_mesh_id, uint32_t dst_dev_id) {
    return static_cast<eth_chan_directions>(
        ttnn_moe_emu::services->fabric->next_hop_direction(dst_mesh_id, dst_dev_id));
}

inline uint8_t get_router_direction(uint32_t eth_channel) {
    return static_cast<uint8_t>(ttnn_moe_emu::services->fabric->channel_direction(eth_channel));
}

// 2D: the packet carries its destination; the router network finds the path.
inline bool fabric_set_unicast_route(volatile tt_l1_ptr HybridMeshPacketHeader* packet_header, uint16_t dst_dev_id,
                                     uint16_t dst_mesh_id) {
    packet_header->dst_start_chip_id = dst_dev_id;
    packet_header->dst_start_mesh_id = dst_mesh_id;
    packet_header->mcast_params_64 = 0;
    packet_header->routing_fields.value = 0;
    return true;
}

// 1D: target_num is a hop count, or (target_as_dev) a chip id on the connection's line.
template <bool target_as_dev = true, bool compressed = true>
bool fabric_set_unicast_route(volatile tt_l1_ptr LowLatencyPacketHeader* packet_header, uint16_t target_num) {
    if constexpr (target_as_dev) {
        packet_header->routing_fields.value = 0;
        packet_header->routing_fields.route_buffer[0] = static_cast<uint32_t>(target_num) + 1;
    } else {
        packet_header->routing_fields.value = target_num;
        packet_header->routing_fields.route_buffer[0] = 0;
    }
    return true;
}

template <typename HopMaskType>
void fabric_set_sparse_multicast_route(volatile tt_l1_ptr LowLatencyPacketHeader* packet_header, HopMaskType hop_mask) {
    if (hop_mask == 0 || static_cast<uint64_t>(hop_mask) > 0xFFFFu) {
        ttnn_moe_emu::fail(
            "fabric_set_sparse_multicast_route: the hop mask must name at least one and at most 16 hops");
    }
    packet_header->routing_fields.value = static_cast<uint32_t>(hop_mask);
    packet_header->routing_fields.route_buffer[0] = LowLatencyRoutingFields::SPARSE_MULTICAST;
}

}  // namespace tt::tt_fabric

using namespace tt::tt_fabric;
