// What the program factory and the kernel of prepare_moe_routing_tensors agree on:
// the io order, the runtime arguments, the circular buffers and the status record.
// Included by both sides (the kernel with a path relative to its own file).
#pragma once

#include <cstdint>

namespace ttnn_moe::prepare_moe_routing_tensors_shared {

constexpr uint32_t kNone = 0xFFFFFFFFu;  // "no such (t, k) / expert" in the status record

// Tensors in io order: the 3 inputs then the 5 outputs. Runtime args 0..kNumIo-1 are
// their buffer addresses in this order; the kernel's compile-time args are their
// accessor args in the same order.
enum Io : uint32_t {
    kSelectedExperts, kRoutingWeights, kExpertMapping,
    kNumRoutedTokens, kRoutedTokens, kRoutedTokenWeights, kTokenIdxMap, kRoutingStatus,
    kNumIo,
};

// Runtime args after the addresses.
enum RuntimeArg : uint32_t {
    kArgNumTokens = kNumIo,   // T
    kArgTopK,                 // K
    kArgNumExperts,           // E
    kArgNumLocalExperts,      // E_l = E / D
    kArgSlotBegin,            // this core's local experts [begin, end)
    kArgSlotEnd,
    kArgReportsStatus,        // 1 on the core that writes routing_status
    kArgChunkRows,            // (t, k) rows and mapping rows fetched per DRAM batch
    kArgDeviceIndex,          // this device's column of expert_mapping (row-major mesh order)
    kArgNumDevices,           // D
    kArgMappingElementBytes,  // 2 (uint16) or 4 (uint32, int32)
    kNumRuntimeArgs,
};

// Circular buffers, used as L1 scratch by the one data-movement kernel.
enum Cb : uint32_t {
    kCbMappingRows,    // chunk_rows expert_mapping rows
    kCbSlotTable,      // (E,) local slot of every expert on this device, or kNone
    kCbIds,            // chunk_rows rows of selected_experts
    kCbWeights,        // chunk_rows rows of routing_weights
    kCbTokens,         // this core's routed_tokens rows
    kCbTokenWeights,   // this core's routed_token_weights rows
    kCbCounters,       // (E_l,) assignments seen per local expert
    kCbStatus,         // the status record
    kCbStage,          // one aligned count word for its DRAM write
    kNumCbs,
};

// Words of the (1, 8) uint32 routing_status record.
enum StatusWord : uint32_t {
    kNumInvalidIds,     // ids outside [0, E)
    kFirstInvalidT,     // first bad (t, k) in row-major order and its id, kNone if none
    kFirstInvalidK,
    kFirstInvalidId,
    kNumDropped,        // assignments past the T columns of a local expert (a token picked it twice)
    kFirstDroppedSlot,  // local expert of the first dropped assignment
    kMappingErrors,     // expert_mapping rows that are not one-hot, +1 if this device holds != E_l experts
    kFirstBadExpert,    // first such row, kNone if none
    kStatusWords,
};

}  // namespace ttnn_moe::prepare_moe_routing_tensors_shared
