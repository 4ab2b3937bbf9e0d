#include "emu/fabric/connection_args.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "emu/device_params.hpp"

namespace ttnn_moe::emu::fabric {

namespace {
// [31:26] marker (0x2a: a worker's EDM channel, 0x2b: a mux client's), [25:14] src chip, [13:2] dst chip,
// [1:0] link.
constexpr uint32_t MARKER = 0x2a;
constexpr uint32_t MUX_CLIENT_MARKER = 0x2b;
}  // namespace

uint32_t encode_channel_arg(const ChannelArg& c) {
    return ((c.mux_client ? MUX_CLIENT_MARKER : MARKER) << 26) | (c.src_chip << 14) | (c.dst_chip << 2) | c.link;
}

std::optional<ChannelArg> decode_channel_arg(uint32_t arg) {
    const uint32_t marker = arg >> 26;
    if (marker != MARKER && marker != MUX_CLIENT_MARKER) return std::nullopt;
    return ChannelArg{(arg >> 14) & 0xfff, (arg >> 2) & 0xfff, arg & 3, marker == MUX_CLIENT_MARKER};
}

std::vector<uint32_t> setup_fabric_connection(const FabricNodeId& src, const FabricNodeId& dst, uint32_t link_idx,
                                              program::ProgramDescriptor& program,
                                              const program::CoreCoord& worker_core) {
    if (src.mesh_id != dst.mesh_id) {
        throw std::invalid_argument("setup_fabric_connection: src mesh " + std::to_string(src.mesh_id) +
                                    " != dst mesh " + std::to_string(dst.mesh_id) +
                                    " (routing between meshes is not emulated)");
    }
    if (src.chip_id >= MAX_CHIPS || dst.chip_id >= MAX_CHIPS) {
        throw std::invalid_argument("setup_fabric_connection: chip id " +
                                    std::to_string(std::max(src.chip_id, dst.chip_id)) + " is out of range");
    }
    if (src.chip_id == dst.chip_id) {
        throw std::invalid_argument("setup_fabric_connection: src and dst are both chip " +
                                    std::to_string(src.chip_id) + " (a fabric connection joins two chips)");
    }
    if (link_idx >= MAX_LINKS) {
        throw std::invalid_argument("setup_fabric_connection: link_idx " + std::to_string(link_idx) +
                                    " is out of range (max " + std::to_string(MAX_LINKS - 1) + ")");
    }
    // The two lowest semaphore ids not yet used on worker_core.
    std::vector<uint32_t> ids;
    for (uint32_t id = 0; id < params::L1_NUM_SEMAPHORES && ids.size() < 2; ++id) {
        bool used = false;
        for (const auto& s : program.semaphores) used = used || (s.id == id && s.core_ranges.contains(worker_core));
        if (!used) ids.push_back(id);
    }
    if (ids.size() < 2) {
        throw std::invalid_argument("setup_fabric_connection: core (" + std::to_string(worker_core.x) + ", " +
                                    std::to_string(worker_core.y) + ") has no two free semaphores (max " +
                                    std::to_string(params::L1_NUM_SEMAPHORES) + ")");
    }
    const program::CoreRangeSet core{{program::CoreRange{worker_core, worker_core}}};
    for (uint32_t id : ids) program.semaphores.push_back({id, program::CoreType::WORKER, core, 0});
    return {encode_channel_arg({src.chip_id, dst.chip_id, link_idx}), ids[0], ids[1]};
}

std::vector<uint32_t> setup_fabric_mux_connection(const FabricNodeId& src, const FabricNodeId& dst, uint32_t link_idx,
                                                  program::ProgramDescriptor& program,
                                                  const program::CoreCoord& worker_core) {
    std::vector<uint32_t> args = setup_fabric_connection(src, dst, link_idx, program, worker_core);
    args[0] = encode_channel_arg({src.chip_id, dst.chip_id, link_idx, true});
    return args;
}

}  // namespace ttnn_moe::emu::fabric
