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
    kNumLinks,             // L: fabric links per direction, dealt out over the senders (sender_links)
    kNumSenders,           // C: cores sending token rows over their own links (this one is sender 0)
    kStreamed,             // 1: the tables stream through L1 windows (TableWindows), 0: they are whole in L1
    kOwnWindow,            // tokens of this device's ids and weights in L1 at a time (T: no DRAM copy)
    kListWindow,           // routing-list entries in L1 at a time (T x K when whole)
    kRowWindow,            // rows of the token_idx_map and routed_token_weights images in L1 (capacity when whole)
    kNumGatherCores,       // G: cores sharing the first reads (the C senders, then gather_reads.cpp)
    kLineDevices,
};
}  // namespace dataflow_arg
// After the route words: the NOC (x, y) of the first row's cores 1 .. G-1 (the row senders
// send_rows.cpp, then the gather-only cores gather_reads.cpp), then the fabric connection block
// (this core's links).

// Runtime args of a row sender (send_rows.cpp on cores (1, 0) .. (C - 1, 0)): once the main kernel
// has laid out the plan it sends the rows of its share of the tokens over its own fabric links.
// From kRoutes on: the route words of the D line positions, then the fabric connection block.
namespace sender_arg {
enum : uint32_t {
    kXAddress,
    kIdsAddress,
    kTokensAddress,
    kSlotSourceAddress,
    kMappingAddress,
    kWeightsAddress,
    kSender,      // s in 1 .. C - 1: its tokens are [s * chunk, (s + 1) * chunk), chunk = ceil(T / C)
    kNumSenders,  // C
    kNumLinks,    // links of this core (sender_links)
    kNumTokens,   // T
    kTopK,        // K
    kHidden,      // H
    kNumExperts,  // E
    kLineSize,    // D
    kPosition,    // this device's position on the line
    kMaxPacketPayload,
    kNumDevices,  // N, devices of the mesh (width of an expert_mapping row)
    kMappingElementBytes,
    kMainNocX,  // NOC coordinates of the main kernel's core: its send plan, its peers' sem_payload
    kMainNocY,
    kRoutingListsAddress,  // this device's ids and weights are read from their DRAM copy there ...
    kOwnCopied,            // ... when 1 (more tokens than one window of them)
    kNumGatherCores,       // G: cores sharing the first reads, this one share kSender
    kRoutes,
};
}  // namespace sender_arg

// Runtime args of a gather-only core (gather_reads.cpp on cores (C, 0) .. (G - 1, 0) of the grid's
// first row): its share of the first reads into the main core's L1, then its share of the last
// writes (finish_share.hpp).
namespace gather_arg {
enum : uint32_t {
    kMappingAddress,
    kIdsAddress,
    kWeightsAddress,
    kTokensAddress,
    kSlotSourceAddress,
    kRoutingListsAddress,  // this device's ids and weights go to their DRAM copy there ...
    kOwnCopied,            // ... when 1 (more tokens than one window of them)
    kCore,                 // g in C .. G - 1: its share of the first reads
    kNumCores,             // G
    kNumTokens,            // T
    kTopK,                 // K
    kNumExperts,           // E
    kNumDevices,           // N, devices of the mesh (width of an expert_mapping row)
    kMappingElementBytes,
    kPosition,  // this device's position on the line (its page of routing_lists)
    kMainNocX,  // NOC coordinates of the main kernel's core
    kMainNocY,
    kHidden,    // H: the fan-out copies' row bytes
    kLineSize,  // D
    kCount,
};
}  // namespace gather_arg

// Links per direction of sender s when L links are dealt out over C senders (a contiguous block
// each, the first L % C senders one more); a sender's tokens take turns on its links.
inline constexpr uint32_t sender_links(uint32_t s, uint32_t links, uint32_t senders) {
    return links / senders + (s < links % senders ? 1 : 0);
}
inline constexpr uint32_t sender_first_link(uint32_t s, uint32_t links, uint32_t senders) {
    return s * (links / senders) + (s < links % senders ? s : links % senders);
}

// First token and end of row sender s's share of T tokens among C senders.
inline constexpr uint32_t sender_token_chunk(uint32_t tokens, uint32_t senders) {
    return (tokens + senders - 1) / senders;
}
inline constexpr uint32_t sender_first_token(uint32_t s, uint32_t tokens, uint32_t senders) {
    const uint32_t first = s * sender_token_chunk(tokens, senders);
    return first < tokens ? first : tokens;
}

// Runtime args of a padding writer (write_padding.cpp, the other data-movement RISC and NOC of each
// core of the grid's first two rows): its share of the zero padding rows of this device's blocks,
// once the plan is laid out.
namespace padding_arg {
enum : uint32_t {
    kTokensAddress,
    kHidden,        // H
    kNumExperts,    // E
    kLocalExperts,  // E_l
    kLineSize,      // D
    kPosition,      // this device's position on the line
    kWriter,        // w: this writer's index, on core (w, 0) of the first row, else (w - W, 1)
    kNumWriters,    // P: the first row's W, then the second row's (none on a one-row grid)
    kNumSenders,    // C: writers 1 .. C - 1 start on their row sender's sem_go, the others on sem_padding_go
    kMainNocX,      // NOC coordinates of the main core, whose plan tables writers w > 0 copy
    kMainNocY,
    kFirstRowWriters,  // W, the grid's width: writers 0 .. W - 1 also do fan-out copies
    kCount,
    kWriterNocCores = kCount,  // writer 0 only: NOC x, y of writers C .. P - 1, which it starts
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
inline constexpr const char* kCbZeroRow = "cb_zero_row";          // a padding writer's zero row
// main: 1 plan laid out (its padding writer starts), 2 rows landed (it copies)
inline constexpr const char* kSemPlan = "sem_plan";
inline constexpr const char* kSemCounts = "sem_counts";     // count packets landed
inline constexpr const char* kSemLists = "sem_lists";       // list packets landed
inline constexpr const char* kSemPayload = "sem_payload";   // a peer's rows and lists all landed
inline constexpr const char* kCbSendPlan = "cb_send_plan";  // the row senders' plan (send_plan layout)
// On every first-row core but the main one: 1 send plan (row senders), 2 finish header, 3 rows landed.
inline constexpr const char* kSemGo = "sem_go";
inline constexpr const char* kCbFinish = "cb_finish";           // the finish header and a chunk of pairs
inline constexpr const char* kCbSlotImage = "cb_slot_image";    // main: slot_source entries of the used slots
inline constexpr const char* kCbFanout = "cb_fanout";           // main: (from row, to row) fan-out copies
inline constexpr const char* kCbGather = "cb_gather";           // a batch of gathered words (gather_share.hpp)
inline constexpr const char* kCbCopy = "cb_copy";               // a padding writer's finish block and two row buffers
inline constexpr const char* kSemGathered = "sem_gathered";     // main: cores whose first reads landed here
inline constexpr const char* kSemPaddingGo = "sem_padding_go";  // on a padding-only core: plan laid out
inline constexpr const char* kSemTablesCopied = "sem_tables_copied";  // main: padding writers holding the plan
}  // namespace named_arg

// L1 layouts of the scratch CBs.
// The send plan, on the main core: per expert its owner position (or kNone), the end of its kept
// rows (offset + kept), then per row sender s the row its next assignment from this device takes
// (offset + before + this device's assignments to it in the tokens before s's share). A row
// sender copies the first two and its own into the same CB of its core, at sender slot 0.
inline constexpr uint32_t kSendPlanFixedTables = 2;
// The finish header (cb_finish, at the same address on every core of the first row): what the main
// kernel publishes for the last writes the first row shares (finish_share.hpp), followed by room
// for kFinishChunk packed pairs read from an even entry (one more). Slot image and fan-out list are L1 addresses on the main core, 8 bytes an entry.
// Pages of slot_source before kFinishFirstPage are written already (by the main kernel, streamed).
enum FinishWord : uint32_t {
    kFinishNumSlots,
    kFinishNumFanout,
    kFinishSlotImage,
    kFinishFanout,
    kFinishFirstPage,
    kFinishWords
};
// The header's bytes: the packed pairs after it start 16-byte aligned, as NOC reads need.
inline constexpr uint32_t kFinishHeaderBytes = (kFinishWords * 4 + 15) / 16 * 16;
// slot_source pages or fan-out copies a core handles per batch (cb_stage holds kFinishChunk
// DRAM-aligned page slots).
inline constexpr uint32_t kFinishChunk = 32;
inline constexpr uint32_t kFinishBytes = kFinishHeaderBytes + (kFinishChunk + 2) * 8;
// The fan-out copies are shared by both data-movement RISCs of each of the G first-row cores:
// copier c is the dataflow kernel of core c, copier G + c its padding writer (write_padding.cpp,
// on the other NOC), which holds a finish block and two row buffers of its own in cb_copy.
inline constexpr uint32_t kCopiersPerCore = 2;
// Per-expert plan tables: owner position, line index, assignments before this source,
// total assignments, running rank, block offset, rows kept.
inline constexpr uint32_t kPlanTables = 7;
// Until the plan is laid out, table `before` (the third) holds per expert the device its mapping
// row marks (kNone when not one-hot), gathered by the row senders (gather_share.hpp).
inline constexpr uint32_t kPlanDevicesTable = 2;
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
static_assert(kFinishChunk * 64 <= kStageSlots * kStageBytes, "cb_stage holds a chunk of DRAM-aligned page slots");
// cb_gather: a batch's ids (kTokenBatch tokens of up to kMaxTopK), then its weights, each with room
// to start at any offset modulo 16; a batch of mapping words fits the first part.
inline constexpr uint32_t kGatherIdsBytes = kTokenBatch * kMaxTopK * 4 + 32;
inline constexpr uint32_t kGatherBytes = kGatherIdsBytes + kTokenBatch * kMaxTopK * 2 + 32;
static_assert(kMappingBatchRows * 4 + 16 <= kGatherIdsBytes, "a batch of mapping words fits cb_gather");
// Streamed tables (when the whole ones would pass the L1 budget): the windows the main core keeps.
// This device's ids and weights, when more than one window, are copied to page `position` of its
// routing_lists (which no peer writes), ids first, weights from own_copy_weights_offset, and read
// back kOwnWindowBytes at a time; routing lists go out and come in kListWindowBytes at a time
// (whole fabric packets); the token_idx_map and routed_token_weights images are built
// kRowWindowRows rows per walk of the line's assignments; slot_source entries are written
// kSlotWindow at a time by the main kernel and the fan-out copies are done kFanoutWindow at a time.
inline constexpr uint32_t kOwnWindowBytes = 64 * 1024;
inline constexpr uint32_t kListWindowBytes = 32 * 1024;
inline constexpr uint32_t kRowWindowRows = 64 * 1024;
inline constexpr uint32_t kSlotWindow = 128;
inline constexpr uint32_t kFanoutWindow = 512;
// Every window of the copy starts at a multiple of 64 bytes (the DRAM read alignment of either
// architecture): the weights at a multiple of 64, windows of a multiple of 32 tokens.
inline constexpr uint32_t kCopyAlignment = 64;
inline constexpr uint32_t own_copy_weights_offset(uint32_t assignments) {
    return (assignments * 4 + kCopyAlignment - 1) / kCopyAlignment * kCopyAlignment;
}
inline constexpr uint32_t own_window_tokens(uint32_t top_k) {
    return kOwnWindowBytes / (top_k * kOwnEntryBytes) / 32 * 32;
}
// List entries of a window: whole fabric packets, so a peer counts the packets of a list sent in
// windows as of one sent whole, and a multiple of kCopyAlignment bytes (windows are read back).
inline constexpr uint32_t list_window_entries(uint32_t max_packet_payload) {
    uint32_t packets = kListWindowBytes / max_packet_payload;
    if (packets == 0) packets = 1;
    if (packets * max_packet_payload % kCopyAlignment) ++packets;  // a payload of 32 modulo 64: even packets
    return packets * max_packet_payload / kListEntryBytes;
}

// Room for the packet header of either fabric (1D low-latency or 2D hybrid mesh).
inline constexpr uint32_t kHeaderSlotBytes = 128;

}  // namespace ttnn_moe::all_to_all_dispatch_dense_shared
