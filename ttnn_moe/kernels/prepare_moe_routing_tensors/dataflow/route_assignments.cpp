// prepare_moe_routing_tensors: builds the routing-table rows of this core's local experts.
//
// One data-movement kernel per core; circular buffers serve as L1 scratch. The core
// scans every (t, k) id in row-major order, so within an expert's row assignments come
// out by ascending token, ties by ascending k. Core 0 (reports_errors) also counts ids
// outside [0, E) and assignments past an expert's T columns, and writes routing_errors.
//
// compile-time args: 8 interleaved accessors (IsDram|RuntimePageSize, one word each) in
//   io order: selected_experts, routing_weights, expert_mapping, num_routed_tokens,
//   routed_tokens, routed_token_weights, token_idx_map, routing_errors
// named compile-time args: cb_mapping, cb_ids, cb_weights, cb_tokens, cb_token_weights,
//   cb_counters, cb_errors, cb_stage
// runtime args: 8 buffer addresses (io order), T, K, E, E_l, slot_begin, slot_end,
//   reports_errors, chunk_rows
// conformance: kind=dataflow ct_args=130,130,130,130,130,130,130,130 named=cb_mapping:0,cb_ids:1,cb_weights:2,cb_tokens:3,cb_token_weights:4,cb_counters:5,cb_errors:6,cb_stage:7 formats=0:int32,1:uint32,3:uint32,5:uint32,6:uint32,7:uint32
#include <cstdint>

#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"

namespace {
constexpr uint32_t kNone = 0xFFFFFFFFu;
}  // namespace

void kernel_main() {
    using namespace moe_kernel;
    const uint32_t ids_addr = get_arg_val<uint32_t>(0);
    const uint32_t weights_addr = get_arg_val<uint32_t>(1);
    const uint32_t mapping_addr = get_arg_val<uint32_t>(2);
    const uint32_t counts_addr = get_arg_val<uint32_t>(3);
    const uint32_t tokens_addr = get_arg_val<uint32_t>(4);
    const uint32_t token_weights_addr = get_arg_val<uint32_t>(5);
    const uint32_t idx_map_addr = get_arg_val<uint32_t>(6);
    const uint32_t errors_addr = get_arg_val<uint32_t>(7);
    const uint32_t num_tokens = get_arg_val<uint32_t>(8);
    const uint32_t top_k = get_arg_val<uint32_t>(9);
    const uint32_t num_experts = get_arg_val<uint32_t>(10);
    const uint32_t num_local = get_arg_val<uint32_t>(11);
    const uint32_t slot_begin = get_arg_val<uint32_t>(12);
    const uint32_t slot_end = get_arg_val<uint32_t>(13);
    const bool reports_errors = get_arg_val<uint32_t>(14) != 0;
    const uint32_t chunk_rows = get_arg_val<uint32_t>(15);

    constexpr uint32_t cb_mapping = get_named_compile_time_arg_val("cb_mapping");
    constexpr uint32_t cb_ids = get_named_compile_time_arg_val("cb_ids");
    constexpr uint32_t cb_weights = get_named_compile_time_arg_val("cb_weights");
    constexpr uint32_t cb_tokens = get_named_compile_time_arg_val("cb_tokens");
    constexpr uint32_t cb_token_weights = get_named_compile_time_arg_val("cb_token_weights");
    constexpr uint32_t cb_counters = get_named_compile_time_arg_val("cb_counters");
    constexpr uint32_t cb_errors = get_named_compile_time_arg_val("cb_errors");
    constexpr uint32_t cb_stage = get_named_compile_time_arg_val("cb_stage");

    constexpr auto ids_args = TensorAccessorArgs<0>();
    constexpr auto weights_args = TensorAccessorArgs<ids_args.next_compile_time_args_offset()>();
    constexpr auto mapping_args = TensorAccessorArgs<weights_args.next_compile_time_args_offset()>();
    constexpr auto counts_args = TensorAccessorArgs<mapping_args.next_compile_time_args_offset()>();
    constexpr auto tokens_args = TensorAccessorArgs<counts_args.next_compile_time_args_offset()>();
    constexpr auto token_weights_args = TensorAccessorArgs<tokens_args.next_compile_time_args_offset()>();
    constexpr auto idx_map_args = TensorAccessorArgs<token_weights_args.next_compile_time_args_offset()>();
    constexpr auto errors_args = TensorAccessorArgs<idx_map_args.next_compile_time_args_offset()>();

    const uint32_t ids_row_bytes = top_k * 4;
    const uint32_t weights_row_bytes = top_k * 2;
    const uint32_t tokens_row_bytes = num_tokens * 4;
    const uint32_t token_weights_row_bytes = num_tokens * 2;
    const auto ids = TensorAccessor(ids_args, ids_addr, align_up(ids_row_bytes));
    const auto weights = TensorAccessor(weights_args, weights_addr, align_up(weights_row_bytes));
    const auto mapping = TensorAccessor(mapping_args, mapping_addr, align_up(num_experts * 4));
    const auto counts_out = TensorAccessor(counts_args, counts_addr, align_up(4));
    const auto tokens_out = TensorAccessor(tokens_args, tokens_addr, align_up(tokens_row_bytes));
    const auto token_weights_out = TensorAccessor(token_weights_args, token_weights_addr, align_up(token_weights_row_bytes));
    const auto idx_map_out = TensorAccessor(idx_map_args, idx_map_addr, align_up(tokens_row_bytes));
    const auto errors_out = TensorAccessor(errors_args, errors_addr, align_up(8 * 4));

    // expert_mapping (E,) int32: global expert -> local slot or -1.
    cb_reserve_back(cb_mapping, 1);
    const uint32_t mapping_l1 = get_write_ptr(cb_mapping);
    noc_async_read(mapping.get_noc_addr(0), mapping_l1, num_experts * 4);

    // This core's table rows start zeroed (the padding of every row is 0).
    const uint32_t num_slots = slot_end - slot_begin;
    cb_reserve_back(cb_tokens, num_slots);
    cb_reserve_back(cb_token_weights, num_slots);
    cb_reserve_back(cb_counters, 1);
    const uint32_t tokens_l1 = get_write_ptr(cb_tokens);
    const uint32_t token_weights_l1 = get_write_ptr(cb_token_weights);
    const uint32_t counters_l1 = get_write_ptr(cb_counters);
    const uint32_t tokens_stride = align_up(tokens_row_bytes);
    const uint32_t token_weights_stride = align_up(token_weights_row_bytes);
    fill_words(tokens_l1, num_slots * tokens_stride / 4, 0);
    fill_halves(token_weights_l1, num_slots * token_weights_stride / 2, 0);
    fill_words(counters_l1, num_local, 0);
    volatile uint32_t* counters = words(counters_l1);

    uint32_t num_invalid = 0, first_t = kNone, first_k = kNone, first_id = kNone;
    uint32_t num_dropped = 0, first_dropped_slot = kNone;
    noc_async_read_barrier();
    volatile int32_t* slot_of_expert = reinterpret_cast<volatile int32_t*>(mapping_l1);

    for (uint32_t t0 = 0; t0 < num_tokens; t0 += chunk_rows) {
        const uint32_t rows = num_tokens - t0 < chunk_rows ? num_tokens - t0 : chunk_rows;
        cb_reserve_back(cb_ids, rows);
        cb_reserve_back(cb_weights, rows);
        const uint32_t ids_l1 = get_write_ptr(cb_ids);
        const uint32_t weights_l1 = get_write_ptr(cb_weights);
        for (uint32_t r = 0; r < rows; ++r) {
            noc_async_read(ids.get_noc_addr(t0 + r), ids_l1 + r * align_up(ids_row_bytes), ids_row_bytes);
            noc_async_read(weights.get_noc_addr(t0 + r), weights_l1 + r * align_up(weights_row_bytes),
                           weights_row_bytes);
        }
        noc_async_read_barrier();

        for (uint32_t r = 0; r < rows; ++r) {
            const uint32_t t = t0 + r;
            volatile uint32_t* id_row = words(ids_l1 + r * align_up(ids_row_bytes));
            volatile uint16_t* weight_row = halves(weights_l1 + r * align_up(weights_row_bytes));
            for (uint32_t k = 0; k < top_k; ++k) {
                const uint32_t id = id_row[k];
                if (id >= num_experts) {
                    if (reports_errors && num_invalid++ == 0) {
                        first_t = t;
                        first_k = k;
                        first_id = id;
                    }
                    continue;
                }
                const int32_t slot = slot_of_expert[id];
                if (slot < 0 || static_cast<uint32_t>(slot) >= num_local) continue;  // expert lives elsewhere
                const uint32_t s = static_cast<uint32_t>(slot);
                const bool mine = s >= slot_begin && s < slot_end;
                if (!mine && !reports_errors) continue;
                const uint32_t column = counters[s]++;
                if (column >= num_tokens) {  // only reachable when a token picks one expert twice
                    if (num_dropped++ == 0) first_dropped_slot = s;
                    continue;
                }
                if (!mine) continue;
                const uint32_t local_row = s - slot_begin;
                words(tokens_l1 + local_row * tokens_stride)[column] = t;
                halves(token_weights_l1 + local_row * token_weights_stride)[column] = weight_row[k];
            }
        }
    }

    // Rows out: on a single device token_idx_map equals routed_tokens.
    cb_reserve_back(cb_stage, 1);
    const uint32_t stage_l1 = get_write_ptr(cb_stage);
    volatile uint32_t* stage = words(stage_l1);
    for (uint32_t s = slot_begin; s < slot_end; ++s) {
        const uint32_t local_row = s - slot_begin;
        noc_async_write(tokens_l1 + local_row * tokens_stride, tokens_out.get_noc_addr(s), tokens_row_bytes);
        noc_async_write(tokens_l1 + local_row * tokens_stride, idx_map_out.get_noc_addr(s), tokens_row_bytes);
        noc_async_write(token_weights_l1 + local_row * token_weights_stride, token_weights_out.get_noc_addr(s),
                        token_weights_row_bytes);
        noc_async_write_barrier();  // the stage word is reused per expert
        stage[0] = counters[s] < num_tokens ? counters[s] : num_tokens;
        noc_async_write(stage_l1, counts_out.get_noc_addr(s), 4);
    }
    if (reports_errors) {
        cb_reserve_back(cb_errors, 1);
        const uint32_t errors_l1 = get_write_ptr(cb_errors);
        volatile uint32_t* record = words(errors_l1);
        record[0] = num_invalid;
        record[1] = first_t;
        record[2] = first_k;
        record[3] = first_id;
        record[4] = num_dropped;
        record[5] = first_dropped_slot;
        record[6] = 0;
        record[7] = 0;
        noc_async_write(errors_l1, errors_out.get_noc_addr(0), 8 * 4);
    }
    noc_async_write_barrier();
}
