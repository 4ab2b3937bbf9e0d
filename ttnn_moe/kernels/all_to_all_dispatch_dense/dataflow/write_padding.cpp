// all_to_all_dispatch_dense's padding writer: the core's second data-movement RISC, on the other
// NOC. Once dispatch_dense.cpp has laid out the line's blocks (sem_init set to line_size: after
// the line barrier it holds line_size - 1 and no peer touches it again), it writes a zero row to
// every padding row of this device's blocks (from the block's kept rows up to its tile boundary)
// while the dataflow kernel sends and receives the token rows, which land below those rows.
//
// Runtime args: all_to_all_dispatch_dense_shared.hpp (padding_arg); the compile-time args are the
// tokens accessor (IsDram|RuntimePageSize).
// conformance: kind=dataflow ct_args=130 named=cb_tables:5,cb_zero_row:10,sem_init:0
#include <cstdint>

#include "../../../cpp/ops/all_to_all_dispatch_dense/all_to_all_dispatch_dense_shared.hpp"
#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"
#include "dispatch_plan.hpp"

using namespace ttnn_moe::all_to_all_dispatch_dense_shared;

void kernel_main() {
    constexpr uint32_t cb_tables = get_named_compile_time_arg_val(named_arg::kCbTables);
    constexpr uint32_t cb_zero_row = get_named_compile_time_arg_val(named_arg::kCbZeroRow);
    constexpr uint32_t sem_init = get_named_compile_time_arg_val(named_arg::kSemInit);
    constexpr auto tokens_args = TensorAccessorArgs<0>();
    const uint32_t hidden = get_arg_val<uint32_t>(padding_arg::kHidden);
    const uint32_t num_experts = get_arg_val<uint32_t>(padding_arg::kNumExperts);
    const uint32_t local_experts = get_arg_val<uint32_t>(padding_arg::kLocalExperts);
    const uint32_t line_size = get_arg_val<uint32_t>(padding_arg::kLineSize);
    const uint32_t position = get_arg_val<uint32_t>(padding_arg::kPosition);
    const uint32_t row_bytes = hidden * 2;
    const auto tokens = TensorAccessor(tokens_args, get_arg_val<uint32_t>(padding_arg::kTokensAddress),
                                       moe_kernel::align_up(row_bytes));
    // Both blocks are plain L1: the zero row is this kernel's, the plan tables the dataflow
    // kernel's (never reserved here).
    const uint32_t zero_row = get_write_ptr(cb_zero_row);
    moe_kernel::fill_words(zero_row, row_bytes / 4, 0);
    noc_semaphore_wait_min(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_init)), line_size);
    const dispatch_plan::PlanTables plan(get_write_ptr(cb_tables), num_experts);
    uint32_t local_slot = 0;
    for (uint32_t e = 0; e < num_experts && local_slot < local_experts; ++e) {
        if (plan.owner[e] != position) continue;
        const uint32_t block_end = plan.offset[e] + dispatch_plan::round_up_tile(plan.kept[e]);
        for (uint32_t r = plan.offset[e] + plan.kept[e]; r < block_end; ++r) {
            noc_async_write(zero_row, tokens.get_noc_addr(r), row_bytes);
        }
        ++local_slot;
    }
    noc_async_write_barrier();
}
