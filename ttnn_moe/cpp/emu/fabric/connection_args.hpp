// Host side of a fabric connection, the emulator's stand-in for
// ttnn.setup_fabric_connection(src_fabric_node_id, dst_fabric_node_id,
// link_idx, program_descriptor, worker_core): adds the connection's two
// semaphores (teardown, buffer index) on worker_core to the program and
// returns the three runtime args WorkerToFabricEdmSender::build_from_args
// consumes: [channel, teardown semaphore id, buffer-index semaphore id].
//
// On hardware the channel is an ethernet channel id; here it encodes
// (src chip, dst chip, link) and the runtime resolves the direction from the
// mesh's topology when the kernel binds the connection. Program factories
// call this at the point where the hardware path calls
// ttnn.setup_fabric_connection, so both produce the same program shape.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "program/program_descriptor.hpp"

namespace ttnn_moe::emu::fabric {

// tt::tt_fabric::FabricNodeId: chip_id is the row-major position in the mesh.
struct FabricNodeId {
    uint32_t mesh_id = 0;
    uint32_t chip_id = 0;
    bool operator==(const FabricNodeId&) const = default;
};

struct ChannelArg {
    uint32_t src_chip;
    uint32_t dst_chip;
    uint32_t link;
    // A fabric mux client's channel: the mux funnels many workers into one router channel, so several
    // such connections may hold the same link and direction at once.
    bool mux_client = false;
};

inline constexpr uint32_t MAX_CHIPS = 4096;
inline constexpr uint32_t MAX_LINKS = 4;

uint32_t encode_channel_arg(const ChannelArg& c);
// nullopt when `arg` was not made by encode_channel_arg.
std::optional<ChannelArg> decode_channel_arg(uint32_t arg);

std::vector<uint32_t> setup_fabric_connection(const FabricNodeId& src, const FabricNodeId& dst, uint32_t link_idx,
                                              program::ProgramDescriptor& program,
                                              const program::CoreCoord& worker_core);

// The same for a fabric mux (V2) client (FabricMuxV2Sender): [channel, teardown semaphore id, flow-control
// semaphore id], the channel marked as a mux client's. The Python front end lays these out as the client's
// 11 runtime args (ttnn_moe.emu.fabric.setup_fabric_mux_connection).
std::vector<uint32_t> setup_fabric_mux_connection(const FabricNodeId& src, const FabricNodeId& dst, uint32_t link_idx,
                                                  program::ProgramDescriptor& program,
                                                  const program::CoreCoord& worker_core);

}  // namespace ttnn_moe::emu::fabric
