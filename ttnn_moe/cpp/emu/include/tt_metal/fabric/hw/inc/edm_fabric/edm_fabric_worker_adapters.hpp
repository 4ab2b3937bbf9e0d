// tt::tt_fabric::WorkerToFabricEdmSender for the emulator: the worker's end of
// a fabric connection (tt-metal 0.81.1 API). A connection is bound from the
// three runtime args the host's setup_fabric_connection appended (channel,
// teardown semaphore id, buffer-index semaphore id); every call forwards to
// the runtime's fabric, which snapshots a packet when its header is sent and
// delivers it later, in order per connection.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "hostdev/fabric_edm_packet_header.hpp"
#include "hostdevcommon/fabric_common.h"
#include "tt-metalium/experimental/fabric/fabric_edm_types.hpp"
#include "ttnn_moe_emu/fabric_abi.h"

namespace tt::tt_fabric {

constexpr uint8_t get_fabric_worker_noc() {
    return noc_index;
}

template <bool I_USE_STREAM_REG_FOR_CREDIT_RECEIVE, uint8_t EDM_NUM_BUFFER_SLOTS = 0, uint8_t VC_ID = 0>
struct WorkerToFabricEdmSenderBase {
    static_assert(VC_ID == 0 || VC_ID == 2, "Only VC_ID 0 and 2 are supported");
    static constexpr uint32_t NOT_CONNECTED = 0xffffffffu;

    WorkerToFabricEdmSenderBase() = default;

    template <ProgrammableCoreType my_core_type, bool sem_args_are_l1_addresses = false>
    static WorkerToFabricEdmSenderBase build_from_args(std::size_t& arg_idx) {
        static_assert(my_core_type == ProgrammableCoreType::TENSIX,
                      "the emulator's fabric connects Tensix workers only");
        static_assert(!sem_args_are_l1_addresses, "the emulator's fabric takes semaphore ids");
        const uint32_t channel = get_arg_val<uint32_t>(arg_idx++);
        const uint32_t teardown_sem_id = get_arg_val<uint32_t>(arg_idx++);
        const uint32_t buffer_index_sem_id = get_arg_val<uint32_t>(arg_idx++);
        WorkerToFabricEdmSenderBase sender;
        sender.connection = fabric()->connect(channel, teardown_sem_id, buffer_index_sem_id);
        return sender;
    }

    template <bool SEND_CREDIT_ADDR = false, bool posted = false,
              uint8_t WORKER_HANDSHAKE_NOC = get_fabric_worker_noc()>
    void open_start() {
        fabric()->open_start(connection);
    }
    template <bool posted = false, uint8_t WORKER_HANDSHAKE_NOC = get_fabric_worker_noc()>
    void open_finish() {
        fabric()->open_finish(connection);
    }
    template <bool SEND_CREDIT_ADDR = false, bool posted = false,
              uint8_t WORKER_HANDSHAKE_NOC = get_fabric_worker_noc()>
    void open() {
        open_start();
        open_finish();
    }
    template <bool posted = false, uint8_t WORKER_HANDSHAKE_NOC = get_fabric_worker_noc()>
    void close_start() {
        fabric()->close_start(connection);
    }
    template <bool posted = false, uint8_t WORKER_HANDSHAKE_NOC = get_fabric_worker_noc()>
    void close_finish() {
        fabric()->close_finish(connection);
    }
    template <bool posted = false, uint8_t WORKER_HANDSHAKE_NOC = get_fabric_worker_noc()>
    void close() {
        close_start();
        close_finish();
    }

    FORCE_INLINE uint32_t get_num_free_write_slots() const { return fabric()->free_slots(connection); }
    template <size_t num_slots = 1>
    FORCE_INLINE bool edm_has_space_for_packet() const {
        return get_num_free_write_slots() >= num_slots;
    }
    FORCE_INLINE void wait_for_empty_write_slot() const { fabric()->wait_for_empty_write_slot(connection); }

    // The payload of the next packet (written behind the header slot on hardware).
    template <bool posted = false>
    FORCE_INLINE void send_payload_without_header_non_blocking_from_address(uint32_t source_address, size_t size_bytes,
                                                                            uint8_t noc = get_fabric_worker_noc()) {
        fabric()->send_payload(connection, source_address, static_cast<uint32_t>(size_bytes));
    }
    // A header at source_address (size_bytes == sizeof(PACKET_HEADER_TYPE)), or a
    // header followed by its payload (size_bytes == header + payload): sends the packet.
    template <bool posted = false>
    FORCE_INLINE void send_payload_flush_blocking_from_address(uint32_t source_address, size_t size_bytes,
                                                               uint8_t noc = get_fabric_worker_noc()) {
        send_packet_from_address(source_address, size_bytes);
    }
    template <bool posted = false>
    FORCE_INLINE void send_payload_flush_non_blocking_from_address(uint32_t source_address, size_t size_bytes,
                                                                   uint8_t noc = get_fabric_worker_noc()) {
        send_packet_from_address(source_address, size_bytes);
    }
    template <bool posted = false>
    FORCE_INLINE void send_payload_blocking_from_address(uint32_t source_address, size_t size_bytes,
                                                         uint8_t noc = get_fabric_worker_noc()) {
        send_packet_from_address(source_address, size_bytes);
    }
    template <bool posted = false>
    FORCE_INLINE void send_payload_non_blocking_from_address(uint32_t source_address, size_t size_bytes,
                                                             uint8_t noc = get_fabric_worker_noc()) {
        send_packet_from_address(source_address, size_bytes);
    }

    uint32_t connection = NOT_CONNECTED;

private:
    static const ttnn_moe_emu::FabricServices* fabric() { return ttnn_moe_emu::services->fabric; }

    void send_packet_from_address(uint32_t source_address, size_t size_bytes) {
        if (size_bytes < sizeof(PACKET_HEADER_TYPE)) {
            ttnn_moe_emu::fail("fabric send: size is smaller than the packet header (PACKET_HEADER_TYPE)");
        }
        ttnn_moe_emu::FabricPacket packet = ttnn_moe_emu::fabric_packet_of(
            *reinterpret_cast<const volatile PACKET_HEADER_TYPE*>(static_cast<uintptr_t>(source_address)));
        if (size_bytes > sizeof(PACKET_HEADER_TYPE)) {
            packet.inline_payload_l1 = source_address + static_cast<uint32_t>(sizeof(PACKET_HEADER_TYPE));
            packet.inline_payload_bytes = static_cast<uint32_t>(size_bytes - sizeof(PACKET_HEADER_TYPE));
        }
        fabric()->send_header(connection, &packet);
    }
};

template <bool I_USE_STREAM_REG_FOR_CREDIT_RECEIVE, uint8_t EDM_NUM_BUFFER_SLOTS = 0>
using WorkerToFabricEdmSenderImpl =
    WorkerToFabricEdmSenderBase<I_USE_STREAM_REG_FOR_CREDIT_RECEIVE, EDM_NUM_BUFFER_SLOTS>;
using WorkerToFabricEdmSender = WorkerToFabricEdmSenderImpl<false, 0>;

template <typename T>
inline constexpr bool is_edm_sender_v = false;
template <bool S, uint8_t N, uint8_t V>
inline constexpr bool is_edm_sender_v<WorkerToFabricEdmSenderBase<S, N, V>> = true;

}  // namespace tt::tt_fabric
