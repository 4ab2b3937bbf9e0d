// tt-metal 0.81.1's RoutingPlaneConnectionManager for the emulator: up to four worker-to-fabric connections, each
// described in the runtime args by a tag (the connection's eth direction, as the host writes it) followed by the
// connection's own args (WorkerToFabricEdmSender::build_from_args). 1D fabric only: the 2D per-connection
// destination args are not read, so a FABRIC_2D kernel that builds a manager fails to build.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "edm_fabric_worker_adapters.hpp"

namespace tt::tt_fabric {

#if defined(FABRIC_2D)
inline constexpr bool routing_plane_manager_on_2d_fabric = true;
#else
inline constexpr bool routing_plane_manager_on_2d_fabric = false;
#endif

class RoutingPlaneConnectionManager final {
public:
    static constexpr std::size_t MaxConnections = 4;
    using Sender = WorkerToFabricEdmSender;
    enum BuildFromArgsMode : uint8_t { BUILD_ONLY, BUILD_AND_OPEN_CONNECTION, BUILD_AND_OPEN_CONNECTION_START_ONLY };

    struct ConnectionSlot {
        Sender sender;
        uint8_t tag;
    };

    template <BuildFromArgsMode build_mode = BUILD_ONLY, uint8_t WORKER_HANDSHAKE_NOC = get_fabric_worker_noc(),
              bool sem_args_are_l1_addresses = false>
    static RoutingPlaneConnectionManager build_from_args(std::size_t& arg_idx, uint32_t num_connections_to_build) {
        if constexpr (routing_plane_manager_on_2d_fabric) {
            static_assert(build_mode != build_mode,
                          "the emulator's RoutingPlaneConnectionManager serves 1D fabrics (linear API) only");
        }
        if (num_connections_to_build > MaxConnections) {
            ttnn_moe_emu::fail("RoutingPlaneConnectionManager: more than 4 connections requested");
        }
        RoutingPlaneConnectionManager manager;
        for (uint32_t i = 0; i < num_connections_to_build; ++i) {
            ConnectionSlot& slot = manager.slots_[i];
            slot.tag = static_cast<uint8_t>(get_arg_val<uint32_t>(arg_idx++));
            slot.sender = Sender::build_from_args<ProgrammableCoreType::TENSIX, sem_args_are_l1_addresses>(arg_idx);
            if constexpr (build_mode != BUILD_ONLY) slot.sender.open_start();
        }
        manager.num_active_ = num_connections_to_build;
        if constexpr (build_mode == BUILD_AND_OPEN_CONNECTION) manager.open_finish();
        return manager;
    }

    uint32_t get_tag(uint32_t index) const { return get(index).tag; }
    ConnectionSlot& get(uint32_t index) {
        check(index);
        return slots_[index];
    }
    const ConnectionSlot& get(uint32_t index) const {
        check(index);
        return slots_[index];
    }
    template <typename Fn>
    void for_each(Fn&& fn) {
        for (uint32_t i = 0; i < num_active_; ++i) fn(slots_[i].sender, i, slots_[i].tag);
    }

    template <bool SEND_CREDIT_ADDR = false, uint8_t WORKER_HANDSHAKE_NOC = get_fabric_worker_noc()>
    void open_start() {
        for_each([](Sender& s, uint32_t, uint32_t) { s.open_start(); });
    }
    template <uint8_t WORKER_HANDSHAKE_NOC = get_fabric_worker_noc()>
    void open_finish() {
        for_each([](Sender& s, uint32_t, uint32_t) { s.open_finish(); });
    }
    template <bool SEND_CREDIT_ADDR = false, uint8_t WORKER_HANDSHAKE_NOC = get_fabric_worker_noc()>
    void open() {
        open_start();
        open_finish();
    }
    template <uint8_t WORKER_HANDSHAKE_NOC = get_fabric_worker_noc()>
    void close_start() {
        for_each([](Sender& s, uint32_t, uint32_t) { s.close_start(); });
    }
    template <uint8_t WORKER_HANDSHAKE_NOC = get_fabric_worker_noc()>
    void close_finish() {
        for_each([](Sender& s, uint32_t, uint32_t) { s.close_finish(); });
    }
    template <uint8_t WORKER_HANDSHAKE_NOC = get_fabric_worker_noc()>
    void close() {
        close_start();
        close_finish();
    }
    uint32_t active_count() const { return num_active_; }

private:
    void check(uint32_t index) const {
        if (index >= num_active_) ttnn_moe_emu::fail("RoutingPlaneConnectionManager: connection index out of range");
    }

    std::array<ConnectionSlot, MaxConnections> slots_{};
    uint32_t num_active_ = 0;
};

}  // namespace tt::tt_fabric
