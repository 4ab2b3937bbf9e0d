// tt-metal 0.81.1's worker-to-fabric-mux client API, declared for the
// emulator so headers that define mux helpers next to the EDM ones (the CCL
// kernel commons) build. The emulator runs no fabric mux kernel: a kernel
// that instantiates one of these calls fails to build, naming the call.
#pragma once

#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "hostdev/fabric_edm_packet_header.hpp"
#include "tt_metal/fabric/hw/inc/edm_fabric/edm_fabric_worker_adapters.hpp"

namespace tt::tt_fabric {

// As in tt-metal: a mux client is an EDM-style sender with the mux channel's slot count.
template <uint8_t FABRIC_MUX_CHANNEL_NUM_BUFFERS>
using WorkerToFabricMuxSender = WorkerToFabricEdmSenderImpl<false, FABRIC_MUX_CHANNEL_NUM_BUFFERS>;

template <uint8_t FABRIC_MUX_CHANNEL_NUM_BUFFERS>
inline constexpr bool fabric_mux_is_emulated = FABRIC_MUX_CHANNEL_NUM_BUFFERS != FABRIC_MUX_CHANNEL_NUM_BUFFERS;

template <uint8_t FABRIC_MUX_CHANNEL_NUM_BUFFERS = 0, typename... Args>
FORCE_INLINE void fabric_async_write(Args&&...) {
    static_assert(fabric_mux_is_emulated<FABRIC_MUX_CHANNEL_NUM_BUFFERS>,
                  "tt::tt_fabric::fabric_async_write: the fabric mux is not emulated");
}

template <uint8_t FABRIC_MUX_CHANNEL_NUM_BUFFERS = 0, typename... Args>
FORCE_INLINE void fabric_atomic_inc(Args&&...) {
    static_assert(fabric_mux_is_emulated<FABRIC_MUX_CHANNEL_NUM_BUFFERS>,
                  "tt::tt_fabric::fabric_atomic_inc: the fabric mux is not emulated");
}

}  // namespace tt::tt_fabric
