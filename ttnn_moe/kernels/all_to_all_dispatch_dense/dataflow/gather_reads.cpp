// all_to_all_dispatch_dense's gather-only cores: cores (C, 0) .. (G - 1, 0) of the grid's first row,
// past the row senders, read their share of expert_mapping and of this device's ids and weights
// into the main core's L1 like the row senders do (gather_share.hpp: core g of G reads share g), so
// the first reads, on the critical path before the counts go out, are spread over G cores instead
// of C. Then they increment the main core's sem_gathered. Like the row senders they share the last
// writes (finish_share.hpp): when sem_go rings a second time their share of slot_source, on the
// third their share of the fan-out copies, so those copies, which follow the last row's landing,
// are spread over G cores too.
//
// Runtime args: all_to_all_dispatch_dense_shared.hpp (gather_arg); the compile-time args are the
// expert_mapping, topk_indices, topk_weights, routing_lists, tokens and slot_source accessors
// (IsDram|RuntimePageSize).
// conformance: kind=dataflow ct_args=130,130,130,130,130,130 named=cb_mapping:4,cb_gather:15,cb_stage:8,cb_tables:5,cb_own:1,sem_gathered:4,cb_row:0,cb_finish:12,sem_go:0
#include <cstdint>

#include "../../../cpp/ops/all_to_all_dispatch_dense/all_to_all_dispatch_dense_shared.hpp"
#include "../../common/dataflow/scratch.hpp"
#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"
#include "finish_share.hpp"
#include "gather_share.hpp"

using namespace ttnn_moe::all_to_all_dispatch_dense_shared;
using moe_kernel::align_up;

void kernel_main() {
    constexpr uint32_t cb_mapping = get_named_compile_time_arg_val(named_arg::kCbMapping);
    constexpr uint32_t cb_gather = get_named_compile_time_arg_val(named_arg::kCbGather);
    constexpr uint32_t cb_stage = get_named_compile_time_arg_val(named_arg::kCbStage);
    constexpr uint32_t sem_gathered = get_named_compile_time_arg_val(named_arg::kSemGathered);
    constexpr uint32_t cb_row = get_named_compile_time_arg_val(named_arg::kCbRow);
    constexpr uint32_t cb_finish = get_named_compile_time_arg_val(named_arg::kCbFinish);
    constexpr uint32_t sem_go = get_named_compile_time_arg_val(named_arg::kSemGo);
    constexpr auto mapping_args = TensorAccessorArgs<0>();
    constexpr auto ids_args = TensorAccessorArgs<mapping_args.next_compile_time_args_offset()>();
    constexpr auto weights_args = TensorAccessorArgs<ids_args.next_compile_time_args_offset()>();
    constexpr auto lists_args = TensorAccessorArgs<weights_args.next_compile_time_args_offset()>();
    constexpr auto tokens_args = TensorAccessorArgs<lists_args.next_compile_time_args_offset()>();
    constexpr auto slot_source_args = TensorAccessorArgs<tokens_args.next_compile_time_args_offset()>();

    const uint32_t num_tokens = get_arg_val<uint32_t>(gather_arg::kNumTokens);
    const uint32_t top_k = get_arg_val<uint32_t>(gather_arg::kTopK);
    const uint32_t num_experts = get_arg_val<uint32_t>(gather_arg::kNumExperts);
    const uint32_t num_devices = get_arg_val<uint32_t>(gather_arg::kNumDevices);
    const uint32_t mapping_element_bytes = get_arg_val<uint32_t>(gather_arg::kMappingElementBytes);
    const uint32_t main_x = get_arg_val<uint32_t>(gather_arg::kMainNocX);
    const uint32_t main_y = get_arg_val<uint32_t>(gather_arg::kMainNocY);
    const uint32_t assignments = num_tokens * top_k;
    // Where the main kernel keeps the ids and weights: its cb_own (at the same address here), or
    // their DRAM copy in page `position` of routing_lists when they take more than one window.
    uint64_t own_ids;
    if (get_arg_val<uint32_t>(gather_arg::kOwnCopied)) {
        const auto lists = TensorAccessor(lists_args, get_arg_val<uint32_t>(gather_arg::kRoutingListsAddress),
                                          align_up(assignments * kListEntryBytes));
        own_ids = lists.get_noc_addr(get_arg_val<uint32_t>(gather_arg::kPosition));
    } else {
        own_ids = get_noc_addr(main_x, main_y, get_write_ptr(get_named_compile_time_arg_val(named_arg::kCbOwn)));
    }
    const uint64_t own_weights =
        own_ids +
        (get_arg_val<uint32_t>(gather_arg::kOwnCopied) ? own_copy_weights_offset(assignments) : assignments * 4);
    const uint32_t core = get_arg_val<uint32_t>(gather_arg::kCore);
    const uint32_t num_cores = get_arg_val<uint32_t>(gather_arg::kNumCores);
    const uint32_t stage = moe_scratch::reserve(cb_stage, kStageSlots * kStageBytes);
    const gather_share::Where gather{
        core,
        num_cores,
        num_experts,
        num_devices,
        mapping_element_bytes,
        num_tokens,
        top_k,
        main_x,
        main_y,
        get_write_ptr(get_named_compile_time_arg_val(named_arg::kCbTables)) + kPlanDevicesTable * num_experts * 4,
        own_ids,
        own_weights,
        moe_scratch::reserve(cb_mapping, kMappingBatchRows * align_up(num_devices * mapping_element_bytes)),
        stage,
        moe_scratch::reserve(cb_gather, kGatherBytes)};
    gather_share::read_share(
        gather,
        TensorAccessor(mapping_args, get_arg_val<uint32_t>(gather_arg::kMappingAddress),
                       align_up(num_devices * mapping_element_bytes)),
        TensorAccessor(ids_args, get_arg_val<uint32_t>(gather_arg::kIdsAddress), align_up(top_k * 4)),
        TensorAccessor(weights_args, get_arg_val<uint32_t>(gather_arg::kWeightsAddress), align_up(top_k * 2)));
    noc_semaphore_inc(get_noc_addr(main_x, main_y, get_semaphore(sem_gathered)), 1);

    // The last writes: this core's share of the slot_source pages once the main kernel has walked
    // the line's assignments, of the fan-out copies once every row sent to this device has landed.
    const uint32_t row_bytes = get_arg_val<uint32_t>(gather_arg::kHidden) * 2;
    const uint32_t row_stride = align_up(row_bytes);
    const finish_share::Where where{core,      num_cores,
                                    row_bytes, main_x,
                                    main_y,    moe_scratch::reserve(cb_finish, kFinishBytes),
                                    stage,     moe_scratch::reserve(cb_row, 2 * row_stride),
                                    row_stride};
    noc_semaphore_wait_min(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_go)), 2);
    finish_share::read_header(where);
    finish_share::write_slot_pages(
        where, TensorAccessor(slot_source_args, get_arg_val<uint32_t>(gather_arg::kSlotSourceAddress), align_up(8)));
    noc_semaphore_wait_min(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_go)), 3);
    finish_share::copy_fanout_share(
        where, TensorAccessor(tokens_args, get_arg_val<uint32_t>(gather_arg::kTokensAddress), row_stride), core,
        kCopiersPerCore * num_cores);
    noc_async_atomic_barrier();
}
