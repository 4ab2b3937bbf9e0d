#include "ops/common/dispatch_line.hpp"

#include <stdexcept>

namespace ttnn_moe::ops {

using program::MeshCoordinate;

void validate_geometry(const std::string& op, const MeshGeometry& mesh) {
    if (mesh.rows == 0 || mesh.cols == 0) {
        throw std::invalid_argument(op + ": mesh shape must be positive, got (" + std::to_string(mesh.rows) + ", " +
                                    std::to_string(mesh.cols) + ")");
    }
    if (mesh.cluster_axis > 1) {
        throw std::invalid_argument(op + ": cluster_axis must be 0 or 1 for a 2-D mesh, got " +
                                    std::to_string(mesh.cluster_axis));
    }
    if (static_cast<uint32_t>(mesh.topology) > static_cast<uint32_t>(FabricTopology::Mesh)) {
        throw std::invalid_argument(op + ": topology must be Linear (0), Ring (1) or Mesh (2), got " +
                                    std::to_string(static_cast<uint32_t>(mesh.topology)));
    }
    if (mesh.line_size() > kMaxLineDevices) {
        throw std::invalid_argument(op + ": a dispatch line of " + std::to_string(mesh.line_size()) +
                                    " devices exceeds the supported " + std::to_string(kMaxLineDevices));
    }
}

void validate_num_links(const std::string& op, uint32_t num_links) {
    if (num_links == 0 || num_links > kMaxFabricLinks) {
        throw std::invalid_argument(op + ": num_links must be in [1, " + std::to_string(kMaxFabricLinks) + "], got " +
                                    std::to_string(num_links));
    }
}

DispatchLine dispatch_line(const MeshGeometry& mesh, MeshCoordinate device) {
    DispatchLine line;
    line.position = mesh.cluster_axis == 0 ? device.row : device.col;
    for (uint32_t p = 0; p < mesh.line_size(); ++p) {
        const MeshCoordinate member =
            mesh.cluster_axis == 0 ? MeshCoordinate{p, device.col} : MeshCoordinate{device.row, p};
        line.members.push_back(member);
        line.device_indices.push_back(member.row * mesh.cols + member.col);
    }
    return line;
}

Route route_between(uint32_t from, uint32_t to, uint32_t line_size, FabricTopology topology) {
    if (from == to) return {RouteDirection::Local, 0};
    if (topology == FabricTopology::Ring) {
        const uint32_t forward_hops = (to + line_size - from) % line_size;
        const uint32_t backward_hops = line_size - forward_hops;
        const bool forward = forward_hops < backward_hops || (forward_hops == backward_hops && from % 2 == 0);
        if (forward) return {RouteDirection::Forward, forward_hops};
        return {RouteDirection::Backward, backward_hops};
    }
    if (to > from) return {RouteDirection::Forward, to - from};
    return {RouteDirection::Backward, from - to};
}

FabricNeighbors fabric_neighbors(const MeshGeometry& mesh, const DispatchLine& line) {
    const uint32_t size = mesh.line_size();
    bool uses_forward = false, uses_backward = false;
    for (uint32_t q = 0; q < size; ++q) {
        const auto direction = route_between(line.position, q, size, mesh.topology).direction;
        uses_forward |= direction == RouteDirection::Forward;
        uses_backward |= direction == RouteDirection::Backward;
    }
    FabricNeighbors neighbors;
    if (uses_forward) neighbors.forward = line.members[(line.position + 1) % size];
    if (uses_backward) neighbors.backward = line.members[(line.position + size - 1) % size];
    return neighbors;
}

void append_route_args(const MeshGeometry& mesh, const DispatchLine& line,
                       const std::vector<std::pair<uint32_t, uint32_t>>& fabric_node_ids,
                       std::vector<uint32_t>& runtime_args) {
    if (fabric_node_ids.size() != mesh.num_devices()) {
        throw std::invalid_argument("fabric_node_ids lists " + std::to_string(fabric_node_ids.size()) +
                                    " devices, the mesh has " + std::to_string(mesh.num_devices()));
    }
    for (uint32_t q = 0; q < mesh.line_size(); ++q) {
        const Route route = route_between(line.position, q, mesh.line_size(), mesh.topology);
        const auto [mesh_id, chip_id] = fabric_node_ids[line.device_indices[q]];
        runtime_args.push_back(static_cast<uint32_t>(route.direction) | route.hops << common_shared::kHopsShift);
        runtime_args.push_back((chip_id & ((1u << common_shared::kMeshIdShift) - 1)) |
                               mesh_id << common_shared::kMeshIdShift);
    }
}

void validate_line_program_inputs(const std::string& op, size_t num_io, size_t expected_io, program::CoreCoord grid) {
    if (num_io != expected_io) {
        throw std::invalid_argument(op + ": expects " + std::to_string(expected_io) + " io tensors, got " +
                                    std::to_string(num_io));
    }
    if (grid.x == 0 || grid.y == 0) throw std::invalid_argument(op + ": empty worker grid");
}

program::CBDescriptor scratch_cb(const program::CoreRangeSet& cores, uint8_t index, program::DataFormat format,
                                 uint32_t bytes) {
    constexpr uint32_t kPageBytes = common_shared::kScratchPageBytes;
    const uint32_t total = (bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
    return program::CBDescriptor{total, cores, {program::CBFormatDescriptor{index, format, kPageBytes, std::nullopt}}};
}

}  // namespace ttnn_moe::ops
