// Shared pieces of the fabric wrapper APIs (tt-metal 0.81.1 api_common.h subset).
#pragma once

#include "tt_metal/fabric/hw/inc/edm_fabric/edm_fabric_worker_adapters.hpp"

namespace tt::tt_fabric::common::experimental {

template <typename FabricSenderType>
struct CheckFabricSenderType {
    static_assert(is_edm_sender_v<FabricSenderType>,
                  "FabricSenderType must be WorkerToFabricEdmSender (the only sender the emulator provides)");
};

}  // namespace tt::tt_fabric::common::experimental
