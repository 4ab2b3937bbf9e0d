// all_to_all_dispatch_dense's padding writers: the second data-movement RISC (on the other NOC) of
// each core of the worker grid's first row, the main core and the row senders' cores first, then
// of each core of its second row. Once dispatch_dense.cpp has laid out the line's blocks, they
// write a zero row to every padding row of this device's blocks (from the block's kept rows up to
// its tile boundary), writer w of P the padding rows g with g % P == w (g counting them in block
// order), while the dataflow kernels send and receive the token rows, which land below those rows.
// At decode with a large H those rows outnumber the token rows (each a whole row to one DRAM bank,
// at a bank's share of the DRAM rate): the second row's writers keep more banks busy at once. Writer
// 0 (the main core) reads the plan tables in place once sem_plan rings and rings sem_padding_go on
// the writers past the row senders. The others copy the tables from the main core's L1 once their
// start flag rings (a row sender's sem_go: the send plan is laid out after the blocks) and
// increment the main core's sem_tables_copied; writer 0 starts its writes only after every copy:
// its writes leave over the NOC the copies are read on, and would hold them.
//
// The first row's W writers also, after their padding rows, once every row sent to this device has
// landed (sem_go rings a third time, on the main core sem_plan a
// second), do their share of the fan-out copies (finish_share.hpp, copier W + w), on their own NOC
// beside the dataflow kernel's.
//
// Runtime args: all_to_all_dispatch_dense_shared.hpp (padding_arg); the compile-time args are the
// tokens accessor (IsDram|RuntimePageSize).
// conformance: kind=dataflow ct_args=130 named=cb_tables:5,cb_zero_row:10,sem_plan:0,sem_go:0,sem_padding_go:1,sem_tables_copied:5,cb_copy:16,cb_finish:12
#include <cstdint>

#include "../../../cpp/ops/all_to_all_dispatch_dense/all_to_all_dispatch_dense_shared.hpp"
#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"
#include "dispatch_plan.hpp"
#include "finish_share.hpp"

using namespace ttnn_moe::all_to_all_dispatch_dense_shared;

void kernel_main() {
    constexpr uint32_t cb_tables = get_named_compile_time_arg_val(named_arg::kCbTables);
    constexpr uint32_t cb_zero_row = get_named_compile_time_arg_val(named_arg::kCbZeroRow);
    constexpr uint32_t sem_plan = get_named_compile_time_arg_val(named_arg::kSemPlan);
    constexpr uint32_t sem_go = get_named_compile_time_arg_val(named_arg::kSemGo);
    constexpr uint32_t sem_padding_go = get_named_compile_time_arg_val(named_arg::kSemPaddingGo);
    constexpr uint32_t sem_tables_copied = get_named_compile_time_arg_val(named_arg::kSemTablesCopied);
    constexpr uint32_t cb_copy = get_named_compile_time_arg_val(named_arg::kCbCopy);
    constexpr uint32_t cb_finish = get_named_compile_time_arg_val(named_arg::kCbFinish);
    constexpr auto tokens_args = TensorAccessorArgs<0>();
    const uint32_t hidden = get_arg_val<uint32_t>(padding_arg::kHidden);
    const uint32_t num_experts = get_arg_val<uint32_t>(padding_arg::kNumExperts);
    const uint32_t local_experts = get_arg_val<uint32_t>(padding_arg::kLocalExperts);
    const uint32_t line_size = get_arg_val<uint32_t>(padding_arg::kLineSize);
    const uint32_t position = get_arg_val<uint32_t>(padding_arg::kPosition);
    const uint32_t writer = get_arg_val<uint32_t>(padding_arg::kWriter);
    const uint32_t num_writers = get_arg_val<uint32_t>(padding_arg::kNumWriters);
    const uint32_t num_senders = get_arg_val<uint32_t>(padding_arg::kNumSenders);
    const uint32_t first_row_writers = get_arg_val<uint32_t>(padding_arg::kFirstRowWriters);
    const bool first_row = writer < first_row_writers;
    const uint32_t row_bytes = hidden * 2;
    const auto tokens = TensorAccessor(tokens_args, get_arg_val<uint32_t>(padding_arg::kTokensAddress),
                                       moe_kernel::align_up(row_bytes));
    // Both blocks are plain L1: the zero row is this kernel's, the plan tables the main dataflow
    // kernel's (never reserved here; on a row sender's core the block is free and takes a copy).
    const uint32_t zero_row = get_write_ptr(cb_zero_row);
    const uint32_t tables = get_write_ptr(cb_tables);
    moe_kernel::fill_words(zero_row, row_bytes / 4, 0);
    if (writer == 0) {
        noc_semaphore_wait_min(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_plan)), 1);
        // The padding-only writers are rung once the row senders' writers hold the plan (hardware
        // would allow ringing now): the emulator's time model orders a wait by the remote updates
        // before it, and sem_go's come from another core.
        noc_semaphore_wait_min(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_tables_copied)),
                               num_senders - 1);
        for (uint32_t w = num_senders; w < num_writers; ++w) {
            const uint32_t at = padding_arg::kWriterNocCores + 2 * (w - num_senders);
            noc_semaphore_inc(
                get_noc_addr(get_arg_val<uint32_t>(at), get_arg_val<uint32_t>(at + 1), get_semaphore(sem_padding_go)),
                1);
        }
        noc_semaphore_wait_min(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_tables_copied)),
                               num_writers - 1);
    } else {
        const uint32_t start_flag = writer < num_senders ? get_semaphore(sem_go) : get_semaphore(sem_padding_go);
        noc_semaphore_wait_min(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(start_flag), 1);
        const uint32_t main_x = get_arg_val<uint32_t>(padding_arg::kMainNocX);
        const uint32_t main_y = get_arg_val<uint32_t>(padding_arg::kMainNocY);
        noc_async_read(get_noc_addr(main_x, main_y, tables), tables, kPlanTables * num_experts * 4);
        noc_async_read_barrier();
        noc_semaphore_inc(get_noc_addr(main_x, main_y, get_semaphore(sem_tables_copied)), 1);
    }
    const dispatch_plan::PlanTables plan(tables, num_experts);
    uint32_t local_slot = 0, padding_row = 0;
    for (uint32_t e = 0; e < num_experts && local_slot < local_experts; ++e) {
        if (plan.owner[e] != position) continue;
        const uint32_t block_end = plan.offset[e] + dispatch_plan::round_up_tile(plan.kept[e]);
        for (uint32_t r = plan.offset[e] + plan.kept[e]; r < block_end; ++r, ++padding_row) {
            if (padding_row % num_writers == writer) noc_async_write(zero_row, tokens.get_noc_addr(r), row_bytes);
        }
        ++local_slot;
    }
    noc_async_write_barrier();
    if (!first_row) return;

    const uint32_t main_x = get_arg_val<uint32_t>(padding_arg::kMainNocX);
    const uint32_t main_y = get_arg_val<uint32_t>(padding_arg::kMainNocY);
    const uint32_t row_stride = moe_kernel::align_up(row_bytes);
    const uint32_t finish = get_write_ptr(cb_copy);
    const finish_share::Where where{
        writer,    first_row_writers, row_bytes, main_x, main_y, finish, 0, finish + moe_kernel::align_up(kFinishBytes),
        row_stride};
    const uint32_t rows_landed = writer == 0 ? get_semaphore(sem_plan) : get_semaphore(sem_go);
    noc_semaphore_wait_min(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(rows_landed), writer == 0 ? 2 : 3);
    finish_share::read_header(where, get_write_ptr(cb_finish));
    finish_share::copy_fanout_share(where, tokens, first_row_writers + writer, kCopiersPerCore * first_row_writers);
}
