// scatter_moe_input reader: for output rows [row_begin, row_end) of (E_l, T, H), pushes
// x[routed_tokens[l, i]] when i < count_l (and the token index is in range), else a zero row.
// The core with reports_status first checks every expert's entries and writes scatter_status:
// token indices outside [0, T) (their rows are zero) and counts above T (acted on as T).
// routed_tokens rows pass through L1 in chunks of chunk_entries entries, each read once when
// the walk enters it.
//
// compile-time args: 4 interleaved accessors (IsDram|RuntimePageSize) in ReaderTensor order;
// ReaderTensor, the runtime args (reader_arg), the named compile-time args and the status words:
// cpp/ops/scatter_moe_input/scatter_moe_input_shared.hpp.
// conformance: kind=dataflow ct_args=130,130,130,130 named=cb_rows:0,cb_counts:1,cb_token_row:2,cb_status:3 formats=1:uint32,2:uint32,3:uint32
#include <cstdint>
#include <tuple>

#include "../../../cpp/ops/scatter_moe_input/scatter_moe_input_shared.hpp"
#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"

using namespace ttnn_moe::scatter_moe_input_shared;
using namespace moe_kernel;

namespace {

constexpr uint32_t cb_rows = get_named_compile_time_arg_val(named_arg::kCbRows);
constexpr uint32_t cb_counts = get_named_compile_time_arg_val(named_arg::kCbCounts);
constexpr uint32_t cb_token_row = get_named_compile_time_arg_val(named_arg::kCbTokenRow);
constexpr uint32_t cb_status = get_named_compile_time_arg_val(named_arg::kCbStatus);
constexpr auto kTensorArgs = make_tensor_accessor_args_tuple<kNumReaderTensors, 0>();
// No routed_tokens chunk is in L1 yet.
constexpr uint32_t kNoChunk = 0xFFFFFFFFu;

struct Args {
    uint32_t address[kNumReaderTensors];
    uint32_t num_tokens, row_bytes, num_local, row_begin, row_end;
    bool reports_status;
    uint32_t chunk_entries;
};

Args read_args() {
    Args a;
    for (uint32_t i = 0; i < kNumReaderTensors; ++i) a.address[i] = get_arg_val<uint32_t>(i);
    a.num_tokens = get_arg_val<uint32_t>(reader_arg::kNumTokens);
    a.row_bytes = get_arg_val<uint32_t>(reader_arg::kRowBytes);
    a.num_local = get_arg_val<uint32_t>(reader_arg::kNumLocal);
    a.row_begin = get_arg_val<uint32_t>(reader_arg::kRowBegin);
    a.row_end = get_arg_val<uint32_t>(reader_arg::kRowEnd);
    a.reports_status = get_arg_val<uint32_t>(reader_arg::kReportsStatus) != 0;
    a.chunk_entries = get_arg_val<uint32_t>(reader_arg::kChunkEntries);
    return a;
}

// Accessors take the DRAM-aligned page size (the bank stride of the pages).
uint32_t page_bytes(const Args& a, uint32_t tensor) {
    switch (tensor) {
        case kX:
            return align_up(a.row_bytes);
        case kRoutedTokens:
            return align_up(a.num_tokens * 4);
        case kStatus:
            return align_up(kStatusWords * 4);
        default:
            return align_up(4);  // num_routed_tokens: one word per page
    }
}

template <uint32_t I>
auto tensor(const Args& a) {
    return TensorAccessor(std::get<I>(kTensorArgs), a.address[I], page_bytes(a, I));
}

// Entries [first, first + count) of routed_tokens row l into the token-row scratch; the
// caller keeps count <= chunk_entries.
template <typename Tokens>
void read_token_chunk(const Tokens& routed_tokens, uint32_t l, uint32_t first, uint32_t count, uint32_t token_row_l1) {
    noc_async_read(routed_tokens.get_noc_addr(l, first * 4), token_row_l1, count * 4);
    noc_async_read_barrier();
}

// Counts stay on the device: one aligned L1 slot per local expert. Returns their L1 address.
uint32_t read_counts(const Args& a) {
    cb_reserve_back(cb_counts, a.num_local);
    const uint32_t counts_l1 = get_write_ptr(cb_counts);
    read_column_async(tensor<kCounts>(a), counts_l1, a.num_local, kDramAlign);
    noc_async_read_barrier();
    return counts_l1;
}

// One output row into cb_rows: x[token], or a zero row when the row is past its expert's
// count or its token index is out of range (never a stray read).
template <typename X>
void push_row(const Args& a, const X& x, bool gather, uint32_t token) {
    cb_reserve_back(cb_rows, 1);
    const uint32_t dst = get_write_ptr(cb_rows);
    if (gather && token < a.num_tokens) {
        noc_async_read(x.get_noc_addr(token), dst, a.row_bytes);
        noc_async_read_barrier();
    } else {
        fill_halves(dst, a.row_bytes / 2, 0);
    }
    cb_push_back(cb_rows, 1);
}

// Checks every expert's entries below its count (chunk by chunk through the token-row
// scratch) and writes the counts of bad ones to scatter_status.
void check_and_write_status(const Args& a, uint32_t counts_l1, uint32_t token_row_l1) {
    const auto routed_tokens = tensor<kRoutedTokens>(a);
    cb_reserve_back(cb_status, 1);
    volatile uint32_t* status = words(get_write_ptr(cb_status));
    fill_words(get_write_ptr(cb_status), kStatusWords, kNone);
    status[kBadTokens] = 0;
    status[kClampedCounts] = 0;
    for (uint32_t l = 0; l < a.num_local; ++l) {
        uint32_t count = column_entry(counts_l1, l, kDramAlign);
        if (count > a.num_tokens) {
            if (status[kClampedCounts]++ == 0) {
                status[kFirstClampedExpert] = l;
                status[kFirstClampedCount] = count;
            }
            count = a.num_tokens;
        }
        for (uint32_t first = 0; first < count; first += a.chunk_entries) {
            const uint32_t entries = count - first < a.chunk_entries ? count - first : a.chunk_entries;
            read_token_chunk(routed_tokens, l, first, entries, token_row_l1);
            for (uint32_t j = 0; j < entries; ++j) {
                const uint32_t token = words(token_row_l1)[j];
                if (token < a.num_tokens) continue;
                if (status[kBadTokens]++ == 0) {
                    status[kFirstBadExpert] = l;
                    status[kFirstBadIndex] = first + j;
                    status[kFirstBadToken] = token;
                }
            }
        }
    }
    noc_async_write(get_write_ptr(cb_status), tensor<kStatus>(a).get_noc_addr(0), kStatusWords * 4);
    noc_async_write_barrier();
}

}  // namespace

void kernel_main() {
    const Args args = read_args();
    const auto x = tensor<kX>(args);
    const auto routed_tokens = tensor<kRoutedTokens>(args);
    cb_reserve_back(cb_token_row, 1);
    const uint32_t token_row_l1 = get_write_ptr(cb_token_row);
    const uint32_t counts_l1 = read_counts(args);
    if (args.reports_status) check_and_write_status(args, counts_l1, token_row_l1);

    // Chunk c of expert l is loaded_chunk = l * chunks_per_row + c.
    const uint32_t chunks_per_row = (args.num_tokens + args.chunk_entries - 1) / args.chunk_entries;
    uint32_t loaded_chunk = kNoChunk;
    for (uint32_t row = args.row_begin; row < args.row_end; ++row) {
        const uint32_t l = row / args.num_tokens;
        const uint32_t i = row % args.num_tokens;
        const uint32_t first = i / args.chunk_entries * args.chunk_entries;
        const bool gather = i < column_entry(counts_l1, l, kDramAlign);
        if (gather && loaded_chunk != l * chunks_per_row + first / args.chunk_entries) {
            const uint32_t left = args.num_tokens - first;
            read_token_chunk(routed_tokens, l, first, left < args.chunk_entries ? left : args.chunk_entries,
                             token_row_l1);
            loaded_chunk = l * chunks_per_row + first / args.chunk_entries;
        }
        push_row(args, x, gather, gather ? words(token_row_l1)[i - first] : 0);
    }
}
