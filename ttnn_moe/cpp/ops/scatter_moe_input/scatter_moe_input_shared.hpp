// What the program factory of scatter_moe_input and its kernels
// (kernels/scatter_moe_input/dataflow/{reader_gather_rows.cpp, writer_rows.cpp}) must
// agree on. Included by both sides: plain C++17, no device or host headers.
#pragma once

#include <cstdint>

namespace ttnn_moe::scatter_moe_input_shared {

inline constexpr uint32_t kNone = 0xFFFFFFFFu;  // "no such entry / expert" in the status record

// The reader walks a routed_tokens row front to back, so it holds at most this many of its
// entries in L1 at a time (16 KiB): a longer row is read in chunks of it, and the scratch no
// longer grows with T. A multiple of 32 entries, so every chunk starts DRAM-aligned.
inline constexpr uint32_t kMaxTokenChunkEntries = 4096;

// The reader's tensors: order of its accessors' compile-time args and of its address
// runtime args (the reporting core writes scatter_status).
enum ReaderTensor : uint32_t { kX, kCounts, kRoutedTokens, kStatus, kNumReaderTensors };

// Runtime args of the reader: the addresses of its tensors (ReaderTensor order), then these.
namespace reader_arg {
enum : uint32_t {
    kNumTokens = kNumReaderTensors,  // T
    kRowBytes,                       // H * 2
    kNumLocal,                       // E_l
    kRowBegin,                       // this core's output rows [row_begin, row_end) of E_l * T
    kRowEnd,
    kReportsStatus,  // 1 on the core that checks every entry and writes scatter_status
    kChunkEntries,   // routed_tokens entries read per chunk: min(T, kMaxTokenChunkEntries)
    kCount,
};
}  // namespace reader_arg

// Runtime args of the writer.
namespace writer_arg {
enum : uint32_t {
    kOutAddr,
    kRowBytes,
    kRowBegin,
    kRowEnd,
    kCount,
};
}  // namespace writer_arg

// Names of the named compile-time args (CBs).
namespace named_arg {
inline constexpr const char* kCbRows = "cb_rows";           // gathered rows, reader -> writer
inline constexpr const char* kCbCounts = "cb_counts";       // reader scratch: count of each expert
inline constexpr const char* kCbTokenRow = "cb_token_row";  // reader scratch: one chunk of a routed_tokens row
inline constexpr const char* kCbStatus = "cb_status";       // reader scratch: the status record
}  // namespace named_arg

// Words of the (1, kStatusWords) uint32 scatter_status record.
enum StatusWord : uint32_t {
    kBadTokens,       // entries i < count_l whose token index is outside [0, T): zero rows
    kFirstBadExpert,  // first such (l, i) in (l, i) order and its token index, kNone if none
    kFirstBadIndex,
    kFirstBadToken,
    kClampedCounts,       // experts whose count exceeds T: only their T rows are gathered
    kFirstClampedExpert,  // first such expert and its count, kNone if none
    kFirstClampedCount,
    kStatusWords,
};

}  // namespace ttnn_moe::scatter_moe_input_shared
