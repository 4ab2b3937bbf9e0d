// tt-metal 0.81.1's FabricConnectionManager: up to two worker-to-fabric
// connections (forward and backward) described by runtime args. Each is
// announced by a flag arg (non-zero: present), followed by the connection's
// own args (WorkerToFabricEdmSender::build_from_args).
#pragma once

#include <cstddef>
#include <cstdint>

#include "edm_fabric_worker_adapters.hpp"

class FabricConnectionManager final {
public:
    enum BuildFromArgsMode : uint8_t { BUILD_ONLY, BUILD_AND_OPEN_CONNECTION, BUILD_AND_OPEN_CONNECTION_START_ONLY };

    template <BuildFromArgsMode build_mode = BuildFromArgsMode::BUILD_ONLY>
    static FabricConnectionManager build_from_args(std::size_t& arg_idx) {
        FabricConnectionManager manager;
        manager.has_forward_ = get_arg_val<uint32_t>(arg_idx++) != 0;
        if (manager.has_forward_) {
            manager.forward_ =
                tt::tt_fabric::WorkerToFabricEdmSender::build_from_args<ProgrammableCoreType::TENSIX>(arg_idx);
        }
        manager.has_backward_ = get_arg_val<uint32_t>(arg_idx++) != 0;
        if (manager.has_backward_) {
            manager.backward_ =
                tt::tt_fabric::WorkerToFabricEdmSender::build_from_args<ProgrammableCoreType::TENSIX>(arg_idx);
        }
        if constexpr (build_mode != BuildFromArgsMode::BUILD_ONLY) {
            manager.open_start_each();
            if constexpr (build_mode == BuildFromArgsMode::BUILD_AND_OPEN_CONNECTION) manager.open_finish();
        }
        return manager;
    }

    bool is_logically_connected() const { return has_forward_ || has_backward_; }
    bool has_forward_connection() const { return has_forward_; }
    bool has_backward_connection() const { return has_backward_; }

    template <bool SEND_CREDIT_ADDR = false>
    void open() {
        open_start_each();
        open_finish();
    }
    void open_finish() {
        if (has_forward_) forward_.open_finish();
        if (has_backward_) backward_.open_finish();
    }
    void close_start() {
        if (has_forward_) forward_.close_start();
        if (has_backward_) backward_.close_start();
    }
    void close_finish() {
        if (has_forward_) forward_.close_finish();
        if (has_backward_) backward_.close_finish();
    }
    void close() {
        close_start();
        close_finish();
    }

    tt::tt_fabric::WorkerToFabricEdmSender& get_forward_connection() {
        if (!has_forward_) ttnn_moe_emu::fail("FabricConnectionManager: no forward connection");
        return forward_;
    }
    tt::tt_fabric::WorkerToFabricEdmSender& get_backward_connection() {
        if (!has_backward_) ttnn_moe_emu::fail("FabricConnectionManager: no backward connection");
        return backward_;
    }

private:
    void open_start_each() {
        if (has_forward_) forward_.open_start();
        if (has_backward_) backward_.open_start();
    }

    tt::tt_fabric::WorkerToFabricEdmSender forward_;
    tt::tt_fabric::WorkerToFabricEdmSender backward_;
    bool has_forward_ = false;
    bool has_backward_ = false;
};
