// What the program factory of all_to_all_dispatch_dense and its kernel
// (kernels/all_to_all_dispatch_dense/dataflow/dispatch_dense.cpp) must agree on.
// Included by both sides: plain C++17, no device or host headers.
#pragma once

#include <cstdint>

namespace ttnn_moe::all_to_all_dispatch_dense_shared {

// "No value": the owner of an expert outside the line, a destination without a row.
inline constexpr uint32_t kNone = 0xFFFFFFFFu;
// Rows of a tile: expert blocks start at multiples of it and the capacity is one.
inline constexpr uint32_t kTile = 32;
// Largest top-k the kernel's per-token tables hold.
inline constexpr uint32_t kMaxTopK = 32;

// Words of the dispatch_status record (1, kStatusWords), written by every device.
enum StatusWord : uint32_t {
    kDroppedRows = 0,  // assignments that did not fit `capacity`
    kNeededRows = 1,   // rows the blocks would need with no capacity limit (tile-aligned)
    kInvalidIds = 2,   // ids of this device's tokens outside [0, E)
    kFirstInvalidToken = 3,
    kFirstInvalidK = 4,
    kFirstInvalidId = 5,
    kMappingErrors = 6,  // experts not placed on exactly one device, plus 1 if this device's count != E_l
    kFirstBadExpert = 7,
};
inline constexpr uint32_t kStatusWords = 8;

// The io tensors: the 4 inputs, the 8 outputs, the 2 scratch buffers. Their accessors'
// compile-time args and their addresses (runtime args [0, kNumIo)) come in this order.
enum Io : uint32_t {
    kX,
    kIds,
    kWeights,
    kMapping,
    kTokens,
    kCounts,
    kOffsets,
    kIdxMap,
    kRowWeights,
    kSlotSource,
    kNumSlots,
    kStatus,
    kRoutingCounts,
    kRoutingLists,
    kNumIo,
};

// Runtime args of the kernel, after the addresses. From kLineDevices on, the length
// depends on the line size D: D row-major device indices of the line, the route words of
// the D positions (common_shared.hpp), then the fabric connection block the host appends.
namespace dataflow_arg {
enum : uint32_t {
    kNumTokens = kNumIo,   // T = B*S
    kTopK,                 // K
    kHidden,               // H
    kNumExperts,           // E
    kLocalExperts,         // E_l
    kNumDevices,           // N, devices of the mesh (width of an expert_mapping row)
    kLineSize,             // D
    kPosition,             // this device's position on the line
    kCapacity,             // rows of `tokens`
    kMaxPacketPayload,     // bytes per fabric packet
    kMappingElementBytes,  // 2 or 4
    kNumLinks,             // fabric links per direction
    kLineDevices,
};
}  // namespace dataflow_arg

// Runtime args of the padding writer (write_padding.cpp, the core's other data-movement RISC and
// NOC): it writes the zero padding rows of this device's blocks once the plan is laid out.
namespace padding_arg {
enum : uint32_t {
    kTokensAddress,
    kHidden,        // H
    kNumExperts,    // E
    kLocalExperts,  // E_l
    kLineSize,      // D
    kPosition,      // this device's position on the line
    kCount,
};
}  // namespace padding_arg

// Names of the named compile-time args: the scratch CBs and the semaphores.
namespace named_arg {
inline constexpr const char* kCbRow = "cb_row";                   // two token rows
inline constexpr const char* kCbOwn = "cb_own";                   // this device's ids, then weights
inline constexpr const char* kCbCounts = "cb_counts";             // D count pages
inline constexpr const char* kCbList = "cb_list";                 // one routing list
inline constexpr const char* kCbMapping = "cb_mapping";           // kMappingBatchRows expert_mapping rows
inline constexpr const char* kCbTables = "cb_tables";             // the plan tables
inline constexpr const char* kCbIdxImage = "cb_idx_image";        // token_idx_map image
inline constexpr const char* kCbWeightImage = "cb_weight_image";  // routed_token_weights image
inline constexpr const char* kCbStage = "cb_stage";               // staging of small reads and writes
inline constexpr const char* kCbHeaders = "cb_headers";           // the fabric packet header
inline constexpr const char* kCbZeroRow = "cb_zero_row";          // the padding writer's zero row
inline constexpr const char* kSemInit = "sem_init";               // peers running this program, then: plan laid out
inline constexpr const char* kSemCounts = "sem_counts";           // count packets landed
inline constexpr const char* kSemLists = "sem_lists";             // list packets landed
inline constexpr const char* kSemPayload = "sem_payload";         // a peer's rows and lists all landed
}  // namespace named_arg

// L1 layouts of the scratch CBs.
// Per-expert plan tables: owner position, line index, assignments before this source,
// total assignments, running rank, block offset, rows kept.
inline constexpr uint32_t kPlanTables = 7;
// A routing-list entry: token (uint32), then expert | bf16 weight bits << 16.
inline constexpr uint32_t kListEntryBytes = 8;
inline constexpr uint32_t kListExpertBits = 16;
// Experts a routing-list entry can name.
inline constexpr uint32_t kMaxExperts = 1u << kListExpertBits;
// Per assignment of this device: its expert id (uint32) in the first block, its weight
// (bf16) in the second.
inline constexpr uint32_t kOwnEntryBytes = 4 + 2;
// Staging of one ids row (K <= kMaxTopK words) or the status record.
inline constexpr uint32_t kStageBytes = kMaxTopK * 4;
// Tokens whose ids and weights are read behind one barrier.
inline constexpr uint32_t kTokenBatch = 16;
// cb_stage holds kStageSlots slots of kStageBytes: a token's ids and weights, for a batch of
// tokens in flight while this device's assignments are read.
inline constexpr uint32_t kStageSlots = 2 * kTokenBatch;
// expert_mapping rows read behind one barrier (cb_mapping holds them, DRAM-aligned).
inline constexpr uint32_t kMappingBatchRows = 32;
static_assert(kStatusWords * 4 <= kStageBytes, "the status record is staged in cb_stage");
// Room for the packet header of either fabric (1D low-latency or 2D hybrid mesh).
inline constexpr uint32_t kHeaderSlotBytes = 128;

}  // namespace ttnn_moe::all_to_all_dispatch_dense_shared
