// What the program factory of local_reduce_moe_output and its kernels
// (kernels/local_reduce_moe_output/{dataflow/reader_gather_assignments.cpp,
// compute/weighted_sum.cpp, dataflow/writer_rows.cpp}) must agree on.
// Included by both sides: plain C++17, no device or host headers.
#pragma once

#include <cstdint>

namespace ttnn_moe::local_reduce_moe_output_shared {

inline constexpr uint32_t kNone = 0xFFFFFFFFu;  // "no such entry / expert" in the status record

// Grouped expert_offsets are multiples of it: a block's map entries and weights then start at
// a DRAM-aligned address.
inline constexpr uint32_t kOffsetAlignment = 32;

// Elements of a row chunk the compute kernel handles as one element-wise tile.
inline constexpr uint32_t kChunkElements = 1024;

// The reader takes a core's output rows in windows of at most this many (each window costs a
// scan of the map; 8192 rows keep the per-row index at 96 KiB) and reads an expert's map
// entries in pieces of at most kMaxSegmentEntries (a multiple of kOffsetAlignment, so every
// piece starts DRAM-aligned): neither scratch grows with T or M.
inline constexpr uint32_t kMaxWindowRows = 8192;
inline constexpr uint32_t kMaxSegmentEntries = 2048;

// The reader sends the compute kernel its (y chunk, weight) pairs in batches of at most
// kPairBatch, the reads of a batch in flight together; cb_y and cb_weight hold kPairPages pages,
// so one batch is filled while the other is summed, and cb_row_length as many (it must hold more
// than kPairBatch: see the reader's PairFeed).
inline constexpr uint32_t kPairBatch = 8;
inline constexpr uint32_t kPairPages = 2 * kPairBatch;

// Aligned slots of cb_status_stage: the row_overflow words of that many rows are written together.
inline constexpr uint32_t kOverflowStageSlots = 32;

// The reader's tensors: order of its accessors' compile-time args and of its address
// runtime args. Padded mode has no offsets tensor, and without num_used_rows there is no
// used-rows tensor: those slots describe num_routed_tokens and are never read.
enum ReaderTensor : uint32_t {
    kY,
    kTokenIdxMap,
    kRoutedTokenWeights,
    kCounts,
    kOffsets,
    kRowOverflow,
    kStatus,
    kUsedRows,
    kNumReaderTensors,
};

// The output rows the op computes, [0, rows), are split over the cores at run time, where the
// count is known: core c of `cores` takes [share_begin(c), share_begin(c + 1)).
inline constexpr uint32_t share_begin(uint32_t core, uint32_t rows, uint32_t cores) {
    return static_cast<uint32_t>(static_cast<uint64_t>(rows) * core / cores);
}

// Runtime args of the reader: the addresses of its tensors (ReaderTensor order), then these.
namespace reader_arg {
enum : uint32_t {
    kGrouped = kNumReaderTensors,  // 1: grouped mode (one map page, offsets), 0: padded (a page per expert)
    kNumLocal,                     // E_l
    kBlockRows,                    // entries per map page: T (padded) or M (grouped)
    kHidden,                       // H
    kCore,                         // this core's index among the kNumCores sharing the rows
    kNumCores,
    kHasUsedRows,     // 1: rows past num_used_rows (read on the device) are neither computed nor written
    kListCapacity,    // entries the L1 assignment lists hold
    kRowBound,        // assignments one output row may keep
    kNumOutRows,      // rows of the output: map entries at or past it name no row
    kReportsStatus,   // 1 on the core that writes reduce_status
    kWindowRows,      // output rows indexed per window: min(most rows of a core, kMaxWindowRows)
    kSegmentEntries,  // map entries read per piece: min(T or M, kMaxSegmentEntries)
    kCount,
};
}  // namespace reader_arg

// Runtime args of the compute kernel. Its rows are counted on the device: the reader sends the
// number first on cb_row_length, then each row's pair count.
namespace compute_arg {
enum : uint32_t {
    kNumChunks,  // ceil(H / kChunkElements)
    kCount,
};
}  // namespace compute_arg

// Runtime args of the writer. The reader sends it the core's rows on cb_row_range.
namespace writer_arg {
enum : uint32_t {
    kOutAddr,
    kHidden,
    kCount,
};
}  // namespace writer_arg

// Words of the cb_row_range page: this core's output rows [begin, end).
enum RowRangeWord : uint32_t { kRangeBegin, kRangeEnd, kRangeWords };

// Names of the named compile-time args (CBs).
namespace named_arg {
inline constexpr const char* kCbY = "cb_y";                           // y chunk of one assignment, bf16
inline constexpr const char* kCbWeight = "cb_weight";                 // its weight as a bf16 scalar tile (element 0)
inline constexpr const char* kCbRowLength = "cb_row_length";          // per output row: assignments fed (>= 1)
inline constexpr const char* kCbProduct = "cb_product";               // w * y, fp32
inline constexpr const char* kCbAcc = "cb_acc";                       // running sum, fp32
inline constexpr const char* kCbOut = "cb_out";                       // finished chunk, bf16
inline constexpr const char* kCbCounts = "cb_counts";                 // reader scratch: count of each expert
inline constexpr const char* kCbOffsets = "cb_offsets";               // offset of each expert (grouped)
inline constexpr const char* kCbMapSegment = "cb_map_segment";        // a piece of one expert's token_idx_map entries
inline constexpr const char* kCbWeightSegment = "cb_weight_segment";  // and their weights
inline constexpr const char* kCbEntries = "cb_entries";               // kept assignments in scan order
inline constexpr const char* kCbSorted = "cb_sorted";                 // the same, grouped by output row
inline constexpr const char* kCbRowIndex = "cb_row_index";            // kRowIndexPages of per-row words
inline constexpr const char* kCbStatusStage =
    "cb_status_stage";                                      // num_used_rows read, then one word per row_overflow write
inline constexpr const char* kCbStatus = "cb_status";       // the reduce_status record
inline constexpr const char* kCbRowRange = "cb_row_range";  // the core's rows, reader -> writer
}  // namespace named_arg

// Words of the (1, kStatusWords) uint32 reduce_status record.
enum StatusWord : uint32_t {
    kBadRows,         // valid entries whose token_idx_map row is >= kRowsComputed: not summed
    kFirstBadExpert,  // first such entry: its expert, its index in the map page, its row; kNone if none
    kFirstBadIndex,
    kFirstBadRow,
    kClampedCounts,       // experts whose count exceeds the map entries of their block: the rest are not read
    kFirstClampedExpert,  // first such expert and its count, kNone if none
    kFirstClampedCount,
    kOverlappingBlocks,   // grouped: experts whose block overlaps a lower expert's (rows summed twice)
    kFirstOverlapExpert,  // first such expert, kNone if none
    kMisalignedOffsets,   // grouped: experts with tokens whose offset is not a multiple of kOffsetAlignment: not read
    kFirstMisalignedExpert,  // first such expert and its offset, kNone if none
    kFirstMisalignedOffset,
    kUsedRowsRead,  // num_used_rows as read, kNone without it; past num_out_rows it is clamped to it
    kRowsComputed,  // output rows computed and written: [0, this)
    kStatusWords,
};

// L1 layouts of the reader's scratch.
inline constexpr uint32_t kEntryWords = 3;        // scan entry: row - row_begin, y page, weight bits
inline constexpr uint32_t kSortedEntryWords = 2;  // sorted entry: y page, weight bits
// Pages of (window rows + 1) words each: count, start, cursor (dropped, then rank) per output row.
inline constexpr uint32_t kRowIndexPages = 3;

}  // namespace ttnn_moe::local_reduce_moe_output_shared
