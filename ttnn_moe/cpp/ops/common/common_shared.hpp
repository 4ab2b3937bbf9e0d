// What the host's common op code (tensor_checks, dispatch_line) and the kernels' common
// helpers (kernels/common: l1_scratch.hpp, dataflow/scratch.hpp, dataflow/fabric_line.hpp)
// must agree on. Included by both sides: plain C++17, no device or host headers.
#pragma once

#include <cstdint>

namespace ttnn_moe::common_shared {

// Fabric packets carry a row in chunks of a multiple of this many bytes, so each chunk lands
// on an address NOC writes accept on Wormhole and Blackhole (both 16 B for L1).
inline constexpr uint32_t kPacketPayloadAlignment = 32;

// Page size of the CBs that serve a kernel as L1 scratch.
inline constexpr uint32_t kScratchPageBytes = 32;

// Longest dispatch line a kernel handles (its per-position tables are sized by it).
inline constexpr uint32_t kMaxLineDevices = 32;
// Most fabric links per direction a kernel uses (its connection table is sized by it).
inline constexpr uint32_t kMaxFabricLinks = 4;

// Route runtime args: two words per line position,
//   [direction | hops << kHopsShift, fabric chip id | fabric mesh id << kMeshIdShift].
inline constexpr uint32_t kRouteWordsPerPosition = 2;
enum RouteDirection : uint32_t { kLocal = 0, kForward = 1, kBackward = 2 };
inline constexpr uint32_t kHopsShift = 8;
inline constexpr uint32_t kMeshIdShift = 16;

}  // namespace ttnn_moe::common_shared
