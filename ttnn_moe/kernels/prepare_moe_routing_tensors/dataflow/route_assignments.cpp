// prepare_moe_routing_tensors: builds the routing-table rows of this core's local experts.
//
// One data-movement kernel per core; circular buffers serve as L1 scratch. The core
// first turns the one-hot expert_mapping into this device's slot table, then scans
// every (t, k) id in row-major order, so within an expert's row assignments come out
// by ascending token, ties by ascending k. The core with reports_status also counts
// bad ids, overflowing assignments and mapping errors, and writes routing_status.
//
// Each local expert keeps a window of window_columns columns of its two table rows in L1 (the
// whole row when the factory found room for it). The scan fills a row front to back, so a full
// window goes to DRAM at once and is reused for the next columns; at the end each row's last
// window is written with its zero tail, and the columns after it as zeros.
//
// compile-time args: 8 interleaved accessors (IsDram|RuntimePageSize) in Io order; Io, the
// runtime args (dataflow_arg), the named compile-time args and the status words:
// cpp/ops/prepare_moe_routing_tensors/prepare_moe_routing_tensors_shared.hpp.
// conformance: kind=dataflow ct_args=130,130,130,130,130,130,130,130 named=cb_mapping_rows:0,cb_slot_table:1,cb_ids:2,cb_weights:3,cb_tokens:4,cb_token_weights:5,cb_counters:6,cb_status:7,cb_stage:8 formats=0:uint32,1:uint32,2:uint32,4:uint32,6:uint32,7:uint32,8:uint32
#include <cstdint>
#include <tuple>

#include "../../../cpp/ops/prepare_moe_routing_tensors/prepare_moe_routing_tensors_shared.hpp"
#include "../../common/dataflow/expert_mapping.hpp"
#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"

namespace {

using namespace ttnn_moe::prepare_moe_routing_tensors_shared;
using moe_kernel::align_up;
using moe_kernel::halves;
using moe_kernel::words;

constexpr uint32_t cb_mapping_rows = get_named_compile_time_arg_val(named_arg::kCbMappingRows);
constexpr uint32_t cb_slot_table = get_named_compile_time_arg_val(named_arg::kCbSlotTable);
constexpr uint32_t cb_ids = get_named_compile_time_arg_val(named_arg::kCbIds);
constexpr uint32_t cb_weights = get_named_compile_time_arg_val(named_arg::kCbWeights);
constexpr uint32_t cb_tokens = get_named_compile_time_arg_val(named_arg::kCbTokens);
constexpr uint32_t cb_token_weights = get_named_compile_time_arg_val(named_arg::kCbTokenWeights);
constexpr uint32_t cb_counters = get_named_compile_time_arg_val(named_arg::kCbCounters);
constexpr uint32_t cb_status = get_named_compile_time_arg_val(named_arg::kCbStatus);
constexpr uint32_t cb_stage = get_named_compile_time_arg_val(named_arg::kCbStage);
constexpr auto kTensorArgs = make_tensor_accessor_args_tuple<kNumIo, 0>();

struct Args {
    uint32_t address[kNumIo];
    uint32_t num_tokens, top_k, num_experts, num_local, slot_begin, slot_end;
    bool reports_status;
    uint32_t chunk_rows, device_index, num_devices, mapping_element_bytes, window_columns;

    uint32_t num_slots() const { return slot_end - slot_begin; }
    bool mine(uint32_t slot) const { return slot >= slot_begin && slot < slot_end; }
};

Args read_args() {
    Args a{};
    for (uint32_t i = 0; i < kNumIo; ++i) a.address[i] = get_arg_val<uint32_t>(i);
    a.num_tokens = get_arg_val<uint32_t>(dataflow_arg::kNumTokens);
    a.top_k = get_arg_val<uint32_t>(dataflow_arg::kTopK);
    a.num_experts = get_arg_val<uint32_t>(dataflow_arg::kNumExperts);
    a.num_local = get_arg_val<uint32_t>(dataflow_arg::kNumLocalExperts);
    a.slot_begin = get_arg_val<uint32_t>(dataflow_arg::kSlotBegin);
    a.slot_end = get_arg_val<uint32_t>(dataflow_arg::kSlotEnd);
    a.reports_status = get_arg_val<uint32_t>(dataflow_arg::kReportsStatus) != 0;
    a.chunk_rows = get_arg_val<uint32_t>(dataflow_arg::kChunkRows);
    a.device_index = get_arg_val<uint32_t>(dataflow_arg::kDeviceIndex);
    a.num_devices = get_arg_val<uint32_t>(dataflow_arg::kNumDevices);
    a.mapping_element_bytes = get_arg_val<uint32_t>(dataflow_arg::kMappingElementBytes);
    a.window_columns = get_arg_val<uint32_t>(dataflow_arg::kWindowColumns);
    return a;
}

// The L1 column window of each of this core's table rows, and the counters.
struct Tables {
    uint32_t tokens_l1, token_weights_l1, tokens_stride, token_weights_stride;
    volatile uint32_t* counters;

    uint32_t tokens_window(const Args& a, uint32_t slot) const {
        return tokens_l1 + (slot - a.slot_begin) * tokens_stride;
    }
    uint32_t weights_window(const Args& a, uint32_t slot) const {
        return token_weights_l1 + (slot - a.slot_begin) * token_weights_stride;
    }
};

Tables reserve_tables(const Args& a) {
    cb_reserve_back(cb_tokens, a.num_slots());
    cb_reserve_back(cb_token_weights, a.num_slots());
    cb_reserve_back(cb_counters, 1);
    Tables t{get_write_ptr(cb_tokens), get_write_ptr(cb_token_weights), align_up(a.window_columns * 4),
             align_up(a.window_columns * 2), words(get_write_ptr(cb_counters))};
    moe_kernel::fill_words(get_write_ptr(cb_counters), a.num_local, 0);
    return t;
}

// Writes `columns` columns of slot's window to its rows of routed_tokens, token_idx_map (on
// one line of experts the same indices) and routed_token_weights, starting at column `first`,
// and waits, so the window can be refilled.
template <typename TokensAccessor, typename WeightsAccessor, typename IdxMapAccessor>
void write_window(const Args& a, const Tables& tables, uint32_t slot, uint32_t first, uint32_t columns,
                  const TokensAccessor& tokens_out, const WeightsAccessor& token_weights_out,
                  const IdxMapAccessor& idx_map_out) {
    const uint32_t tokens_window = tables.tokens_window(a, slot);
    noc_async_write(tokens_window, tokens_out.get_noc_addr(slot, first * 4), columns * 4);
    noc_async_write(tokens_window, idx_map_out.get_noc_addr(slot, first * 4), columns * 4);
    noc_async_write(tables.weights_window(a, slot), token_weights_out.get_noc_addr(slot, first * 2), columns * 2);
    noc_async_write_barrier();
}

// slot_of_expert[e]: expert e's rank among this device's experts (ascending e), or kNone when
// it lives elsewhere or its mapping row is not one-hot (counted as a mapping error).
template <typename Accessor>
volatile uint32_t* build_slot_table(const Args& a, const Accessor& mapping, uint32_t* status) {
    cb_reserve_back(cb_slot_table, 1);
    cb_reserve_back(cb_mapping_rows, a.chunk_rows);
    volatile uint32_t* slot_of_expert = words(get_write_ptr(cb_slot_table));
    const uint32_t rows_l1 = get_write_ptr(cb_mapping_rows);
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
            const uint32_t owner =
                moe_mapping::owner_of_row(rows_l1 + r * row_stride, a.num_devices, a.mapping_element_bytes);
            // A device given more than E_l experts routes its first E_l (and reports the error).
            const bool local = owner == a.device_index && owned++ < a.num_local;
            slot_of_expert[e] = local ? owned - 1 : kNone;
            if (owner == moe_mapping::kNotOneHot && status[kMappingErrors]++ == 0) status[kFirstBadExpert] = e;
        }
    }
    if (owned != a.num_local) ++status[kMappingErrors];
    return slot_of_expert;
}

// The output tables the scan writes windows into.
template <typename TokensAccessor, typename WeightsAccessor, typename IdxMapAccessor>
struct TableOutputs {
    TokensAccessor tokens;
    WeightsAccessor token_weights;
    IdxMapAccessor idx_map;
};

// Appends assignment (t, k) of expert slot `slot` to its table row, writing the window out when
// it fills; the reporting core follows every slot's counter to find overflowing rows.
template <typename Outputs>
void record_assignment(const Args& a, Tables& tables, const Outputs& out, uint32_t slot, uint32_t token,
                       uint16_t weight, uint32_t* status) {
    if (!a.mine(slot) && !a.reports_status) return;
    const uint32_t column = tables.counters[slot]++;
    if (column >= a.num_tokens) {  // only reachable when a token picks one expert twice
        if (status[kNumDropped]++ == 0) status[kFirstDroppedSlot] = slot;
        return;
    }
    if (!a.mine(slot)) return;
    const uint32_t in_window = column % a.window_columns;
    words(tables.tokens_window(a, slot))[in_window] = token;
    halves(tables.weights_window(a, slot))[in_window] = weight;
    if (in_window + 1 == a.window_columns) {
        write_window(a, tables, slot, column - in_window, a.window_columns, out.tokens, out.token_weights, out.idx_map);
    }
}

// Walks the (T, K) ids and weights in row-major order, chunk_rows rows per DRAM batch.
template <typename IdsAccessor, typename WeightsAccessor, typename Outputs>
void scan_assignments(const Args& a, const IdsAccessor& ids, const WeightsAccessor& weights,
                      volatile uint32_t* slot_of_expert, Tables& tables, const Outputs& out, uint32_t* status) {
    const uint32_t ids_stride = align_up(a.top_k * 4), weights_stride = align_up(a.top_k * 2);
    for (uint32_t t0 = 0; t0 < a.num_tokens; t0 += a.chunk_rows) {
        const uint32_t rows = a.num_tokens - t0 < a.chunk_rows ? a.num_tokens - t0 : a.chunk_rows;
        cb_reserve_back(cb_ids, rows);
        cb_reserve_back(cb_weights, rows);
        const uint32_t ids_l1 = get_write_ptr(cb_ids), weights_l1 = get_write_ptr(cb_weights);
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
                if (slot != kNone) record_assignment(a, tables, out, slot, t0 + r, weight_row[k], status);
            }
        }
    }
}

// The rest of this core's rows: each row's last window (its filled columns, then zeros), the
// windows after it as zeros, and the counts.
template <typename CountsAccessor, typename Outputs>
void finish_tables(const Args& a, const Tables& tables, const CountsAccessor& counts_out, const Outputs& out) {
    cb_reserve_back(cb_stage, 1);
    const uint32_t stage_l1 = get_write_ptr(cb_stage);
    for (uint32_t slot = a.slot_begin; slot < a.slot_end; ++slot) {
        const uint32_t filled = tables.counters[slot] < a.num_tokens ? tables.counters[slot] : a.num_tokens;
        const uint32_t first_unwritten = filled - filled % a.window_columns;
        uint32_t kept = filled - first_unwritten;  // filled columns of the window in L1
        for (uint32_t first = first_unwritten; first < a.num_tokens; first += a.window_columns) {
            const uint32_t columns = a.num_tokens - first < a.window_columns ? a.num_tokens - first : a.window_columns;
            if (kept < columns) {
                moe_kernel::fill_words(tables.tokens_window(a, slot) + kept * 4, columns - kept, 0);
                moe_kernel::fill_halves(tables.weights_window(a, slot) + kept * 2, columns - kept, 0);
            }
            write_window(a, tables, slot, first, columns, out.tokens, out.token_weights, out.idx_map);
            kept = 0;
        }
        words(stage_l1)[0] = filled;
        noc_async_write(stage_l1, counts_out.get_noc_addr(slot), 4);
        noc_async_write_barrier();  // the stage word is reused per expert
    }
}

template <typename Accessor>
void write_status(const uint32_t* status, const Accessor& status_out) {
    cb_reserve_back(cb_status, 1);
    const uint32_t status_l1 = get_write_ptr(cb_status);
    for (uint32_t w = 0; w < kStatusWords; ++w) words(status_l1)[w] = status[w];
    noc_async_write(status_l1, status_out.get_noc_addr(0), kStatusWords * 4);
}

// Accessors take the DRAM-aligned page size (the bank stride of the pages).
uint32_t page_bytes(const Args& a, uint32_t tensor) {
    switch (tensor) {
        case kSelectedExperts:
            return align_up(a.top_k * 4);
        case kRoutingWeights:
            return align_up(a.top_k * 2);
        case kExpertMapping:
            return align_up(a.num_devices * a.mapping_element_bytes);
        case kRoutedTokens:
        case kTokenIdxMap:
            return align_up(a.num_tokens * 4);
        case kRoutedTokenWeights:
            return align_up(a.num_tokens * 2);
        case kRoutingStatus:
            return align_up(kStatusWords * 4);
        default:
            return align_up(4);  // num_routed_tokens: one word per page
    }
}

template <uint32_t I>
auto tensor(const Args& a) {
    return TensorAccessor(std::get<I>(kTensorArgs), a.address[I], page_bytes(a, I));
}

}  // namespace

void kernel_main() {
    const Args a = read_args();
    uint32_t status[kStatusWords] = {0, kNone, kNone, kNone, 0, kNone, 0, kNone};
    Tables tables = reserve_tables(a);
    const auto outputs = TableOutputs<decltype(tensor<kRoutedTokens>(a)), decltype(tensor<kRoutedTokenWeights>(a)),
                                      decltype(tensor<kTokenIdxMap>(a))>{
        tensor<kRoutedTokens>(a), tensor<kRoutedTokenWeights>(a), tensor<kTokenIdxMap>(a)};
    volatile uint32_t* slot_of_expert = build_slot_table(a, tensor<kExpertMapping>(a), status);
    scan_assignments(a, tensor<kSelectedExperts>(a), tensor<kRoutingWeights>(a), slot_of_expert, tables, outputs,
                     status);
    finish_tables(a, tables, tensor<kNumRoutedTokens>(a), outputs);
    if (a.reports_status) write_status(status, tensor<kRoutingStatus>(a));
    noc_async_write_barrier();
}
