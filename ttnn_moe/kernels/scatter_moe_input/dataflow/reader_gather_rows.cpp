// scatter_moe_input reader: for output rows [row_begin, row_end) of (E_l, T, H), pushes
// x[routed_tokens[l, i]] when i < count_l (and the token index is in range), else a zero row.
//
// compile-time args: 3 interleaved accessors (IsDram|RuntimePageSize): x, num_routed_tokens, routed_tokens
// named compile-time args: cb_rows (rows to the writer), cb_counts, cb_token_row (L1 scratch)
// runtime args: x_addr, counts_addr, tokens_addr, T, row_bytes (H * 2), E_l, row_begin, row_end
// conformance: kind=dataflow ct_args=130,130,130 named=cb_rows:0,cb_counts:1,cb_token_row:2 formats=1:uint32,2:uint32
#include <cstdint>

#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"

namespace {
constexpr uint32_t kNoExpert = 0xFFFFFFFFu;
}  // namespace

void kernel_main() {
    using namespace moe_kernel;
    const uint32_t x_addr = get_arg_val<uint32_t>(0);
    const uint32_t counts_addr = get_arg_val<uint32_t>(1);
    const uint32_t tokens_addr = get_arg_val<uint32_t>(2);
    const uint32_t num_tokens = get_arg_val<uint32_t>(3);
    const uint32_t row_bytes = get_arg_val<uint32_t>(4);
    const uint32_t num_local = get_arg_val<uint32_t>(5);
    const uint32_t row_begin = get_arg_val<uint32_t>(6);
    const uint32_t row_end = get_arg_val<uint32_t>(7);

    constexpr uint32_t cb_rows = get_named_compile_time_arg_val("cb_rows");
    constexpr uint32_t cb_counts = get_named_compile_time_arg_val("cb_counts");
    constexpr uint32_t cb_token_row = get_named_compile_time_arg_val("cb_token_row");

    constexpr auto x_args = TensorAccessorArgs<0>();
    constexpr auto counts_args = TensorAccessorArgs<x_args.next_compile_time_args_offset()>();
    constexpr auto tokens_args = TensorAccessorArgs<counts_args.next_compile_time_args_offset()>();
    const auto x = TensorAccessor(x_args, x_addr, align_up(row_bytes));
    const auto counts = TensorAccessor(counts_args, counts_addr, align_up(4));
    const auto tokens = TensorAccessor(tokens_args, tokens_addr, align_up(num_tokens * 4));

    // Counts stay on the device: one aligned L1 slot per local expert.
    cb_reserve_back(cb_counts, num_local);
    const uint32_t counts_l1 = get_write_ptr(cb_counts);
    read_column_async(counts, counts_l1, num_local, kDramAlign);
    cb_reserve_back(cb_token_row, 1);
    const uint32_t token_row_l1 = get_write_ptr(cb_token_row);
    volatile uint32_t* token_row = words(token_row_l1);
    noc_async_read_barrier();

    uint32_t loaded_expert = kNoExpert;
    for (uint32_t row = row_begin; row < row_end; ++row) {
        const uint32_t l = row / num_tokens;
        const uint32_t i = row % num_tokens;
        const uint32_t count = column_entry(counts_l1, l, kDramAlign);
        bool gather = i < count;
        if (gather && loaded_expert != l) {
            noc_async_read(tokens.get_noc_addr(l), token_row_l1, num_tokens * 4);
            noc_async_read_barrier();
            loaded_expert = l;
        }
        const uint32_t token = gather ? token_row[i] : 0;
        gather = gather && token < num_tokens;  // an out-of-range index yields a zero row, never a stray read

        cb_reserve_back(cb_rows, 1);
        const uint32_t dst = get_write_ptr(cb_rows);
        if (gather) {
            noc_async_read(x.get_noc_addr(token), dst, row_bytes);
            noc_async_read_barrier();
        } else {
            fill_halves(dst, row_bytes / 2, 0);
        }
        cb_push_back(cb_rows, 1);
    }
}
