// Geometry of a dispatch line: the devices along `cluster_axis` that share the
// other mesh coordinate, and how a kernel on one of them reaches the others over
// tt-fabric. Shared by all_to_all_dispatch_dense and all_to_all_combine_dense.
//
// Devices are numbered row-major (index = row * cols + col); a device's position
// in its line is its coordinate on the axis. "Forward" is towards higher
// positions. A worker opens at most two fabric connections, one to each neighbor
// on the line; every packet leaves through the connection of its direction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ops/common/common_shared.hpp"
#include "program/program_descriptor.hpp"

namespace ttnn_moe::ops {

// Values of ttnn.Topology that the mesh ops accept.
enum class FabricTopology : uint32_t { Linear = 0, Ring = 1, Mesh = 2 };
// Direction of a route from the sender's point of view.
enum class RouteDirection : uint32_t {
    Local = common_shared::kLocal,
    Forward = common_shared::kForward,
    Backward = common_shared::kBackward,
};

using common_shared::kMaxFabricLinks;
using common_shared::kMaxLineDevices;

// Checks 1 <= num_links <= kMaxFabricLinks; throws std::invalid_argument naming the value.
void validate_num_links(const std::string& op, uint32_t num_links);

struct MeshGeometry {
    uint32_t rows = 0;
    uint32_t cols = 0;
    uint32_t cluster_axis = 0;
    FabricTopology topology = FabricTopology::Linear;
    uint32_t num_devices() const { return rows * cols; }
    uint32_t line_size() const { return cluster_axis == 0 ? rows : cols; }
};

// Checks rows/cols/axis/topology; throws std::invalid_argument naming the value.
void validate_geometry(const std::string& op, const MeshGeometry& mesh);

struct DispatchLine {
    uint32_t position = 0;                         // this device's position on the line
    std::vector<program::MeshCoordinate> members;  // device at each position
    std::vector<uint32_t> device_indices;          // row-major mesh index at each position
};
DispatchLine dispatch_line(const MeshGeometry& mesh, program::MeshCoordinate device);

struct Route {
    RouteDirection direction = RouteDirection::Local;
    uint32_t hops = 0;
};
// Linear: straight along the line. Ring: the shorter way round; the device opposite on an even
// ring is as far either way: even positions go forward, odd ones backward, so the two directions
// of every link carry the same number of routes.
// Mesh (2D fabric): the direction of the destination; the fabric picks the path.
Route route_between(uint32_t from, uint32_t to, uint32_t line_size, FabricTopology topology);

// The neighbors this device opens fabric connections to (forward, backward),
// present only when some route of the line leaves through that side.
struct FabricNeighbors {
    std::optional<program::MeshCoordinate> forward;
    std::optional<program::MeshCoordinate> backward;
};
FabricNeighbors fabric_neighbors(const MeshGeometry& mesh, const DispatchLine& line);

// Runtime args describing how to reach each position: two words per position
// (common_shared.hpp: direction and hops, fabric chip and mesh ids). fabric_node_ids
// holds (mesh id, chip id) of every device in row-major order.
void append_route_args(const MeshGeometry& mesh, const DispatchLine& line,
                       const std::vector<std::pair<uint32_t, uint32_t>>& fabric_node_ids,
                       std::vector<uint32_t>& runtime_args);

// Checks a line op factory's io tensor count and worker grid, naming `op`.
void validate_line_program_inputs(const std::string& op, size_t num_io, size_t expected_io, program::CoreCoord grid);

// L1 scratch CB of a line op kernel: `bytes` in pages of 32 bytes, so the page layout
// is the same for every shape.
program::CBDescriptor scratch_cb(const program::CoreRangeSet& cores, uint8_t index, program::DataFormat format,
                                 uint32_t bytes);

}  // namespace ttnn_moe::ops
