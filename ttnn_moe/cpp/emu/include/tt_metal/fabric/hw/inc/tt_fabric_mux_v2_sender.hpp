// tt::tt_fabric::FabricMuxV2Sender (tt-metal 0.81.1) for the emulator: the worker's client of a
// transient fabric mux (V2) channel. On hardware the worker writes each packet into a slot of its
// mux channel, signals it through the mux core's stream register, and the mux forwards it to the
// fabric router; free slots come back as a read counter the mux publishes to the worker. The
// emulator runs no mux core: the channel is an emulated fabric connection from the worker's chip
// to the mux's neighbour, with the channel's slot count, so the packets, their routes, their
// order per channel and the flow control the worker sees are the same, and the mux's own hop is
// not modelled.
//
// Runtime args: the 11 words FabricMuxV2Config::append_client_connection_rt_args appends
// (mux_x, mux_y, logical_channel_id, num_buffers, channel_buffer_size_bytes, channel_base,
// connection_info, handshake, flow_control_sem, teardown_sem, mux_status), made here by the
// host's setup_fabric_mux_connection: the channel-base word carries the emulated connection
// (src chip, dst chip, link), as a fabric connection's channel arg does; the flow-control and
// teardown semaphores are the worker's, as on hardware; the mux-core L1 addresses are unused.
#pragma once

#include <cstddef>
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "hostdev/fabric_edm_packet_header.hpp"
#include "tt_metal/fabric/hw/inc/api_common.h"
#include "tt_metal/fabric/hw/inc/edm_fabric/edm_fabric_worker_adapters.hpp"
#include "ttnn_moe_emu/fabric_abi.h"

namespace tt::tt_fabric {

enum class FabricMuxV2SenderState : uint8_t {
    Disconnected = 0,
    Staging = 1,
    Connected = 2,
};

static constexpr uint8_t kInvalidStatusReadTrid = 0xFF;

template <bool EAGER_STAGING, uint8_t NUM_BUFFERS>
class FabricMuxV2Sender {
public:
    static constexpr bool USER_DEFINED_NUM_BUFFERS = NUM_BUFFERS != 0;
    static constexpr uint32_t NOT_CONNECTED = 0xffffffffu;

    FabricMuxV2Sender() = default;

    static FabricMuxV2Sender build_from_args(std::size_t& arg_idx) {
        FabricMuxV2Sender sender;
        arg_idx += 3;  // mux_x, mux_y, logical_channel_id: the mux core the emulator does not run
        const uint32_t num_buffers_rt = get_arg_val<uint32_t>(arg_idx++);
        sender.channel_buffer_size_bytes = get_arg_val<uint32_t>(arg_idx++);
        const uint32_t connection_arg = get_arg_val<uint32_t>(arg_idx++);
        arg_idx += 2;  // connection_info, handshake: mux-core L1 addresses
        const uint32_t flow_control_sem_id = get_arg_val<uint32_t>(arg_idx++);
        const uint32_t teardown_sem_id = get_arg_val<uint32_t>(arg_idx++);
        arg_idx += 1;  // mux_status: a mux-core L1 address
        sender.num_buffers = USER_DEFINED_NUM_BUFFERS ? NUM_BUFFERS : num_buffers_rt;
        if (sender.num_buffers == 0) ttnn_moe_emu::fail("FabricMuxV2Sender: the mux channel has 0 buffers");
        sender.connection = fabric()->connect(connection_arg, teardown_sem_id, flow_control_sem_id);
        return sender;
    }

    // Blocking or staged, the channel is connected when open() returns (the emulated mux is always
    // ready), so flush() has nothing left to do.
    void open(uint8_t /*status_trid*/ = kInvalidStatusReadTrid) {
        fabric()->open_start(connection);
        fabric()->open_finish(connection);
        state = FabricMuxV2SenderState::Connected;
    }
    template <bool Blocking = true>
    bool flush() {
        return true;
    }
    void close() {
        fabric()->close_start(connection);
        fabric()->close_finish(connection);
        state = FabricMuxV2SenderState::Disconnected;
    }

    // The channel's buffers less the packets in flight, at most the emulated connection's free slots.
    // Polled in spin loops (the real one re-reads the published read counter): the cache
    // invalidation lets the fabric drain between polls.
    FORCE_INLINE uint32_t get_num_free_write_slots() const {
        invalidate_l1_cache();
        const uint32_t connection_free = fabric()->free_slots(connection);
        const uint32_t in_flight = ttnn_moe_emu::FABRIC_BUFFER_SLOTS - connection_free;
        if (in_flight >= num_buffers) return 0;
        return num_buffers - in_flight < connection_free ? num_buffers - in_flight : connection_free;
    }
    template <size_t num_slots = 1>
    FORCE_INLINE bool has_space_for_packet() const {
        return get_num_free_write_slots() >= num_slots;
    }
    FORCE_INLINE void wait_for_empty_write_slot() const {
        while (!has_space_for_packet<1>()) {
        }
    }

    // The payload of the next packet (written behind the header in the slot on hardware).
    FORCE_INLINE void send_payload_without_header_non_blocking_from_address(uint32_t source_address,
                                                                            size_t size_bytes) {
        check_fits(size_bytes + sizeof(PACKET_HEADER_TYPE));
        fabric()->send_payload(connection, source_address, static_cast<uint32_t>(size_bytes));
    }
    // A header (size_bytes == sizeof(PACKET_HEADER_TYPE)), or a header followed by its payload,
    // at source_address: commits the slot, i.e. sends the packet.
    FORCE_INLINE void send_payload_flush_non_blocking_from_address(uint32_t source_address, size_t size_bytes) {
        if (size_bytes < sizeof(PACKET_HEADER_TYPE)) {
            ttnn_moe_emu::fail("FabricMuxV2Sender send: size is smaller than the packet header");
        }
        check_fits(size_bytes);
        ttnn_moe_emu::FabricPacket packet = ttnn_moe_emu::fabric_packet_of(
            *reinterpret_cast<const volatile PACKET_HEADER_TYPE*>(static_cast<uintptr_t>(source_address)));
        if (size_bytes > sizeof(PACKET_HEADER_TYPE)) {
            packet.inline_payload_l1 = source_address + static_cast<uint32_t>(sizeof(PACKET_HEADER_TYPE));
            packet.inline_payload_bytes = static_cast<uint32_t>(size_bytes - sizeof(PACKET_HEADER_TYPE));
        }
        fabric()->send_header(connection, &packet);
    }

    // The stateful send lane (NOC command-buffer state) is not emulated: a kernel that uses it
    // fails to build, naming the call.
    template <bool posted = false, typename... Args>
    void setup_stateful_send_cmd_bufs(Args&&...) {
        static_assert(posted != posted, "FabricMuxV2Sender::setup_stateful_send_cmd_bufs is not emulated");
    }
    template <bool posted = false, typename... Args>
    void send_current_slot_stateful_non_blocking_from_address(Args&&...) {
        static_assert(posted != posted,
                      "FabricMuxV2Sender::send_current_slot_stateful_non_blocking_from_address is not emulated");
    }
    template <bool posted = false, typename... Args>
    void send_current_slot_stateful_non_blocking(Args&&...) {
        static_assert(posted != posted, "FabricMuxV2Sender::send_current_slot_stateful_non_blocking is not emulated");
    }

    FORCE_INLINE bool is_staging_ring_full() const { return false; }

private:
    static const ttnn_moe_emu::FabricServices* fabric() { return ttnn_moe_emu::services->fabric; }

    // A packet fills at most one slot of the mux channel.
    void check_fits(size_t packet_bytes) const {
        if (packet_bytes > channel_buffer_size_bytes) {
            ttnn_moe_emu::fail("FabricMuxV2Sender send: the packet is larger than the mux channel's buffer");
        }
    }

    uint32_t connection = NOT_CONNECTED;
    uint32_t num_buffers = 0;
    uint32_t channel_buffer_size_bytes = 0;
    FabricMuxV2SenderState state = FabricMuxV2SenderState::Disconnected;
};

}  // namespace tt::tt_fabric
