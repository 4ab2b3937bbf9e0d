// all_to_all_dispatch_dense's row sender s (core (s, 0), s in 1 .. C - 1), with its own fabric
// connections (its block of the links, each direction). First it gathers its share of the mapping
// rows and of the device's ids and weights into the main core's L1 (gather_share.hpp). It waits until the main kernel (dispatch_dense.cpp) has
// laid out the line's plan and rung sem_go, copies the send plan's owner and end tables and its
// own next-row table from the main core's L1 over the NOC, and sends the rows of its share of the
// tokens (row_sender.hpp): the token rows of a device leave over L links at once. When sem_go rings
// again it writes its share of slot_source, on the third ring its share of the fan-out copies
// (finish_share.hpp).
//
// Runtime args: all_to_all_dispatch_dense_shared.hpp (sender_arg), then the route words of the line
// positions and the fabric connection block; the compile-time args are the x, topk_indices and
// tokens, slot_source, expert_mapping, topk_weights and routing_lists accessors (IsDram|RuntimePageSize).
// L1 here: two token rows, the staging and finish blocks and E-sized plan tables, whatever T and
// the capacity (this device's ids come in kTokenBatch tokens at a time).
// conformance: kind=dataflow ct_args=130,130,130,130,130,130,130 named=cb_row:0,cb_stage:8,cb_headers:9,cb_send_plan:11,sem_go:0,sem_payload:3,cb_finish:12,cb_mapping:4,cb_gather:15,sem_gathered:4,cb_tables:5,cb_own:1 defines=ROUTING_MODE=137 label=1d
// conformance: kind=dataflow ct_args=130,130,130,130,130,130,130 named=cb_row:0,cb_stage:8,cb_headers:9,cb_send_plan:11,sem_go:0,sem_payload:3,cb_finish:12,cb_mapping:4,cb_gather:15,sem_gathered:4,cb_tables:5,cb_own:1 defines=ROUTING_MODE=162;FABRIC_2D=1 label=2d
#include <cstdint>

#include "../../../cpp/ops/all_to_all_dispatch_dense/all_to_all_dispatch_dense_shared.hpp"
#include "../../common/dataflow/fabric_line.hpp"
#include "../../common/dataflow/scratch.hpp"
#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"
#include "finish_share.hpp"
#include "gather_share.hpp"
#include "row_sender.hpp"

using namespace ttnn_moe::all_to_all_dispatch_dense_shared;
using moe_kernel::align_up;

void kernel_main() {
    constexpr uint32_t cb_row = get_named_compile_time_arg_val(named_arg::kCbRow);
    constexpr uint32_t cb_stage = get_named_compile_time_arg_val(named_arg::kCbStage);
    constexpr uint32_t cb_headers = get_named_compile_time_arg_val(named_arg::kCbHeaders);
    constexpr uint32_t cb_send_plan = get_named_compile_time_arg_val(named_arg::kCbSendPlan);
    constexpr uint32_t sem_go = get_named_compile_time_arg_val(named_arg::kSemGo);
    constexpr uint32_t sem_payload = get_named_compile_time_arg_val(named_arg::kSemPayload);
    constexpr uint32_t cb_finish = get_named_compile_time_arg_val(named_arg::kCbFinish);
    constexpr uint32_t cb_mapping = get_named_compile_time_arg_val(named_arg::kCbMapping);
    constexpr uint32_t cb_gather = get_named_compile_time_arg_val(named_arg::kCbGather);
    constexpr uint32_t sem_gathered = get_named_compile_time_arg_val(named_arg::kSemGathered);
    constexpr auto x_args = TensorAccessorArgs<0>();
    constexpr auto ids_args = TensorAccessorArgs<x_args.next_compile_time_args_offset()>();
    constexpr auto tokens_args = TensorAccessorArgs<ids_args.next_compile_time_args_offset()>();
    constexpr auto slot_source_args = TensorAccessorArgs<tokens_args.next_compile_time_args_offset()>();
    constexpr auto mapping_args = TensorAccessorArgs<slot_source_args.next_compile_time_args_offset()>();
    constexpr auto weights_args = TensorAccessorArgs<mapping_args.next_compile_time_args_offset()>();
    constexpr auto lists_args = TensorAccessorArgs<weights_args.next_compile_time_args_offset()>();

    const uint32_t sender = get_arg_val<uint32_t>(sender_arg::kSender);
    const uint32_t num_senders = get_arg_val<uint32_t>(sender_arg::kNumSenders);
    const uint32_t num_tokens = get_arg_val<uint32_t>(sender_arg::kNumTokens);
    const uint32_t line_size = get_arg_val<uint32_t>(sender_arg::kLineSize);
    const uint32_t num_experts = get_arg_val<uint32_t>(sender_arg::kNumExperts);
    row_sender::Share share;
    share.first_token = sender_first_token(sender, num_tokens, num_senders);
    share.end_token = sender_first_token(sender + 1, num_tokens, num_senders);
    share.top_k = get_arg_val<uint32_t>(sender_arg::kTopK);
    share.num_experts = num_experts;
    share.hidden = get_arg_val<uint32_t>(sender_arg::kHidden);
    share.position = get_arg_val<uint32_t>(sender_arg::kPosition);
    const uint32_t row_stride = align_up(share.row_bytes());
    const auto x = TensorAccessor(x_args, get_arg_val<uint32_t>(sender_arg::kXAddress), row_stride);
    const auto ids =
        TensorAccessor(ids_args, get_arg_val<uint32_t>(sender_arg::kIdsAddress), align_up(share.top_k * 4));
    const auto tokens = TensorAccessor(tokens_args, get_arg_val<uint32_t>(sender_arg::kTokensAddress), row_stride);
    const auto slot_source =
        TensorAccessor(slot_source_args, get_arg_val<uint32_t>(sender_arg::kSlotSourceAddress), align_up(8));
    const uint32_t main_x = get_arg_val<uint32_t>(sender_arg::kMainNocX);
    const uint32_t main_y = get_arg_val<uint32_t>(sender_arg::kMainNocY);

    row_sender::Buffers buffers;
    buffers.rows = moe_scratch::reserve(cb_row, 2 * row_stride);
    buffers.row_stride = row_stride;
    buffers.ids = moe_scratch::reserve(cb_stage, kStageSlots * kStageBytes);
    const uint32_t headers = moe_scratch::reserve(cb_headers, sizeof(PACKET_HEADER_TYPE));
    // The send plan CB sits at the same address on the main core: owner and end tables, then this
    // sender's next-row table, into sender slot 0 of this core's copy.
    const uint32_t plan_l1 = moe_scratch::reserve(cb_send_plan, (kSendPlanFixedTables + 1) * num_experts * 4);
    const uint32_t table_bytes = num_experts * 4;

    moe_fabric::FabricLine line(line_size, share.position, get_arg_val<uint32_t>(sender_arg::kNumLinks),
                                sender_arg::kRoutes, headers, get_arg_val<uint32_t>(sender_arg::kMaxPacketPayload));
    line.open(sender_arg::kRoutes + moe_fabric::kRouteWordsPerPosition * line_size);

    // This sender's share of the mapping rows and of the device's ids and weights, into the main
    // core's L1 (its plan tables and cb_own sit at the same addresses here; they are not used here),
    // the ids and weights into their DRAM copy when they take more than one window.
    const uint32_t num_devices = get_arg_val<uint32_t>(sender_arg::kNumDevices);
    const uint32_t mapping_element_bytes = get_arg_val<uint32_t>(sender_arg::kMappingElementBytes);
    const uint32_t main_tables = get_write_ptr(get_named_compile_time_arg_val(named_arg::kCbTables));
    const uint32_t assignments = num_tokens * share.top_k;
    uint64_t own_ids, own_weights;
    const bool own_copied = get_arg_val<uint32_t>(sender_arg::kOwnCopied);
    if (own_copied) {
        const auto lists = TensorAccessor(lists_args, get_arg_val<uint32_t>(sender_arg::kRoutingListsAddress),
                                          align_up(assignments * kListEntryBytes));
        own_ids = lists.get_noc_addr(share.position);
        own_weights = own_ids + own_copy_weights_offset(assignments);
    } else {
        own_ids = get_noc_addr(main_x, main_y, get_write_ptr(get_named_compile_time_arg_val(named_arg::kCbOwn)));
        own_weights = own_ids + assignments * 4;
    }
    const gather_share::Where gather{
        sender,
        get_arg_val<uint32_t>(sender_arg::kNumGatherCores),
        num_experts,
        num_devices,
        mapping_element_bytes,
        num_tokens,
        share.top_k,
        main_x,
        main_y,
        main_tables + kPlanDevicesTable * num_experts * 4,
        own_ids,
        own_weights,
        moe_scratch::reserve(cb_mapping, kMappingBatchRows * align_up(num_devices * mapping_element_bytes)),
        buffers.ids,
        moe_scratch::reserve(cb_gather, kGatherBytes)};
    gather_share::read_share(
        gather,
        TensorAccessor(mapping_args, get_arg_val<uint32_t>(sender_arg::kMappingAddress),
                       align_up(num_devices * mapping_element_bytes)),
        ids,
        TensorAccessor(weights_args, get_arg_val<uint32_t>(sender_arg::kWeightsAddress), align_up(share.top_k * 2)));
    noc_semaphore_inc(get_noc_addr(main_x, main_y, get_semaphore(sem_gathered)), 1);

    // At least 1: the main kernel may have rung the second time already when its work is short.
    noc_semaphore_wait_min(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_go)), 1);
    noc_async_read(get_noc_addr(main_x, main_y, plan_l1), plan_l1, kSendPlanFixedTables * table_bytes);
    noc_async_read(get_noc_addr(main_x, main_y, plan_l1 + (kSendPlanFixedTables + sender) * table_bytes),
                   plan_l1 + kSendPlanFixedTables * table_bytes, table_bytes);
    noc_async_read_barrier();
    const row_sender::SendPlan plan(plan_l1, num_experts, 0);
    // Batch reads of the copy keep DRAM's read alignment, of the main core's L1 the NOC's.
    row_sender::send_share(share, x, tokens, line, plan, buffers, own_ids, own_copied ? moe_kernel::kDramAlign : 16,
                           get_semaphore(sem_payload), main_x, main_y);
    line.close();

    // The main kernel has walked the line's assignments: this sender's share of the slot_source
    // pages, then, once every row sent to this device has landed, of the fan-out copies.
    const finish_share::Where where{
        sender,    get_arg_val<uint32_t>(sender_arg::kNumGatherCores), share.row_bytes(), main_x,
        main_y,    moe_scratch::reserve(cb_finish, kFinishBytes),      buffers.ids,       buffers.rows,
        row_stride};
    noc_semaphore_wait_min(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_go)), 2);
    finish_share::read_header(where);
    finish_share::write_slot_pages(where, slot_source);
    noc_semaphore_wait_min(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_go)), 3);
    finish_share::copy_fanout_share(where, tokens, sender,
                                    kCopiersPerCore * get_arg_val<uint32_t>(sender_arg::kNumGatherCores));
}
