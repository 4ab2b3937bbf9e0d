// What the program factory and the kernel of prepare_moe_routing_tensors agree on:
// the io order, the runtime arguments, the circular buffers and the status record.
// Included by both sides (the kernel with a path relative to its own file).
#pragma once

#include <cstdint>

namespace ttnn_moe::prepare_moe_routing_tensors_shared {

inline constexpr uint32_t kNone = 0xFFFFFFFFu;  // "no such (t, k) / expert" in the status record

// Table rows too long for L1 are built in windows of a multiple of this many columns, so every
// window starts DRAM-aligned in both the uint32 and the bfloat16 tables.
inline constexpr uint32_t kWindowColumnMultiple = 32;

// Tensors in io order: the 3 inputs then the 5 outputs. Runtime args 0..kNumIo-1 are
// their buffer addresses in this order; the kernel's compile-time args are their
// accessor args in the same order.
enum Io : uint32_t {
    kSelectedExperts,
    kRoutingWeights,
    kExpertMapping,
    kNumRoutedTokens,
    kRoutedTokens,
    kRoutedTokenWeights,
    kTokenIdxMap,
    kRoutingStatus,
    kNumIo,
};

// Runtime args of the kernel: the addresses of the io tensors (Io order), then these.
namespace dataflow_arg {
enum : uint32_t {
    kNumTokens = kNumIo,  // T
    kTopK,                // K
    kNumExperts,          // E
    kNumLocalExperts,     // E_l = E / D
    kSlotBegin,           // this core's local experts [begin, end)
    kSlotEnd,
    kReportsStatus,        // 1 on the core that writes routing_status
    kChunkRows,            // (t, k) rows and mapping rows fetched per DRAM batch
    kDeviceIndex,          // this device's column of expert_mapping (row-major mesh order)
    kNumDevices,           // D
    kMappingElementBytes,  // 2 (uint16) or 4 (uint32, int32)
    kWindowColumns,        // table columns each local expert keeps in L1: T, or a multiple of 32 below it
    kCount,
};
}  // namespace dataflow_arg

// Names of the named compile-time args: the CBs the one data-movement kernel uses as L1 scratch.
namespace named_arg {
inline constexpr const char* kCbMappingRows = "cb_mapping_rows";    // chunk_rows expert_mapping rows
inline constexpr const char* kCbSlotTable = "cb_slot_table";        // (E,) local slot of every expert, or kNone
inline constexpr const char* kCbIds = "cb_ids";                     // chunk_rows rows of selected_experts
inline constexpr const char* kCbWeights = "cb_weights";             // chunk_rows rows of routing_weights
inline constexpr const char* kCbTokens = "cb_tokens";               // a column window of this core's routed_tokens rows
inline constexpr const char* kCbTokenWeights = "cb_token_weights";  // the same window of its routed_token_weights rows
inline constexpr const char* kCbCounters = "cb_counters";           // (E_l,) assignments seen per local expert
inline constexpr const char* kCbStatus = "cb_status";               // the status record
inline constexpr const char* kCbStage = "cb_stage";                 // one aligned count word for its DRAM write
}  // namespace named_arg

// Words of the (1, 8) uint32 routing_status record.
enum StatusWord : uint32_t {
    kNumInvalidIds,  // ids outside [0, E)
    kFirstInvalidT,  // first bad (t, k) in row-major order and its id, kNone if none
    kFirstInvalidK,
    kFirstInvalidId,
    kNumDropped,        // assignments past the T columns of a local expert (a token picked it twice)
    kFirstDroppedSlot,  // local expert of the first dropped assignment
    kMappingErrors,     // expert_mapping rows that are not one-hot, +1 if this device holds != E_l experts
    kFirstBadExpert,    // first such row, kNone if none
    kStatusWords,
};

}  // namespace ttnn_moe::prepare_moe_routing_tensors_shared
