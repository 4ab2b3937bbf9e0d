// scatter_moe_input reader: for output rows [row_begin, row_end) of (E_l, T, H), pushes
// x[routed_tokens[l, i]] when i < count_l (and the token index is in range), else a zero row.
//
// compile-time args: 3 interleaved accessors (IsDram|RuntimePageSize) in ReaderTensor order;
// ReaderTensor, the runtime args (reader_arg) and the named compile-time args:
// cpp/ops/scatter_moe_input/scatter_moe_input_shared.hpp.
// conformance: kind=dataflow ct_args=130,130,130 named=cb_rows:0,cb_counts:1,cb_token_row:2 formats=1:uint32,2:uint32
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
constexpr auto kTensorArgs = make_tensor_accessor_args_tuple<kNumReaderTensors, 0>();
// No routed_tokens row is in L1 yet.
constexpr uint32_t kNoExpert = 0xFFFFFFFFu;

struct Args {
    uint32_t address[kNumReaderTensors];
    uint32_t num_tokens, row_bytes, num_local, row_begin, row_end;
};

Args read_args() {
    Args a;
    for (uint32_t i = 0; i < kNumReaderTensors; ++i) a.address[i] = get_arg_val<uint32_t>(i);
    a.num_tokens = get_arg_val<uint32_t>(reader_arg::kNumTokens);
    a.row_bytes = get_arg_val<uint32_t>(reader_arg::kRowBytes);
    a.num_local = get_arg_val<uint32_t>(reader_arg::kNumLocal);
    a.row_begin = get_arg_val<uint32_t>(reader_arg::kRowBegin);
    a.row_end = get_arg_val<uint32_t>(reader_arg::kRowEnd);
    return a;
}

// Accessors take the DRAM-aligned page size (the bank stride of the pages).
uint32_t page_bytes(const Args& a, uint32_t tensor) {
    switch (tensor) {
        case kX:
            return align_up(a.row_bytes);
        case kRoutedTokens:
            return align_up(a.num_tokens * 4);
        default:
            return align_up(4);  // num_routed_tokens: one word per page
    }
}

template <uint32_t I>
auto tensor(const Args& a) {
    return TensorAccessor(std::get<I>(kTensorArgs), a.address[I], page_bytes(a, I));
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

}  // namespace

void kernel_main() {
    const Args args = read_args();
    const auto x = tensor<kX>(args);
    const auto routed_tokens = tensor<kRoutedTokens>(args);
    cb_reserve_back(cb_token_row, 1);
    const uint32_t token_row_l1 = get_write_ptr(cb_token_row);
    const uint32_t counts_l1 = read_counts(args);

    uint32_t loaded_expert = kNoExpert;
    for (uint32_t row = args.row_begin; row < args.row_end; ++row) {
        const uint32_t l = row / args.num_tokens;
        const uint32_t i = row % args.num_tokens;
        const bool gather = i < column_entry(counts_l1, l, kDramAlign);
        if (gather && loaded_expert != l) {
            noc_async_read(routed_tokens.get_noc_addr(l), token_row_l1, args.num_tokens * 4);
            noc_async_read_barrier();
            loaded_expert = l;
        }
        push_row(args, x, gather, gather ? words(token_row_l1)[i] : 0);
    }
}
