// Host/device fabric constants of tt-metal 0.81.1 that worker kernels use.
#pragma once

#include <cstdint>

namespace tt::tt_fabric {

inline constexpr std::uint32_t MAX_NUM_MESHES = 1024;

// Ethernet directions as seen from a chip (row-major mesh: NORTH = row - 1, EAST = column + 1).
enum eth_chan_directions : std::uint8_t {
    EAST = 0,
    WEST = 1,
    NORTH = 2,
    SOUTH = 3,
    Z = 4,
    COUNT = 5,
};

}  // namespace tt::tt_fabric
