// Shared pieces of the fabric wrapper APIs (tt-metal 0.81.1 api_common.h subset): the sender type check, the
// fused scatter write + increment's update mask and header fields, and opening / closing the connections of a
// RoutingPlaneConnectionManager from the runtime args.
#pragma once

#include <cstdint>
#include <type_traits>

#include "hostdev/fabric_edm_packet_header.hpp"
#include "tt_metal/fabric/hw/inc/edm_fabric/edm_fabric_worker_adapters.hpp"
#include "tt_metal/fabric/hw/inc/edm_fabric/routing_plane_connection_manager.hpp"

namespace tt::tt_fabric {
// The transient mux (V2) client, defined in tt_fabric_mux_v2_sender.hpp.
template <bool EAGER_STAGING = false, uint8_t NUM_BUFFERS = 0>
class FabricMuxV2Sender;
}  // namespace tt::tt_fabric

namespace tt::tt_fabric::common::experimental {

template <typename T>
struct is_fabric_mux_v2_sender : std::false_type {};
template <bool E, uint8_t N>
struct is_fabric_mux_v2_sender<tt::tt_fabric::FabricMuxV2Sender<E, N>> : std::true_type {};
template <typename T>
constexpr bool is_fabric_mux_v2_sender_v = is_fabric_mux_v2_sender<T>::value;

template <typename FabricSenderType>
struct CheckFabricSenderType {
    static_assert(is_edm_sender_v<FabricSenderType> || is_fabric_mux_v2_sender_v<FabricSenderType>,
                  "FabricSenderType must be WorkerToFabricEdmSender or FabricMuxV2Sender (the senders the emulator "
                  "provides)");
};

// Which fields of a packet header a stateful fused scatter write + increment call rewrites.
enum class UnicastFusedScatterWriteAtomicIncUpdateMask : uint32_t {
    None = 0,
    WriteDstAddrs = 1u << 0,
    SemaphoreDstAddr = 1u << 1,
    WriteChunkSizes = 1u << 2,
    Val = 1u << 3,
    Flush = 1u << 4,
    PayloadSize = 1u << 5,
    All = (1u << 6) - 1,
};
constexpr bool has_flag(UnicastFusedScatterWriteAtomicIncUpdateMask mask,
                        UnicastFusedScatterWriteAtomicIncUpdateMask bit) {
    return (static_cast<uint32_t>(mask) & static_cast<uint32_t>(bit)) != 0;
}

// Writes the masked fields of a fused scatter write + increment (two write chunks, then the increment chunk).
template <UnicastFusedScatterWriteAtomicIncUpdateMask UpdateMask, typename CommandHeaderT>
FORCE_INLINE void populate_unicast_fused_scatter_write_atomic_inc_fields(volatile PACKET_HEADER_TYPE* packet_header,
                                                                         uint16_t packet_size_bytes,
                                                                         const CommandHeaderT& command) {
    using Mask = UnicastFusedScatterWriteAtomicIncUpdateMask;
    constexpr uint8_t writes = tt::tt_fabric::NOC_SCATTER_WRITE_ATOMIC_INC_FUSED_WRITE_CHUNKS;
    if constexpr (std::is_same_v<CommandHeaderT, std::nullptr_t>) {
        static_assert(!has_flag(UpdateMask, Mask::WriteDstAddrs) && !has_flag(UpdateMask, Mask::SemaphoreDstAddr) &&
                          !has_flag(UpdateMask, Mask::WriteChunkSizes) && !has_flag(UpdateMask, Mask::Val) &&
                          !has_flag(UpdateMask, Mask::Flush),
                      "UnicastFusedScatterWriteAtomicIncUpdateMask requires command_header but std::nullptr_t was "
                      "provided");
    }
    auto& fields = packet_header->command_fields.unicast_scatter_write;
    fields.chunk_count = writes + 1;
    if constexpr (has_flag(UpdateMask, Mask::WriteDstAddrs)) {
        for (uint8_t i = 0; i < writes; ++i) fields.noc_address[i] = command.noc_address[i];
    }
    if constexpr (has_flag(UpdateMask, Mask::SemaphoreDstAddr)) {
        fields.noc_address[writes] = command.semaphore_noc_address;
    }
    if constexpr (has_flag(UpdateMask, Mask::WriteChunkSizes)) {
        uint32_t leading = 0;
        for (uint8_t i = 0; i + 1 < writes; ++i) {
            fields.chunk_size[i] = command.chunk_size[i];
            leading += command.chunk_size[i];
        }
        fields.chunk_size[writes - 1] = static_cast<uint16_t>(packet_size_bytes - leading);
    }
    if constexpr (has_flag(UpdateMask, Mask::Val)) {
        fields.chunk_size[writes] = command.val;
    }
    if constexpr (has_flag(UpdateMask, Mask::Flush)) {
        uint8_t encoding = 0;
        for (uint8_t i = 0; i < writes; ++i) {
            tt::tt_fabric::set_chunk_encoding(encoding, tt::tt_fabric::CHUNK_ENCODING_UNICAST_WRITE, i);
        }
        tt::tt_fabric::set_chunk_encoding(
            encoding,
            command.flush ? tt::tt_fabric::CHUNK_ENCODING_SEMINC_FLUSH : tt::tt_fabric::CHUNK_ENCODING_SEMINC_NO_FLUSH,
            writes);
        fields.chunk_encoding = encoding;
    }
    if constexpr (has_flag(UpdateMask, Mask::PayloadSize)) {
        packet_header->payload_size_bytes = packet_size_bytes;
    }
}

// Builds and opens num_connections_to_build connections from the runtime args at rt_arg_idx (advanced past them).
template <uint8_t WORKER_HANDSHAKE_NOC = tt::tt_fabric::get_fabric_worker_noc(), bool sem_args_are_l1_addresses = false>
FORCE_INLINE void open_connections(tt::tt_fabric::RoutingPlaneConnectionManager& connection_manager,
                                   uint32_t num_connections_to_build, size_t& rt_arg_idx) {
    connection_manager = tt::tt_fabric::RoutingPlaneConnectionManager::build_from_args<
        tt::tt_fabric::RoutingPlaneConnectionManager::BUILD_AND_OPEN_CONNECTION, WORKER_HANDSHAKE_NOC,
        sem_args_are_l1_addresses>(rt_arg_idx, num_connections_to_build);
}

template <uint8_t WORKER_HANDSHAKE_NOC = tt::tt_fabric::get_fabric_worker_noc()>
FORCE_INLINE void close_connections(tt::tt_fabric::RoutingPlaneConnectionManager& connection_manager) {
    connection_manager.close();
}

}  // namespace tt::tt_fabric::common::experimental
