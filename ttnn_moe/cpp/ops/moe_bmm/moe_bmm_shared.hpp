// What the program factory of moe_bmm and its kernels (kernels/moe_bmm/{dataflow/
// reader_moe_bmm.cpp, compute/moe_bmm.cpp, dataflow/writer_moe_bmm.cpp}) must agree on.
// Included by both sides: plain C++17, no device or host headers.
#pragma once

#include <cstdint>

namespace ttnn_moe::moe_bmm_shared {

// Rows (and columns) of a tile; expert_offsets are multiples of it.
inline constexpr uint32_t kTileRows = 32;
// Bytes of one tile row of bfloat16, the unit a row-major x or output is read or written in.
inline constexpr uint32_t kTileRowBytes = kTileRows * 2;
// Column tiles of a row-major addend's strip at most: the reader reads a segment's addend rows in
// strips of up to this many tiles (one read of up to 1 KB per row), the compute kernel tilizes each.
inline constexpr uint32_t kAddendStripTiles = 16;

// Common runtime args (the same on every core) of all three kernels: the problem's shape.
// The reader's and the writer's addresses follow (reader_common_arg, writer_common_arg).
namespace common_arg {
enum : uint32_t {
    kNumExperts,      // E_l
    kGrouped,         // 1: x is (M, Kd) packed by expert_offsets; 0: x is (E_l, T, Kd)
    kRows,            // padded: T; grouped: M (logical rows of x and of the output)
    kRowTiles,        // padded: Mt = ceil(T / 32) per expert; grouped: ceil(M / 32) in total
    kSlotBytes,       // bytes between two routing entries in the L1 scratch (DRAM alignment)
    kInnerTiles,      // Kt
    kColTiles,        // Nt
    kInnerBlock,      // k tiles per block (divides Kt): x and w arrive, and partial sums spill, per block
    kRowBlock,        // Mb: row tiles of an expert computed together (each weight tile read once for them)
    kOutputBlock,     // P: output tiles whose partial sums a core keeps in cb_partial (a segment's rows x cols)
    kWeightHalves,    // 1: out = x @ w; 2 (SwiGLU): w's column tiles alternate gate, up (2 Nt of them)
                      // and out = silu(x @ gate) * (x @ up)
    kAddend,          // 1: out = x @ w + addend (a tensor shaped like the output); 0: no addend
    kRowMajorX,       // 1: x is ROW_MAJOR (a page per row): the reader reads row strips, compute tilizes
    kRowMajorOut,     // 1: the output is ROW_MAJOR: compute untilizes, the writer writes counted rows only
    kRowMajorAddend,  // 1: the addend is ROW_MAJOR (a page per row): the reader reads row strips, compute
                      // tilizes a segment's addend tiles before its first k block
    kCount,
};
}  // namespace common_arg

// Weight column tiles per output column tile: one, or the gate and the up column (SwiGLU).
inline constexpr uint32_t kPlainHalves = 1;
inline constexpr uint32_t kSwigluHalves = 2;

// Bits of a segment word in cb_work (reader -> compute): its row tiles and column tiles; 0 ends
// the schedule.
namespace segment_word {
inline constexpr uint32_t kColsShift = 16;
inline constexpr uint32_t kFieldMask = 0xffff;
}  // namespace segment_word

// The reader's addresses, after the shape (expert_offsets is 0 in padded mode, the addend's 0 without
// one), x's and the addend's page sizes (a tile, or a row of Kd or N elements), then the core grid: its
// columns and rows, and
// from kCount on the NOC x coordinate of each grid column followed by the NOC y coordinate of each grid
// row (the x multicast addresses the other cores by them).
namespace reader_common_arg {
enum : uint32_t {
    kXAddr = common_arg::kCount,
    kWAddr,
    kCountsAddr,
    kOffsetsAddr,
    kAddendAddr,
    kXPageBytes,
    kAddendPageBytes,
    kGridCols,
    kGridRows,
    kCount
};
}  // namespace reader_common_arg

// The writer's addresses, after the shape, then the output's page size (a tile, or a row of N
// elements). expert_offsets is 0 in padded mode, the addend's 0 without one.
namespace writer_common_arg {
enum : uint32_t {
    kOutAddr = common_arg::kCount,
    kCountsAddr,
    kOffsetsAddr,
    kAddendAddr,
    kStatusAddr,
    kOutPageBytes,
    kCount
};
}  // namespace writer_common_arg

// Per-core runtime args of the reader and the writer: cores in row-major order.
namespace core_arg {
enum : uint32_t { kCoreIndex, kNumCores, kCount };
}  // namespace core_arg

// Order of the accessors' compile-time args. expert_offsets uses num_routed_tokens' (both
// are (E_l, 1) uint32 ROW_MAJOR). x, the addend and the output take their page size at run time
// (tiles or rows; the common args carry their sizes), so one build serves both layouts and every
// shape; the writer copies the addend (a TILE one, only into a TILE output) through the output's.
namespace reader_tensor {
enum : uint32_t { kX, kW, kRouting, kAddend, kCount };
}  // namespace reader_tensor
namespace writer_tensor {
enum : uint32_t { kRouting, kOut, kStatus, kCount };
}  // namespace writer_tensor

// Names of the named compile-time args (CBs and semaphores).
namespace named_arg {
inline constexpr const char* kCbX = "cb_x";                     // x tiles: a segment's rows, one k block at a time
inline constexpr const char* kCbXRows = "cb_x_rows";            // row-major x: the rows' strips, one k block at a time
inline constexpr const char* kCbW = "cb_w";                     // w tiles: one column's k block (gate, then up)
inline constexpr const char* kCbWork = "cb_work";               // reader -> compute: one word per segment, then 0
inline constexpr const char* kCbPartial = "cb_partial";         // compute's partial sums between k blocks
inline constexpr const char* kCbRouting = "cb_routing";         // a dataflow kernel's copy of counts and offsets
inline constexpr const char* kCbZero = "cb_zero";               // writer's zero tile (padded mode)
inline constexpr const char* kCbAddend = "cb_addend";           // the addend's tile of each output tile
inline constexpr const char* kCbAddendRows = "cb_addend_rows";  // row-major addend: its row strips
inline constexpr const char* kCbStatus = "cb_status";           // writer's status record (core 0)
inline constexpr const char* kCbOut = "cb_out";                 // output tiles
inline constexpr const char* kSemXReady = "sem_x_ready";        // x sender: receivers ready for the next x block
inline constexpr const char* kSemXValid = "sem_x_valid";        // x receiver: the block has landed
inline constexpr const char* kSemWReady = "sem_w_ready";        // weight sender: receivers ready for the next block
inline constexpr const char* kSemWValid = "sem_w_valid";        // weight receiver: the block has landed
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
