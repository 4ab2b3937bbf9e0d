// Fabric types shared by host and kernels (tt-metal 0.81.1 values).
#pragma once

#include <cstdint>

namespace tt::tt_fabric {

enum class Topology { NeighborExchange = 0, Linear = 1, Ring = 2, Mesh = 3, Torus = 4 };

constexpr bool is_2D_topology(Topology topology) {
    return topology == Topology::Mesh || topology == Topology::Torus;
}
constexpr bool is_ring_or_torus(Topology topology) {
    return topology == Topology::Ring || topology == Topology::Torus;
}

struct WorkerXY {
    uint16_t x;
    uint16_t y;
    constexpr WorkerXY() : x(0), y(0) {}
    constexpr WorkerXY(uint16_t x, uint16_t y) : x(x), y(y) {}
    constexpr uint32_t to_uint32() const { return (static_cast<uint32_t>(y) << 16) | x; }
    static constexpr WorkerXY from_uint32(uint32_t v) {
        return WorkerXY(static_cast<uint16_t>(v & 0xFFFF), static_cast<uint16_t>((v >> 16) & 0xFFFF));
    }
    constexpr bool operator==(const WorkerXY& rhs) const { return x == rhs.x && y == rhs.y; }
};

}  // namespace tt::tt_fabric
