// Shared pieces of the fabric wrapper APIs (tt-metal 0.81.1 api_common.h subset).
#pragma once

#include <cstdint>
#include <type_traits>

#include "tt_metal/fabric/hw/inc/edm_fabric/edm_fabric_worker_adapters.hpp"

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

}  // namespace tt::tt_fabric::common::experimental
