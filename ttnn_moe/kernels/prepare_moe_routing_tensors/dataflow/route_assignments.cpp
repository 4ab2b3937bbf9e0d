// prepare_moe_routing_tensors: builds the routing-table rows of this core's local experts.
//
// One data-movement kernel per core; circular buffers serve as L1 scratch. The core
// first turns the one-hot expert_mapping into this device's slot table, then scans
// every (t, k) id in row-major order, so within an expert's row assignments come out
// by ascending token, ties by ascending k. The core with reports_status also counts
// bad ids, overflowing assignments and mapping errors, and writes routing_status.
//
// compile-time args: 8 interleaved accessors (IsDram|RuntimePageSize, one word each) in io order
// runtime args, CBs, status words: prepare_moe_routing_tensors_shared.hpp
// conformance: kind=dataflow ct_args=130,130,130,130,130,130,130,130 formats=0:uint32,1:uint32,2:uint32,4:uint32,6:uint32,7:uint32,8:uint32
#include <cstdint>

#include "../../../cpp/ops/prepare_moe_routing_tensors/prepare_moe_routing_tensors_shared.hpp"
#include "../../common/dataflow/expert_mapping.hpp"
#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"

namespace {

using namespace ttnn_moe::prepare_moe_routing_tensors_shared;
using moe_kernel::align_up;
using moe_kernel::halves;
using moe_kernel::words;

struct Args {
    uint32_t address[kNumIo];
    uint32_t num_tokens, top_k, num_experts, num_local, slot_begin, slot_end;
    bool reports_status;
    uint32_t chunk_rows, device_index, num_devices, mapping_element_bytes;

    uint32_t num_slots() const { return slot_end - slot_begin; }
    bool mine(uint32_t slot) const { return slot >= slot_begin && slot < slot_end; }
};

Args read_args() {
    Args a{};
    for (uint32_t i = 0; i < kNumIo; ++i) a.address[i] = get_arg_val<uint32_t>(i);
    a.num_tokens = get_arg_val<uint32_t>(kArgNumTokens);
    a.top_k = get_arg_val<uint32_t>(kArgTopK);
    a.num_experts = get_arg_val<uint32_t>(kArgNumExperts);
    a.num_local = get_arg_val<uint32_t>(kArgNumLocalExperts);
    a.slot_begin = get_arg_val<uint32_t>(kArgSlotBegin);
    a.slot_end = get_arg_val<uint32_t>(kArgSlotEnd);
    a.reports_status = get_arg_val<uint32_t>(kArgReportsStatus) != 0;
    a.chunk_rows = get_arg_val<uint32_t>(kArgChunkRows);
    a.device_index = get_arg_val<uint32_t>(kArgDeviceIndex);
    a.num_devices = get_arg_val<uint32_t>(kArgNumDevices);
    a.mapping_element_bytes = get_arg_val<uint32_t>(kArgMappingElementBytes);
    return a;
}

// L1 rows of this core's tables, zeroed (the padding of every row is 0), and the counters.
struct Tables {
    uint32_t tokens_l1, token_weights_l1, tokens_stride, token_weights_stride;
    volatile uint32_t* counters;
};

Tables reserve_tables(const Args& a) {
    cb_reserve_back(kCbTokens, a.num_slots());
    cb_reserve_back(kCbTokenWeights, a.num_slots());
    cb_reserve_back(kCbCounters, 1);
    Tables t{get_write_ptr(kCbTokens), get_write_ptr(kCbTokenWeights), align_up(a.num_tokens * 4),
             align_up(a.num_tokens * 2), words(get_write_ptr(kCbCounters))};
    moe_kernel::fill_words(t.tokens_l1, a.num_slots() * t.tokens_stride / 4, 0);
    moe_kernel::fill_halves(t.token_weights_l1, a.num_slots() * t.token_weights_stride / 2, 0);
    moe_kernel::fill_words(get_write_ptr(kCbCounters), a.num_local, 0);
    return t;
}

// slot_of_expert[e]: expert e's rank among this device's experts (ascending e), or kNone when
// it lives elsewhere or its mapping row is not one-hot (counted as a mapping error).
template <typename Accessor>
volatile uint32_t* build_slot_table(const Args& a, const Accessor& mapping, uint32_t* status) {
    cb_reserve_back(kCbSlotTable, 1);
    cb_reserve_back(kCbMappingRows, a.chunk_rows);
    volatile uint32_t* slot_of_expert = words(get_write_ptr(kCbSlotTable));
    const uint32_t rows_l1 = get_write_ptr(kCbMappingRows);
    const uint32_t row_stride = align_up(a.num_devices * a.mapping_element_bytes);
    uint32_t owned = 0;
    for (uint32_t e0 = 0; e0 < a.num_experts; e0 += a.chunk_rows) {
        const uint32_t rows = a.num_experts - e0 < a.chunk_rows ? a.num_experts - e0 : a.chunk_rows;
        for (uint32_t r = 0; r < rows; ++r) {
            noc_async_read(mapping.get_noc_addr(e0 + r), rows_l1 + r * row_stride,
                           a.num_devices * a.mapping_element_bytes);
        }
        noc_async_read_barrier();
        for (uint32_t r = 0; r < rows; ++r) {
            const uint32_t e = e0 + r;
            const uint32_t owner = moe_mapping::owner_of_row(rows_l1 + r * row_stride, a.num_devices,
                                                             a.mapping_element_bytes);
            // A device given more than E_l experts routes its first E_l (and reports the error).
            const bool local = owner == a.device_index && owned++ < a.num_local;
            slot_of_expert[e] = local ? owned - 1 : kNone;
            if (owner == moe_mapping::kNotOneHot && status[kMappingErrors]++ == 0) status[kFirstBadExpert] = e;
        }
    }
    if (owned != a.num_local) ++status[kMappingErrors];
    return slot_of_expert;
}

// Appends assignment (t, k) of expert slot `slot` to its table row; the reporting core
// follows every slot's counter to find overflowing rows.
void record_assignment(const Args& a, Tables& tables, uint32_t slot, uint32_t token, uint16_t weight,
                       uint32_t* status) {
    if (!a.mine(slot) && !a.reports_status) return;
    const uint32_t column = tables.counters[slot]++;
    if (column >= a.num_tokens) {  // only reachable when a token picks one expert twice
        if (status[kNumDropped]++ == 0) status[kFirstDroppedSlot] = slot;
        return;
    }
    if (!a.mine(slot)) return;
    const uint32_t row = slot - a.slot_begin;
    words(tables.tokens_l1 + row * tables.tokens_stride)[column] = token;
    halves(tables.token_weights_l1 + row * tables.token_weights_stride)[column] = weight;
}

// Walks the (T, K) ids and weights in row-major order, chunk_rows rows per DRAM batch.
template <typename IdsAccessor, typename WeightsAccessor>
void scan_assignments(const Args& a, const IdsAccessor& ids, const WeightsAccessor& weights,
                      volatile uint32_t* slot_of_expert, Tables& tables, uint32_t* status) {
    const uint32_t ids_stride = align_up(a.top_k * 4), weights_stride = align_up(a.top_k * 2);
    for (uint32_t t0 = 0; t0 < a.num_tokens; t0 += a.chunk_rows) {
        const uint32_t rows = a.num_tokens - t0 < a.chunk_rows ? a.num_tokens - t0 : a.chunk_rows;
        cb_reserve_back(kCbIds, rows);
        cb_reserve_back(kCbWeights, rows);
        const uint32_t ids_l1 = get_write_ptr(kCbIds), weights_l1 = get_write_ptr(kCbWeights);
        for (uint32_t r = 0; r < rows; ++r) {
            noc_async_read(ids.get_noc_addr(t0 + r), ids_l1 + r * ids_stride, a.top_k * 4);
            noc_async_read(weights.get_noc_addr(t0 + r), weights_l1 + r * weights_stride, a.top_k * 2);
        }
        noc_async_read_barrier();
        for (uint32_t r = 0; r < rows; ++r) {
            volatile uint32_t* id_row = words(ids_l1 + r * ids_stride);
            volatile uint16_t* weight_row = halves(weights_l1 + r * weights_stride);
            for (uint32_t k = 0; k < a.top_k; ++k) {
                const uint32_t id = id_row[k];
                if (id >= a.num_experts) {
                    if (a.reports_status && status[kNumInvalidIds]++ == 0) {
                        status[kFirstInvalidT] = t0 + r;
                        status[kFirstInvalidK] = k;
                        status[kFirstInvalidId] = id;
                    }
                    continue;
                }
                const uint32_t slot = slot_of_expert[id];
                if (slot != kNone) record_assignment(a, tables, slot, t0 + r, weight_row[k], status);
            }
        }
    }
}

// This core's rows out; on a single line of experts token_idx_map equals routed_tokens.
template <typename CountsAccessor, typename TokensAccessor, typename WeightsAccessor, typename IdxMapAccessor>
void write_tables(const Args& a, const Tables& tables, const CountsAccessor& counts_out,
                  const TokensAccessor& tokens_out, const WeightsAccessor& token_weights_out,
                  const IdxMapAccessor& idx_map_out) {
    cb_reserve_back(kCbStage, 1);
    const uint32_t stage_l1 = get_write_ptr(kCbStage);
    for (uint32_t slot = a.slot_begin; slot < a.slot_end; ++slot) {
        const uint32_t row = slot - a.slot_begin;
        const uint32_t tokens_row_l1 = tables.tokens_l1 + row * tables.tokens_stride;
        noc_async_write(tokens_row_l1, tokens_out.get_noc_addr(slot), a.num_tokens * 4);
        noc_async_write(tokens_row_l1, idx_map_out.get_noc_addr(slot), a.num_tokens * 4);
        noc_async_write(tables.token_weights_l1 + row * tables.token_weights_stride,
                        token_weights_out.get_noc_addr(slot), a.num_tokens * 2);
        noc_async_write_barrier();  // the stage word is reused per expert
        words(stage_l1)[0] = tables.counters[slot] < a.num_tokens ? tables.counters[slot] : a.num_tokens;
        noc_async_write(stage_l1, counts_out.get_noc_addr(slot), 4);
    }
}

template <typename Accessor>
void write_status(const uint32_t* status, const Accessor& status_out) {
    cb_reserve_back(kCbStatus, 1);
    const uint32_t status_l1 = get_write_ptr(kCbStatus);
    for (uint32_t w = 0; w < kStatusWords; ++w) words(status_l1)[w] = status[w];
    noc_async_write(status_l1, status_out.get_noc_addr(0), kStatusWords * 4);
}

}  // namespace

void kernel_main() {
    const Args a = read_args();
    constexpr auto ids_args = TensorAccessorArgs<0>();
    constexpr auto weights_args = TensorAccessorArgs<ids_args.next_compile_time_args_offset()>();
    constexpr auto mapping_args = TensorAccessorArgs<weights_args.next_compile_time_args_offset()>();
    constexpr auto counts_args = TensorAccessorArgs<mapping_args.next_compile_time_args_offset()>();
    constexpr auto tokens_args = TensorAccessorArgs<counts_args.next_compile_time_args_offset()>();
    constexpr auto token_weights_args = TensorAccessorArgs<tokens_args.next_compile_time_args_offset()>();
    constexpr auto idx_map_args = TensorAccessorArgs<token_weights_args.next_compile_time_args_offset()>();
    constexpr auto status_args = TensorAccessorArgs<idx_map_args.next_compile_time_args_offset()>();
    const auto ids = TensorAccessor(ids_args, a.address[kSelectedExperts], align_up(a.top_k * 4));
    const auto weights = TensorAccessor(weights_args, a.address[kRoutingWeights], align_up(a.top_k * 2));
    const auto mapping = TensorAccessor(mapping_args, a.address[kExpertMapping],
                                        align_up(a.num_devices * a.mapping_element_bytes));
    const auto counts_out = TensorAccessor(counts_args, a.address[kNumRoutedTokens], align_up(4));
    const auto tokens_out = TensorAccessor(tokens_args, a.address[kRoutedTokens], align_up(a.num_tokens * 4));
    const auto token_weights_out =
        TensorAccessor(token_weights_args, a.address[kRoutedTokenWeights], align_up(a.num_tokens * 2));
    const auto idx_map_out = TensorAccessor(idx_map_args, a.address[kTokenIdxMap], align_up(a.num_tokens * 4));
    const auto status_out = TensorAccessor(status_args, a.address[kRoutingStatus], align_up(kStatusWords * 4));

    uint32_t status[kStatusWords] = {0, kNone, kNone, kNone, 0, kNone, 0, kNone};
    Tables tables = reserve_tables(a);
    volatile uint32_t* slot_of_expert = build_slot_table(a, mapping, status);
    scan_assignments(a, ids, weights, slot_of_expert, tables, status);
    write_tables(a, tables, counts_out, tokens_out, token_weights_out, idx_map_out);
    if (a.reports_status) write_status(status, status_out);
    noc_async_write_barrier();
}
