// What the program factory of all_to_all_combine_dense and its kernels
// (kernels/all_to_all_combine_dense/{dataflow/combine_dense.cpp, compute/sum_partials.cpp})
// must agree on. Included by both sides: plain C++17, no device or host headers.
#pragma once

#include <cstdint>

#include "../common/common_shared.hpp"

namespace ttnn_moe::all_to_all_combine_dense_shared {

// Words of the combine_status record (1, kStatusWords), written by every device.
enum StatusWord : uint32_t {
    kBadSlots = 0,         // used slots whose (position, token) is outside [0, D) x [0, B*S)
    kFirstBadSlot = 1,     // kNone while there is none
    kNumSlotsClamped = 2,  // 1 when num_slots exceeded capacity (then capacity slots were used)
    kNumSlotsRead = 3,     // the num_slots read, when it was clamped
};
inline constexpr uint32_t kStatusWords = 8;
// "No value" in a status word.
inline constexpr uint32_t kNone = 0xFFFFFFFFu;

// Elements of a row chunk the compute kernel sums as one element-wise tile.
inline constexpr uint32_t kTileElements = 1024;

// The io tensors: the 3 inputs, the 4 outputs. The dataflow kernel's accessors'
// compile-time args and its address runtime args [0, kNumIo) come in this order.
enum Io : uint32_t { kReduced, kSlotSource, kNumSlots, kOutput, kPartials, kPresence, kStatus, kNumIo };

// Runtime args of the dataflow kernel (one on each of the S cores, the first C of them (0, 0) ..
// (C - 1, 0) the senders), after the addresses; the route words of the D line positions
// (common_shared.hpp) start at kRoutes, then the NOC (x, y) of the S cores, then on a sender the
// fabric connection block (this core's links) the host appends.
namespace dataflow_arg {
enum : uint32_t {
    kNumTokens = kNumIo,  // T = B*S
    kHidden,              // H
    kLineSize,            // D
    kPosition,            // this device's position on the line
    kCapacity,            // rows of `reduced`
    kMaxPacketPayload,    // bytes per fabric packet
    kOutputIsFp32,        // 1: float32 output, 0: bfloat16
    kReturnPartials,      // 1: absent partial rows are written as zeros
    kPresenceStride,      // bytes between the presence rows in L1 (presence_row_words, aligned)
    kPresenceMergePages,  // presence pages read in at a time to be merged (presence_merge_pages)
    kNumLinks,            // L: fabric links per direction, dealt out over the cores (core_links)
    kCore,                // c: this core's index; a sender (c < C) sends slot share c; every core sums token share c
    kNumCores,            // C: the senders, one per block of links
    kNumSumCores,         // S >= C: the cores summing a share of the tokens each
    kRoutes,
};
}  // namespace dataflow_arg

// Runtime args of the compute kernel.
namespace compute_arg {
enum : uint32_t {
    kNumTokens,  // tokens of this core's share
    kNumChunks,  // ceil(H / kTileElements): cb_partial pages per partial row
    kCount,
};
}  // namespace compute_arg

// Runtime args of the partial reader (read_partials.cpp, the core's other data-movement RISC and
// NOC): it streams the partial rows of the core's token share into cb_partial, a batch of rows
// behind one read barrier, while the dataflow kernel writes the sums out.
namespace reader_arg {
enum : uint32_t {
    kPartialsAddress,
    kNumTokens,   // T
    kFirstToken,  // this core's share of the tokens: [first, end)
    kEndToken,
    kHidden,          // H
    kLineSize,        // D: presence rows
    kPresenceStride,  // bytes between the presence rows in L1
    kPartialRows,     // partial rows cb_partial holds
    kCount,
};
}  // namespace reader_arg

// The presence rows in cb_presence are plain L1 the dataflow kernel merges and the partial reader
// reads, a window of tokens at a time: sem_windows_merged counts the windows the dataflow kernel
// merged, sem_windows_read those whose rows the reader has taken (the next may then be merged).

// Partial rows (ceil(H / kTileElements) pages each) the reader reads behind one barrier: several,
// so their DRAM latencies and banks overlap (a 14 KiB row from one bank took 0.9 us alone). A batch
// ends at the end of the cb_partial ring (a reservation never runs past it) and at the end of a
// presence window (the dataflow kernel merges the next once every sum of this one is written).
inline constexpr uint32_t kReadBatchRows = 4;

// Names of the named compile-time args: CBs and semaphores.
namespace named_arg {
inline constexpr const char* kCbRow = "cb_row";              // two reduced rows (dataflow scratch)
inline constexpr const char* kCbPartial = "cb_partial";      // partial rows, reader -> compute
inline constexpr const char* kCbAcc = "cb_acc";              // fp32 accumulator (compute)
inline constexpr const char* kCbOut = "cb_out";              // a token's summed chunks, compute -> dataflow
inline constexpr const char* kCbCount = "cb_count";          // partials of each next token, reader -> compute
inline constexpr const char* kCbPresence = "cb_presence";    // D + 1 presence rows of a window
inline constexpr const char* kCbStage = "cb_stage";          // staging of small reads and writes
inline constexpr const char* kCbHeaders = "cb_headers";      // the fabric packet header
inline constexpr const char* kSemInit = "sem_init";          // peers running this program
inline constexpr const char* kSemPartials = "sem_partials";  // a peer's rows and presence landed
inline constexpr const char* kSemWindowsMerged = "sem_windows_merged";  // presence windows merged
inline constexpr const char* kSemWindowsRead = "sem_windows_read";      // presence windows the reader took
inline constexpr const char* kCbStatus = "cb_status";                   // on core 0: every core's status record
inline constexpr const char* kSemReady = "sem_ready";                   // cores whose received rows all landed
}  // namespace named_arg

// Links per direction of core c when L links are dealt out over C cores (a contiguous block each,
// the first L % C cores one more), and the first of them.
inline constexpr uint32_t core_links(uint32_t c, uint32_t links, uint32_t cores) {
    return links / cores + (c < links % cores ? 1 : 0);
}
inline constexpr uint32_t core_first_link(uint32_t c, uint32_t links, uint32_t cores) {
    return c * (links / cores) + (c < links % cores ? c : links % cores);
}
// Cores summing the received partials: the senders and, up to this many in all, cores that only sum
// (the sum starts once the last row has landed: on the senders alone it took a third of a prefill's
// combine). 12 cores on each of QUAD's 128 devices leave room in the emulator's 2048 L1 slots.
inline constexpr uint32_t kMaxSumCores = 12;

// Start of share c when n items are split over C cores (ceil(n / C) each, the last ones short).
inline constexpr uint32_t share_start(uint32_t c, uint32_t n, uint32_t cores) {
    const uint32_t start = c * ((n + cores - 1) / cores);
    return start < n ? start : n;
}

// Presence: which tokens each line position sent. A core's presence rows in L1 cover one window of
// at most kPresenceWindowTokens tokens, so their L1 does not grow with T. Up to one window of tokens
// (T <= kPresenceWindowTokens) a sender marks its rows in L1 and sends them whole; above it, it
// marks its outgoing pages in DRAM (the presence tensor's second half) and sends them a window at a
// time. Receivers read the pages of their token share a window at a time. A multiple of 16 tokens,
// so every window starts on a 64-byte boundary of its page.
inline constexpr uint32_t kPresenceWindowTokens = 1024;
inline constexpr bool presence_windowed(uint32_t num_tokens) {
    return num_tokens > kPresenceWindowTokens;
}
// Presence pages: (position, link) of every sender core into this device, then with windows this
// device's outgoing pages laid out alike.
inline constexpr uint32_t presence_pages(uint32_t line_size, uint32_t links, uint32_t num_tokens) {
    return line_size * links * (presence_windowed(num_tokens) ? 2 : 1);
}
// Words of an L1 presence row: a window, and room for a read that starts at the DRAM-aligned
// token below the window's first.
inline constexpr uint32_t presence_row_words(uint32_t num_tokens, uint32_t dram_alignment) {
    return (num_tokens < kPresenceWindowTokens ? num_tokens : kPresenceWindowTokens) + dram_alignment / 4;
}

// Presence pages of the other cores read in at a time (behind one barrier) to be merged into the
// rows: as many as fit kPresenceMergeBytes, at least one (clearing the outgoing pages above one
// window writes from it), at most the D x (C - 1) there are.
inline constexpr uint32_t kPresenceMergeBytes = 32 * 1024;
inline constexpr uint32_t presence_merge_pages(uint32_t line_size, uint32_t cores, uint32_t presence_stride) {
    const uint32_t fit = kPresenceMergeBytes / presence_stride;
    const uint32_t pages = fit < line_size * (cores - 1) ? fit : line_size * (cores - 1);
    return pages > 0 ? pages : 1;
}

// Slot rows a sender reads behind one barrier while it sends the last ones (cb_row holds twice as
// many): two rows of different DRAM banks overlap their reads (one at a time, a 14 KiB row's read
// took longer than its send).
inline constexpr uint32_t kRowsPerRead = 2;

// Staging of num_slots or the status record.
inline constexpr uint32_t kStageBytes = 64;
// slot_source entries read into cb_stage at a time, one per DRAM-aligned slot: the program
// sizes cb_stage to kSlotBatch x the DRAM alignment (at least kStageBytes).
inline constexpr uint32_t kSlotBatch = 32;
static_assert(kStatusWords * 4 <= kStageBytes, "the status record is staged in cb_stage");
// Room for the packet header of either fabric (1D low-latency or 2D hybrid mesh).
inline constexpr uint32_t kHeaderSlotBytes = 128;

}  // namespace ttnn_moe::all_to_all_combine_dense_shared
