// What the program factory of moe_bmm and its kernels (kernels/moe_bmm/{dataflow/
// reader_moe_bmm.cpp, compute/moe_bmm.cpp, dataflow/writer_moe_bmm.cpp}) must agree on.
// Included by both sides: plain C++17, no device or host headers.
#pragma once

#include <cstdint>

namespace ttnn_moe::moe_bmm_shared {

// Rows (and columns) of a tile; expert_offsets are multiples of it.
inline constexpr uint32_t kTileRows = 32;

// Common runtime args (the same on every core) of all three kernels: the problem's shape.
// The reader's and the writer's addresses follow (reader_common_arg, writer_common_arg).
namespace common_arg {
enum : uint32_t {
    kNumExperts,       // E_l
    kGrouped,          // 1: x is (M, Kd) packed by expert_offsets; 0: x is (E_l, T, Kd)
    kRows,             // padded: T; grouped: M (logical rows of x and of the output)
    kRowTiles,         // padded: Mt = ceil(T / 32) per expert; grouped: ceil(M / 32) in total
    kSlotBytes,        // bytes between two routing entries in the L1 scratch (DRAM alignment)
    kInnerTiles,       // Kt
    kColTiles,         // Nt
    kInnerBlock,       // k tiles per CB push (divides Kt)
    kResidentWeights,  // 1: a column run's Kt weight tiles stay in cb_w; 0: streamed per block
    kCount,
};
}  // namespace common_arg

// The reader's addresses, after the shape. expert_offsets is 0 in padded mode.
namespace reader_common_arg {
enum : uint32_t { kXAddr = common_arg::kCount, kWAddr, kCountsAddr, kOffsetsAddr, kCount };
}  // namespace reader_common_arg

// The writer's addresses, after the shape. expert_offsets is 0 in padded mode.
namespace writer_common_arg {
enum : uint32_t { kOutAddr = common_arg::kCount, kCountsAddr, kOffsetsAddr, kCount };
}  // namespace writer_common_arg

// Per-core runtime args of the reader and the writer: cores in row-major order.
namespace core_arg {
enum : uint32_t { kCoreIndex, kNumCores, kCount };
}  // namespace core_arg

// Order of the accessors' compile-time args. expert_offsets uses num_routed_tokens' (both
// are (E_l, 1) uint32 ROW_MAJOR).
namespace reader_tensor {
enum : uint32_t { kX, kW, kRouting, kCount };
}  // namespace reader_tensor
namespace writer_tensor {
enum : uint32_t { kRouting, kOut, kCount };
}  // namespace writer_tensor

// Names of the named compile-time args (CBs).
namespace named_arg {
inline constexpr const char* kCbX = "cb_x";              // x tiles, blocks of inner_block
inline constexpr const char* kCbW = "cb_w";              // w tiles: a resident column (Kt) or blocks
inline constexpr const char* kCbWork = "cb_work";        // reader -> compute: tile count, then each run's row tiles
inline constexpr const char* kCbRouting = "cb_routing";  // a dataflow kernel's copy of counts and offsets
inline constexpr const char* kCbZero = "cb_zero";        // writer's zero tile (padded mode)
inline constexpr const char* kCbOut = "cb_out";          // output tiles
}  // namespace named_arg

}  // namespace ttnn_moe::moe_bmm_shared
