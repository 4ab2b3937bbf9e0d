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
    kResidentXRows,    // R: an expert with at most R active row tiles keeps them (R x Kt tiles) in
                       // cb_x across all its column runs; 0: x streamed in blocks per row tile
    kWeightHalves,     // 1: out = x @ w; 2 (SwiGLU): w's column tiles alternate gate, up (2 Nt of them)
                       // and out = silu(x @ gate) * (x @ up)
    kAddend,           // 1: out = x @ w + addend (a tensor shaped like the output); 0: no addend
    kCount,
};
}  // namespace common_arg

// Weight column tiles per output column tile: one, or the gate and the up column (SwiGLU).
inline constexpr uint32_t kPlainHalves = 1;
inline constexpr uint32_t kSwigluHalves = 2;

// Pages of cb_x: two blocks of inner_block tiles, or the resident rows (Kt tiles each) when
// larger. Either way a multiple of inner_block, and of Kt when resident rows are on.
constexpr uint32_t x_ring_pages(uint32_t inner_tiles, uint32_t inner_block, uint32_t resident_x_rows) {
    return 2 * inner_block > resident_x_rows * inner_tiles ? 2 * inner_block : resident_x_rows * inner_tiles;
}

// The second word the reader sends before each column run (after its row tile count): where
// the run's x tiles are. kStreamed: in blocks next to the matmuls, per row tile. Otherwise the
// expert's `rows` active row tiles sit in cb_x (Kt tiles each, row after row): kKept, still
// there from the previous run; kLoaded, pushed for this run: the compute kernel pops the
// previous expert's rows, then `pad` filler pages the reader pushed so that the block starts at
// the ring's base (a block never straddles the ring's end: tile indices into it do not wrap).
// The run starts at row tile `first_row` of the block.
// word = state | rows << kRowsShift | first_row << kFirstRowShift | pad << kPadShift.
namespace x_block {
enum : uint32_t { kStreamed = 0, kLoaded = 1, kKept = 2 };
inline constexpr uint32_t kStateMask = 0xf;
inline constexpr uint32_t kRowsShift = 4;
inline constexpr uint32_t kFirstRowShift = 12;
inline constexpr uint32_t kFieldMask = 0xff;
inline constexpr uint32_t kPadShift = 20;  // pad < 4096 pages (8 rows x Kt <= 4095)
}  // namespace x_block

// The reader's addresses, after the shape. expert_offsets is 0 in padded mode.
// The addend's is 0 without one.
namespace reader_common_arg {
enum : uint32_t { kXAddr = common_arg::kCount, kWAddr, kCountsAddr, kOffsetsAddr, kAddendAddr, kCount };
}  // namespace reader_common_arg

// The writer's addresses, after the shape. expert_offsets is 0 in padded mode, the addend's 0
// without one.
namespace writer_common_arg {
enum : uint32_t { kOutAddr = common_arg::kCount, kCountsAddr, kOffsetsAddr, kAddendAddr, kStatusAddr, kCount };
}  // namespace writer_common_arg

// Per-core runtime args of the reader and the writer: cores in row-major order.
namespace core_arg {
enum : uint32_t { kCoreIndex, kNumCores, kCount };
}  // namespace core_arg

// Order of the accessors' compile-time args. expert_offsets uses num_routed_tokens' (both
// are (E_l, 1) uint32 ROW_MAJOR); the addend uses x's in the reader and the output's in the
// writer (all bfloat16 TILE, interleaved in DRAM).
namespace reader_tensor {
enum : uint32_t { kX, kW, kRouting, kCount };
}  // namespace reader_tensor
namespace writer_tensor {
enum : uint32_t { kRouting, kOut, kStatus, kCount };
}  // namespace writer_tensor

// Names of the named compile-time args (CBs).
namespace named_arg {
inline constexpr const char* kCbX = "cb_x";        // x tiles: an expert's resident rows or blocks
inline constexpr const char* kCbW = "cb_w";        // w tiles: a resident column (Kt) or blocks
inline constexpr const char* kCbWork = "cb_work";  // reader -> compute: tile count, then per run: row tiles, x block
inline constexpr const char* kCbRouting = "cb_routing";  // a dataflow kernel's copy of counts and offsets
inline constexpr const char* kCbZero = "cb_zero";        // writer's zero tile (padded mode)
inline constexpr const char* kCbAddend = "cb_addend";    // the addend's tile of each output tile
inline constexpr const char* kCbStatus = "cb_status";    // writer's status record (core 0)
inline constexpr const char* kCbOut = "cb_out";          // output tiles
}  // namespace named_arg

inline constexpr uint32_t kNone = 0xFFFFFFFFu;  // "no such expert" in the status record

// Words of the (1, kStatusWords) uint32 bmm_status record, written by core 0's writer: what the
// kernels could not compute as given.
enum StatusWord : uint32_t {
    kClampedCounts,       // experts whose count exceeds the rows of their block: only those rows are computed
    kFirstClampedExpert,  // first such expert and its count, kNone if none
    kFirstClampedCount,
    kMisalignedOffsets,      // grouped: experts with tokens whose offset is not a multiple of kTileRows
                             // (computed from the row tile it falls in)
    kFirstMisalignedExpert,  // first such expert and its offset, kNone if none
    kFirstMisalignedOffset,
    kOverlappingBlocks,   // grouped: experts whose rows overlap a lower expert's (both write them)
    kFirstOverlapExpert,  // first such expert, kNone if none
    kStatusWords,
};

}  // namespace ttnn_moe::moe_bmm_shared
