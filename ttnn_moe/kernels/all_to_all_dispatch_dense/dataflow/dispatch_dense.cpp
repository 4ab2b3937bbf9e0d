// all_to_all_dispatch_dense: one data-movement kernel per device (core (0, 0)).
//
// 1. The G cores of the grid's first row (this kernel, the C - 1 row senders, gather_reads.cpp on
//    the others) read a share each of expert_mapping and of this device's ids and weights into
//    this core's L1 (gather_share.hpp); from them the owner
//    position of each expert on this line (or none) and each line expert's index among the
//    line's experts (ascending e). An owner's blocks follow its experts' ascending ids (their
//    local slots).
// 2. Counts and lists, with no line barrier before them: this device's assignments per line
//    expert (one routing_counts page) go to page `position` of every line member, then each peer
//    gets the list of this device's assignments to its experts, (t, e, weight) in (t, k) order,
//    into routing_lists page `position` (neither depends on the plan).
// 3. Packing plan, identical on every member because it reads the same count pages:
//    per expert the assignments of the line (total) and of the sources before this
//    one (before); per destination, blocks in ascending local slot at tile-aligned
//    offsets, each keeping min(total, capacity - offset) rows. The row of assignment
//    (q, t, k) of expert e is offset[e] + its rank among e's assignments in
//    (q, t, k) order.
// 4. Send: the tokens are split into L shares, one per row sender (this kernel is sender 0,
//    send_rows.cpp on cores (1, 0) .. (L - 1, 0) the others, each over its own fabric link),
//    which start once this kernel has written the send plan (per sender, the row each
//    expert's next assignment takes) and rung their sem_go. Each token row is read once
//    and written once per destination device that keeps one of its assignments, to the
//    first such row (lowest k); rows for this device go to all their rows over the NOC
//    (row_sender.hpp). Every peer has sent its count page by then, so it runs this program.
//    After its rows on its link each sender sends every peer an increment: "my rows landed".
// 5. Receive: once every peer's list has come (not its rows), walk the line's assignments to this
//    device (the lists, in source order), write token_idx_map / weights / slot_source and the
//    counts while the rows travel; after every peer's increments, copy each remote token row
//    from its first row to its other rows on this device (fan-out). The blocks' zero padding rows
//    are written meanwhile by write_padding.cpp on the other data-movement RISC and NOC of every
//    sender's core, from the plan tables.
// Counts and lists travel as fused write + increment packets (the routing-metadata
// traffic class), token rows as plain writes (the payload class).
// Past the L1 budget (kStreamed) the T- and capacity-sized tables stream through windows: the ids
// and weights from their DRAM copy in this device's own routing_lists page, the lists a window of
// whole packets at a time, the images one walk of the assignments per window of rows, the
// slot_source pages and fan-out copies done here during the first walk (DESIGN.md).
//
// The io order, the runtime args and the named compile-time args are listed in
// cpp/ops/all_to_all_dispatch_dense/all_to_all_dispatch_dense_shared.hpp; the compile-time
// args are the 14 interleaved accessors (IsDram|RuntimePageSize) in io order.
// conformance: kind=dataflow ct_args=130,130,130,130,130,130,130,130,130,130,130,130,130,130 named=cb_row:0,cb_own:1,cb_counts:2,cb_list:3,cb_mapping:4,cb_tables:5,cb_idx_image:6,cb_weight_image:7,cb_stage:8,cb_headers:9,sem_plan:0,sem_counts:1,sem_lists:2,sem_payload:3,cb_send_plan:11,sem_go:0,cb_finish:12,cb_slot_image:13,cb_fanout:14,cb_gather:15,sem_gathered:4 defines=ROUTING_MODE=137 label=1d
// conformance: kind=dataflow ct_args=130,130,130,130,130,130,130,130,130,130,130,130,130,130 named=cb_row:0,cb_own:1,cb_counts:2,cb_list:3,cb_mapping:4,cb_tables:5,cb_idx_image:6,cb_weight_image:7,cb_stage:8,cb_headers:9,sem_plan:0,sem_counts:1,sem_lists:2,sem_payload:3,cb_send_plan:11,sem_go:0,cb_finish:12,cb_slot_image:13,cb_fanout:14,cb_gather:15,sem_gathered:4 defines=ROUTING_MODE=162;FABRIC_2D=1 label=2d
#include <cstdint>
#include <tuple>
#include <utility>

#include "../../../cpp/ops/all_to_all_dispatch_dense/all_to_all_dispatch_dense_shared.hpp"
#include "../../common/dataflow/expert_mapping.hpp"
#include "../../common/dataflow/fabric_line.hpp"
#include "../../common/dataflow/scratch.hpp"
#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"
#include "dispatch_plan.hpp"
#include "finish_share.hpp"
#include "gather_share.hpp"
#include "row_sender.hpp"

using namespace ttnn_moe::all_to_all_dispatch_dense_shared;
using dispatch_plan::ListEntry;
using dispatch_plan::PlanTables;
using moe_fabric::FabricLine;
using moe_kernel::align_up;

namespace {

constexpr uint32_t cb_row = get_named_compile_time_arg_val(named_arg::kCbRow);
constexpr uint32_t cb_own = get_named_compile_time_arg_val(named_arg::kCbOwn);
constexpr uint32_t cb_counts = get_named_compile_time_arg_val(named_arg::kCbCounts);
constexpr uint32_t cb_list = get_named_compile_time_arg_val(named_arg::kCbList);
constexpr uint32_t cb_mapping = get_named_compile_time_arg_val(named_arg::kCbMapping);
constexpr uint32_t cb_tables = get_named_compile_time_arg_val(named_arg::kCbTables);
constexpr uint32_t cb_idx_image = get_named_compile_time_arg_val(named_arg::kCbIdxImage);
constexpr uint32_t cb_weight_image = get_named_compile_time_arg_val(named_arg::kCbWeightImage);
constexpr uint32_t cb_stage = get_named_compile_time_arg_val(named_arg::kCbStage);
constexpr uint32_t cb_headers = get_named_compile_time_arg_val(named_arg::kCbHeaders);
constexpr uint32_t sem_plan = get_named_compile_time_arg_val(named_arg::kSemPlan);
constexpr uint32_t sem_counts = get_named_compile_time_arg_val(named_arg::kSemCounts);
constexpr uint32_t sem_lists = get_named_compile_time_arg_val(named_arg::kSemLists);
constexpr uint32_t sem_payload = get_named_compile_time_arg_val(named_arg::kSemPayload);
constexpr uint32_t cb_send_plan = get_named_compile_time_arg_val(named_arg::kCbSendPlan);
constexpr uint32_t sem_go = get_named_compile_time_arg_val(named_arg::kSemGo);
constexpr uint32_t cb_finish = get_named_compile_time_arg_val(named_arg::kCbFinish);
constexpr uint32_t cb_slot_image = get_named_compile_time_arg_val(named_arg::kCbSlotImage);
constexpr uint32_t cb_fanout = get_named_compile_time_arg_val(named_arg::kCbFanout);
constexpr uint32_t cb_gather = get_named_compile_time_arg_val(named_arg::kCbGather);
constexpr uint32_t sem_gathered = get_named_compile_time_arg_val(named_arg::kSemGathered);
constexpr auto kTensorArgs = make_tensor_accessor_args_tuple<kNumIo, 0>();

struct Args {
    uint32_t address[kNumIo];
    uint32_t num_tokens, top_k, hidden, num_experts, local_experts, num_devices, line_size, position, capacity,
        max_payload, mapping_element_bytes, num_links, num_senders;
    uint32_t streamed, own_window, list_window, row_window, num_gather_cores;
    uint32_t line_devices[moe_fabric::kMaxLineDevices];  // row-major mesh index of each line position
    uint32_t route_arg() const { return dataflow_arg::kLineDevices + line_size; }
    // NOC (x, y) of the first row's cores 1 .. G - 1: the row senders, then the gather-only cores.
    uint32_t first_row_noc_arg() const { return route_arg() + moe_fabric::kRouteWordsPerPosition * line_size; }
    uint32_t connection_arg() const { return first_row_noc_arg() + 2 * (num_gather_cores - 1); }
    uint32_t row_bytes() const { return hidden * 2; }
    uint32_t assignments() const { return num_tokens * top_k; }
    // This device's ids and weights live in their DRAM copy (more than one window of them).
    bool own_copied() const { return own_window < num_tokens; }
};

Args read_args() {
    Args a;
    for (uint32_t i = 0; i < kNumIo; ++i) a.address[i] = get_arg_val<uint32_t>(i);
    a.num_tokens = get_arg_val<uint32_t>(dataflow_arg::kNumTokens);
    a.top_k = get_arg_val<uint32_t>(dataflow_arg::kTopK);
    a.hidden = get_arg_val<uint32_t>(dataflow_arg::kHidden);
    a.num_experts = get_arg_val<uint32_t>(dataflow_arg::kNumExperts);
    a.local_experts = get_arg_val<uint32_t>(dataflow_arg::kLocalExperts);
    a.num_devices = get_arg_val<uint32_t>(dataflow_arg::kNumDevices);
    a.line_size = get_arg_val<uint32_t>(dataflow_arg::kLineSize);
    a.position = get_arg_val<uint32_t>(dataflow_arg::kPosition);
    a.capacity = get_arg_val<uint32_t>(dataflow_arg::kCapacity);
    a.max_payload = get_arg_val<uint32_t>(dataflow_arg::kMaxPacketPayload);
    a.mapping_element_bytes = get_arg_val<uint32_t>(dataflow_arg::kMappingElementBytes);
    a.num_links = get_arg_val<uint32_t>(dataflow_arg::kNumLinks);
    a.num_senders = get_arg_val<uint32_t>(dataflow_arg::kNumSenders);
    a.streamed = get_arg_val<uint32_t>(dataflow_arg::kStreamed);
    a.own_window = get_arg_val<uint32_t>(dataflow_arg::kOwnWindow);
    a.list_window = get_arg_val<uint32_t>(dataflow_arg::kListWindow);
    a.row_window = get_arg_val<uint32_t>(dataflow_arg::kRowWindow);
    a.num_gather_cores = get_arg_val<uint32_t>(dataflow_arg::kNumGatherCores);
    for (uint32_t q = 0; q < a.line_size; ++q) {
        a.line_devices[q] = get_arg_val<uint32_t>(dataflow_arg::kLineDevices + q);
    }
    return a;
}

// Accessors take the DRAM-aligned page size (the bank stride of the pages).
uint32_t page_bytes(const Args& a, uint32_t io) {
    switch (io) {
        case kX:
        case kTokens:
            return align_up(a.row_bytes());
        case kIds:
            return align_up(a.top_k * 4);
        case kWeights:
            return align_up(a.top_k * 2);
        case kMapping:
            return align_up(a.num_devices * a.mapping_element_bytes);
        case kIdxMap:
            return align_up(a.capacity * 4);
        case kRowWeights:
            return align_up(a.capacity * 2);
        case kSlotSource:
            return align_up(8);
        case kStatus:
            return align_up(kStatusWords * 4);
        case kRoutingCounts:
            return align_up(a.num_experts * 4);
        case kRoutingLists:
            return align_up(a.assignments() * kListEntryBytes);
        default:
            return align_up(4);  // num_routed_tokens, expert_offsets, num_slots: one word per page
    }
}

template <uint32_t I>
auto tensor(const Args& a) {
    return TensorAccessor(std::get<I>(kTensorArgs), a.address[I], page_bytes(a, I));
}
template <uint32_t I>
using Tensor = decltype(tensor<I>(std::declval<const Args&>()));

// L1 blocks of the scratch CBs. Whole tables: cb_own holds all T tokens, cb_list a whole list, the
// images all `capacity` rows, cb_slot_image and cb_fanout every used slot and fan-out copy. Streamed
// (TableWindows in the shared header): windows of them.
struct Scratch {
    uint32_t row, mapping, counts, list, stage, own, tables, idx_image, weight_image, headers, send_plan;
    uint32_t finish, slot_image, fanout, gather;
    uint32_t counts_page_bytes;  // D pages of E words, this device's at `position`
    uint32_t row_stride;         // bytes between the two row buffers
    uint32_t row_buffer(uint32_t i) const { return row + i * row_stride; }
    // Stage slot i (kStageBytes each, DRAM-aligned).
    uint32_t stage_slot(uint32_t i) const { return stage + i * kStageBytes; }
    volatile uint32_t* stage_words() const { return moe_kernel::words(stage); }
    volatile uint32_t* own_ids() const { return moe_kernel::words(own); }
    uint32_t own_weights_l1(const Args& a) const { return own + a.own_window * a.top_k * 4; }
    volatile uint16_t* own_weights(const Args& a) const { return moe_kernel::halves(own_weights_l1(a)); }
    volatile ListEntry* list_entries() const { return reinterpret_cast<volatile ListEntry*>(list); }
    volatile uint32_t* counts_of(uint32_t q) const { return moe_kernel::words(counts + q * counts_page_bytes); }
};

Scratch reserve_scratch(const Args& a) {
    static_assert(sizeof(PACKET_HEADER_TYPE) <= kHeaderSlotBytes, "cb_headers holds one packet header");
    Scratch s;
    s.counts_page_bytes = align_up(a.num_experts * 4);
    s.row_stride = align_up(a.row_bytes());
    s.row = moe_scratch::reserve(cb_row, 2 * s.row_stride);
    s.mapping = moe_scratch::reserve(cb_mapping, kMappingBatchRows * align_up(a.num_devices * a.mapping_element_bytes));
    s.counts = moe_scratch::reserve(cb_counts, a.line_size * s.counts_page_bytes);
    s.list = moe_scratch::reserve(cb_list, a.list_window * kListEntryBytes);
    s.stage = moe_scratch::reserve(cb_stage, kStageSlots * kStageBytes);
    s.own = moe_scratch::reserve(cb_own, a.own_window * a.top_k * kOwnEntryBytes);
    s.tables = moe_scratch::reserve(cb_tables, kPlanTables * a.num_experts * 4);
    s.idx_image = moe_scratch::reserve(cb_idx_image, a.row_window * 4);
    s.weight_image = moe_scratch::reserve(cb_weight_image, a.row_window * 2);
    s.headers = moe_scratch::reserve(cb_headers, sizeof(PACKET_HEADER_TYPE));
    s.send_plan = moe_scratch::reserve(cb_send_plan, (kSendPlanFixedTables + a.num_senders) * a.num_experts * 4);
    s.finish = moe_scratch::reserve(cb_finish, kFinishBytes);
    s.slot_image =
        moe_scratch::reserve(cb_slot_image, a.streamed ? kSlotWindow * moe_kernel::kDramAlign : a.capacity * 8);
    s.fanout = moe_scratch::reserve(cb_fanout, (a.streamed ? kFanoutWindow : a.capacity) * 8);
    s.gather = moe_scratch::reserve(cb_gather, kGatherBytes);
    return s;
}

void clear_status(uint32_t* status) {
    for (uint32_t w = 0; w < kStatusWords; ++w) status[w] = 0;
    status[kFirstInvalidToken] = status[kFirstInvalidK] = status[kFirstInvalidId] = status[kFirstBadExpert] = kNone;
}

// The DRAM copy of this device's ids (then its weights) when they take more than one window: page
// `position` of its routing_lists, where no peer writes.
uint64_t own_copy(const Args& a) {
    return tensor<kRoutingLists>(a).get_noc_addr(a.position);
}

// Tokens [first, first + n) of this device's ids and weights at own_ids() / own_weights(): whole in
// L1 already, or read back from their DRAM copy; `first` is a multiple of own_window. Returns n.
uint32_t load_own_window(const Args& a, const Scratch& s, uint32_t first) {
    const uint32_t n = a.num_tokens - first < a.own_window ? a.num_tokens - first : a.own_window;
    if (a.own_copied()) {
        const uint64_t copy = own_copy(a);
        noc_async_read(copy + first * a.top_k * 4, s.own, n * a.top_k * 4);
        noc_async_read(copy + own_copy_weights_offset(a.assignments()) + first * a.top_k * 2, s.own_weights_l1(a),
                       n * a.top_k * 2);
        noc_async_read_barrier();
    }
    return n;
}

// f(i, id, weight) for every assignment i = t * K + k of this device, in (t, k) order.
template <typename F>
void for_each_own_assignment(const Args& a, const Scratch& s, F&& f) {
    for (uint32_t first = 0; first < a.num_tokens; first += a.own_window) {
        const uint32_t n = load_own_window(a, s, first) * a.top_k;
        for (uint32_t j = 0; j < n; ++j) f(first * a.top_k + j, s.own_ids()[j], s.own_weights(a)[j]);
    }
}

// Share 0 of the first reads (gather_share.hpp: the mapping rows' devices into plan table
// kPlanDevicesTable, the ids and weights into cb_own or their DRAM copy), then every other core's share.
void gather_first_reads(const Args& a, const Scratch& s) {
    const uint64_t own_ids = a.own_copied() ? own_copy(a) : get_noc_addr(my_x[noc_index], my_y[noc_index], s.own);
    const uint64_t own_weights =
        own_ids + (a.own_copied() ? own_copy_weights_offset(a.assignments()) : a.assignments() * 4);
    const gather_share::Where where{0,
                                    a.num_gather_cores,
                                    a.num_experts,
                                    a.num_devices,
                                    a.mapping_element_bytes,
                                    a.num_tokens,
                                    a.top_k,
                                    my_x[noc_index],
                                    my_y[noc_index],
                                    s.tables + kPlanDevicesTable * a.num_experts * 4,
                                    own_ids,
                                    own_weights,
                                    s.mapping,
                                    s.stage,
                                    s.gather};
    gather_share::read_share(where, tensor<kMapping>(a), tensor<kIds>(a), tensor<kWeights>(a));
    if (a.num_gather_cores > 1) {
        noc_semaphore_wait_min(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_gathered)),
                               a.num_gather_cores - 1);
    }
}

// Owner position and line index of every expert, from the device its mapping row marks; returns
// the number of line experts.
uint32_t map_experts_to_line(const Args& a, PlanTables& plan, uint32_t* status) {
    uint32_t experts_at[moe_fabric::kMaxLineDevices] = {};
    uint32_t line_experts = 0;
    for (uint32_t e = 0; e < a.num_experts; ++e) {
        const uint32_t device = plan.before[e];
        plan.owner[e] = kNone;
        plan.line_index[e] = kNone;
        if (device == kNone) {
            if (status[kMappingErrors]++ == 0) status[kFirstBadExpert] = e;
            continue;
        }
        for (uint32_t q = 0; q < a.line_size; ++q) {
            if (a.line_devices[q] == device) {
                plan.owner[e] = q;
                plan.line_index[e] = line_experts++;
                ++experts_at[q];
            }
        }
    }
    if (experts_at[a.position] != a.local_experts) ++status[kMappingErrors];
    return line_experts;
}

// This device's assignments per line expert into its own count page; ids outside [0, E) are
// recorded in status.
void count_own_assignments(const Args& a, const Scratch& s, const PlanTables& plan, uint32_t line_experts,
                           uint32_t* status) {
    volatile uint32_t* own_counts = s.counts_of(a.position);
    for (uint32_t i = 0; i < line_experts; ++i) own_counts[i] = 0;
    for_each_own_assignment(a, s, [&](uint32_t i, uint32_t id, uint16_t) {
        if (id >= a.num_experts) {
            if (status[kInvalidIds]++ == 0) {
                status[kFirstInvalidToken] = i / a.top_k;
                status[kFirstInvalidK] = i % a.top_k;
                status[kFirstInvalidId] = id;
            }
        } else if (plan.owner[id] != kNone) {
            own_counts[plan.line_index[id]] += 1;
        }
    });
}

// This device's count page to page `position` of every peer.
void send_counts(const Args& a, const Scratch& s, FabricLine& line, uint32_t line_experts) {
    const uint32_t counts_bytes = align_up(line_experts * 4);
    const uint64_t counts_page_noc = tensor<kRoutingCounts>(a).get_noc_addr(a.position);
    const uint64_t sem_counts_noc = get_noc_addr(get_semaphore(sem_counts));
    for (uint32_t q = 0; q < a.line_size; ++q) {
        if (q != a.position) {
            line.write_and_signal(q, s.counts + a.position * s.counts_page_bytes, counts_page_noc, counts_bytes,
                                  sem_counts_noc);
        }
    }
}

// Every peer's count page, once it has landed.
void receive_counts(const Args& a, const Scratch& s, FabricLine& line, uint32_t line_experts) {
    const auto routing_counts = tensor<kRoutingCounts>(a);
    const uint32_t counts_bytes = align_up(line_experts * 4);
    moe_fabric::wait_for_line(line, sem_counts, line.packets_for(counts_bytes));
    for (uint32_t q = 0; q < a.line_size; ++q) {
        if (q != a.position) {
            noc_async_read(routing_counts.get_noc_addr(q), s.counts + q * s.counts_page_bytes, counts_bytes);
        }
    }
    noc_async_read_barrier();
}

// The send plan (send_plan layout): owner and end of kept rows per expert, and per row sender
// the row its first assignment to each expert takes. Sender s's tokens follow those of senders
// before it, so its rows follow theirs in (t, k) order, as the plan ranks them. Experts off
// this line have no block (offset and kept were never set): their rows are 0, never read.
void lay_out_send_plan(const Args& a, const Scratch& s, PlanTables& plan) {
    const uint32_t e_count = a.num_experts;
    volatile uint32_t* send_plan = moe_kernel::words(s.send_plan);
    for (uint32_t e = 0; e < e_count; ++e) {
        send_plan[e] = plan.owner[e];
        send_plan[e_count + e] = plan.in_line(e, e_count) ? plan.offset[e] + plan.kept[e] : 0;
        plan.running[e] = 0;
    }
    // Sender s's table holds the rows after the assignments of the tokens before its share.
    uint32_t sender = 0;
    auto lay_out_next_rows = [&]() {
        volatile uint32_t* next_row = send_plan + (kSendPlanFixedTables + sender) * e_count;
        for (uint32_t e = 0; e < e_count; ++e) {
            next_row[e] = plan.in_line(e, e_count) ? plan.offset[e] + plan.before[e] + plan.running[e] : 0;
        }
    };
    lay_out_next_rows();
    for_each_own_assignment(a, s, [&](uint32_t i, uint32_t e, uint16_t) {
        while (sender + 1 < a.num_senders &&
               i >= sender_first_token(sender + 1, a.num_tokens, a.num_senders) * a.top_k) {
            ++sender;
            lay_out_next_rows();
        }
        if (plan.in_line(e, e_count)) ++plan.running[e];
    });
    while (sender + 1 < a.num_senders) {
        ++sender;
        lay_out_next_rows();
    }
}

// Rings sem_go on the other cores of the first row: ring 1 the send plan is ready (the row senders
// start), ring 2 the finish header, ring 3 every row sent to this device has landed (the last writes
// are shared by all of them). Ring 1 concerns only the row senders: the gather-only cores get it with
// ring 2, so every core counts the same three rings and the senders start sooner.
void ring_first_row(const Args& a, uint32_t ring) {
    const uint32_t end = ring == 1 ? a.num_senders : a.num_gather_cores;
    for (uint32_t core = 1; core < end; ++core) {
        const uint32_t x = get_arg_val<uint32_t>(a.first_row_noc_arg() + 2 * (core - 1));
        const uint32_t y = get_arg_val<uint32_t>(a.first_row_noc_arg() + 2 * (core - 1) + 1);
        noc_semaphore_inc(get_noc_addr(x, y, get_semaphore(sem_go)), ring == 2 && core >= a.num_senders ? 2 : 1);
    }
}

// Sender 0's share of the token rows, over this kernel's own link.
void send_own_share(const Args& a, const Scratch& s, FabricLine& line) {
    row_sender::Share share;
    share.first_token = 0;
    share.end_token = sender_first_token(1, a.num_tokens, a.num_senders);
    share.top_k = a.top_k;
    share.num_experts = a.num_experts;
    share.hidden = a.hidden;
    share.position = a.position;
    const row_sender::Buffers buffers{s.stage, s.row, s.row_stride};
    const row_sender::SendPlan plan(s.send_plan, a.num_experts, 0);
    const uint64_t own_ids = a.own_copied() ? own_copy(a) : get_noc_addr(my_x[noc_index], my_y[noc_index], s.own);
    row_sender::send_share(share, tensor<kX>(a), tensor<kTokens>(a), line, plan, buffers, own_ids,
                           a.own_copied() ? moe_kernel::kDramAlign : 16, get_semaphore(sem_payload), my_x[noc_index],
                           my_y[noc_index]);
}

// To peer q this device's assignments to its experts, (t, e, weight) in (t, k) order, into its
// routing_lists page `position` (fused write + increment packets), built in the list buffer and
// sent whenever list_window entries are in it (whole packets, or the whole list).
void send_list_to(const Args& a, const Scratch& s, const PlanTables& plan, FabricLine& line, uint32_t q,
                  uint64_t list_page_noc, uint64_t sem_lists_noc) {
    volatile ListEntry* list = s.list_entries();
    uint32_t n = 0, sent = 0;
    auto send = [&]() {
        if (n)
            line.write_and_signal(q, s.list, list_page_noc + sent * kListEntryBytes, n * kListEntryBytes,
                                  sem_lists_noc);
        sent += n;
        n = 0;
    };
    for_each_own_assignment(a, s, [&](uint32_t i, uint32_t e, uint16_t weight) {
        if (!plan.in_line(e, a.num_experts) || plan.owner[e] != q) return;
        if (n == a.list_window) {
            send();
            // The list buffer is refilled once its packets have left this core.
            noc_async_writes_flushed();
        }
        list[n].token = i / a.top_k;
        list[n].expert_and_weight = ListEntry::pack(e, weight);
        ++n;
    });
    send();
}

// Assignments of position `from` to the experts of position `to` (the length of from's list there).
uint32_t list_length(const Args& a, const Scratch& s, const PlanTables& plan, uint32_t from, uint32_t to) {
    uint32_t n = 0;
    for (uint32_t e = 0; e < a.num_experts; ++e) {
        if (plan.owner[e] == to) n += s.counts_of(from)[plan.line_index[e]];
    }
    return n;
}

// To each peer its list. Streamed, a peer this device sends nothing costs no pass over its ids.
void send_assignment_lists(const Args& a, const Scratch& s, const PlanTables& plan, FabricLine& line) {
    const uint64_t list_page_noc = tensor<kRoutingLists>(a).get_noc_addr(a.position);
    const uint64_t sem_lists_noc = get_noc_addr(get_semaphore(sem_lists));
    for (uint32_t q = 0; q < a.line_size; ++q) {
        if (q == a.position) continue;
        if (a.streamed && list_length(a, s, plan, a.position, q) == 0) continue;
        send_list_to(a, s, plan, line, q, list_page_noc, sem_lists_noc);
    }
    noc_async_write_barrier();
}

// Every packet of every peer's list (their lengths come from the count pages).
void wait_for_lists(const Args& a, const Scratch& s, const PlanTables& plan, FabricLine& line) {
    uint32_t list_packets = 0;
    for (uint32_t q = 0; q < a.line_size; ++q) {
        if (q == a.position) continue;
        const uint32_t n = list_length(a, s, plan, q, a.position);
        if (n) list_packets += line.packets_for(n * kListEntryBytes);
    }
    noc_semaphore_wait(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_lists)), list_packets);
}

// Every peer's increments, one per link from the sender driving it: all its rows have landed.
void wait_for_rows(const Args& a, FabricLine& line) {
    moe_fabric::wait_for_line(line, sem_payload, a.num_links);
}

// The slots of this device: one per (source position, token) pair with kept rows, in the order the
// pairs close. One walk of the line's assignments fills the rows [first_row, first_row + row_window)
// of the token_idx_map and routed_token_weights images; the first walk also records every slot's
// slot_source entry and the fan-out copies: whole, in L1 for the row senders (finish_share.hpp), or
// streamed, written and copied here a window at a time.
class Slots {
public:
    Slots(const Args& a, const Scratch& s, PlanTables& plan, uint32_t first_row, bool record)
        : a_(a), s_(s), plan_(plan), first_row_(first_row), record_(record) {}

    // The next assignment to expert e in line order: its row while the block keeps it.
    void take(uint32_t e, uint16_t weight) {
        const uint32_t rank = plan_.running[e]++;
        if (rank >= plan_.kept[e]) return;
        const uint32_t row = plan_.offset[e] + rank;
        rows_[num_rows_++] = row;
        if (in_window(row)) moe_kernel::halves(s_.weight_image)[row - first_row_] = weight;
    }

    // Closes pair (q, t): its slot in the rows taken, its slot_source entry, and the fan-out
    // copies of a remote token row from its first row to the others.
    void close_pair(uint32_t q, uint32_t t) {
        if (num_rows_ == 0) return;
        const uint32_t slot = num_slots_++;
        for (uint32_t i = 0; i < num_rows_; ++i) {
            if (in_window(rows_[i])) moe_kernel::words(s_.idx_image)[rows_[i] - first_row_] = slot;
        }
        if (record_) {
            record_slot(slot, q, t);
            if (q != a_.position) {
                for (uint32_t i = 1; i < num_rows_; ++i) record_copy(rows_[0], rows_[i]);
            }
        }
        num_rows_ = 0;
    }

    // Streamed: the last slot_source pages and fan-out copies of the window.
    void finish() {
        if (!a_.streamed || !record_) return;
        copy_fanout_window();
        noc_async_write_barrier();
    }

    uint32_t count() const { return num_slots_; }
    // Fan-out copies left to the row senders.
    uint32_t fanout_count() const { return a_.streamed ? 0 : num_fanout_; }

private:
    bool in_window(uint32_t row) const { return row - first_row_ < a_.row_window; }

    void record_slot(uint32_t slot, uint32_t q, uint32_t t) {
        if (!a_.streamed) {
            moe_kernel::words(s_.slot_image)[2 * slot] = q;
            moe_kernel::words(s_.slot_image)[2 * slot + 1] = t;
            return;
        }
        // Its page from a DRAM-aligned stage entry; kSlotWindow pages in flight at most.
        const uint32_t in_window = slot % kSlotWindow;
        if (in_window == 0 && slot) noc_async_write_barrier();
        const uint32_t entry = s_.slot_image + in_window * moe_kernel::kDramAlign;
        moe_kernel::words(entry)[0] = q;
        moe_kernel::words(entry)[1] = t;
        noc_async_write(entry, tensor<kSlotSource>(a_).get_noc_addr(slot), 8);
    }

    void record_copy(uint32_t from, uint32_t to) {
        const uint32_t index = a_.streamed ? num_fanout_ % kFanoutWindow : num_fanout_;
        moe_kernel::words(s_.fanout)[2 * index] = from;
        moe_kernel::words(s_.fanout)[2 * index + 1] = to;
        ++num_fanout_;
        if (a_.streamed && num_fanout_ % kFanoutWindow == 0) copy_fanout_window();
    }

    // Streamed: the copies in the fan-out window (every row sent here has landed).
    void copy_fanout_window() {
        const uint32_t n = num_fanout_ - copied_;
        finish_share::copy_rows(s_.fanout, n, tensor<kTokens>(a_), s_.row, s_.row_stride, a_.row_bytes());
        copied_ = num_fanout_;
    }

    const Args& a_;
    const Scratch& s_;
    PlanTables& plan_;
    const uint32_t first_row_;
    const bool record_;
    uint32_t rows_[kMaxTopK];
    uint32_t num_rows_ = 0;
    uint32_t num_slots_ = 0;
    uint32_t num_fanout_ = 0;
    uint32_t copied_ = 0;
};

void take_own_assignments(const Args& a, const Scratch& s, const PlanTables& plan, Slots& slots) {
    for (uint32_t first = 0; first < a.num_tokens; first += a.own_window) {
        const uint32_t n = load_own_window(a, s, first);
        for (uint32_t t = 0; t < n; ++t) {
            for (uint32_t k = 0; k < a.top_k; ++k) {
                const uint32_t e = s.own_ids()[t * a.top_k + k];
                if (plan.in_line(e, a.num_experts) && plan.owner[e] == a.position) {
                    slots.take(e, s.own_weights(a)[t * a.top_k + k]);
                }
            }
            slots.close_pair(a.position, first + t);
        }
    }
}

// Peer q's list, list_window entries at a time.
void take_list_of(const Args& a, const Scratch& s, const PlanTables& plan, uint32_t q, Slots& slots) {
    const uint32_t n = list_length(a, s, plan, q, a.position);
    if (n == 0) return;
    const uint64_t list_page = tensor<kRoutingLists>(a).get_noc_addr(q);
    volatile ListEntry* list = s.list_entries();
    uint32_t token = 0;
    for (uint32_t first = 0; first < n; first += a.list_window) {
        const uint32_t entries = n - first < a.list_window ? n - first : a.list_window;
        noc_async_read(list_page + first * kListEntryBytes, s.list, entries * kListEntryBytes);
        noc_async_read_barrier();
        if (first == 0) token = list[0].token;
        for (uint32_t i = 0; i < entries; ++i) {
            if (list[i].token != token) {
                slots.close_pair(q, token);
                token = list[i].token;
            }
            slots.take(list[i].expert(), list[i].weight());
        }
    }
    slots.close_pair(q, token);
}

// Walks the line's assignments to this device in source order (own ones from cb_own or their
// copy, a peer's from its list) once per window of rows of the images; streamed, each window goes
// to token_idx_map and routed_token_weights after its walk (whole, write_metadata writes them).
// Fills the finish header: the used slots, the fan-out copies left to the row senders, where both
// lie in this core's L1 and the slot_source pages written here. Returns the number of slots.
uint32_t receive_assignments(const Args& a, const Scratch& s, PlanTables& plan, uint32_t used_rows) {
    uint32_t num_slots = 0, num_fanout = 0;
    // One walk at least: the first one counts the slots and records them.
    for (uint32_t first_row = 0; first_row == 0 || first_row < used_rows; first_row += a.row_window) {
        const uint32_t left = used_rows > first_row ? used_rows - first_row : 0;
        const uint32_t rows = left < a.row_window ? left : a.row_window;
        moe_kernel::fill_words(s.idx_image, rows, 0);
        moe_kernel::fill_halves(s.weight_image, rows, 0);
        for (uint32_t e = 0; e < a.num_experts; ++e) plan.running[e] = 0;
        Slots slots(a, s, plan, first_row, first_row == 0);
        for (uint32_t q = 0; q < a.line_size; ++q) {
            if (q == a.position) {
                take_own_assignments(a, s, plan, slots);
            } else {
                take_list_of(a, s, plan, q, slots);
            }
        }
        slots.finish();
        if (first_row == 0) {
            num_slots = slots.count();
            num_fanout = slots.fanout_count();
        }
        if (a.streamed && rows) {
            noc_async_write(s.idx_image, tensor<kIdxMap>(a).get_noc_addr(0, first_row * 4), rows * 4);
            noc_async_write(s.weight_image, tensor<kRowWeights>(a).get_noc_addr(0, first_row * 2), rows * 2);
            noc_async_write_barrier();
        }
    }
    volatile uint32_t* header = moe_kernel::words(s.finish);
    header[kFinishNumSlots] = num_slots;
    header[kFinishNumFanout] = num_fanout;
    header[kFinishSlotImage] = s.slot_image;
    header[kFinishFanout] = s.fanout;
    header[kFinishFirstPage] = a.streamed ? num_slots : 0;
    return num_slots;
}

// Where the main core's share of the last writes lies (its finish block is the header).
finish_share::Where finish_where(const Args& a, const Scratch& s) {
    return {0,     a.num_gather_cores, a.row_bytes(), my_x[noc_index], my_y[noc_index], s.finish, s.stage,
            s.row, s.row_stride};
}

// Metadata outputs: whole, the token_idx_map and routed_token_weights images; per local expert its
// count and offset, then num_slots (the padding writers write the blocks' zero padding rows, the row
// senders slot_source and the fan-out copies).
void write_metadata(const Args& a, const Scratch& s, const PlanTables& plan, uint32_t num_slots, uint32_t used_rows) {
    const auto counts_out = tensor<kCounts>(a);
    const auto offsets_out = tensor<kOffsets>(a);
    volatile uint32_t* stage = s.stage_words();
    if (!a.streamed && used_rows) {
        noc_async_write(s.idx_image, tensor<kIdxMap>(a).get_noc_addr(0), used_rows * 4);
        noc_async_write(s.weight_image, tensor<kRowWeights>(a).get_noc_addr(0), used_rows * 2);
    }
    // Count and offset of local slot l staged in stage slots 2 (l % kTokenBatch) and + 1, a batch
    // of kTokenBatch experts behind one barrier.
    uint32_t local_slot = 0;
    for (uint32_t e = 0; e < a.num_experts && local_slot < a.local_experts; ++e) {
        if (plan.owner[e] != a.position) continue;
        const uint32_t in_batch = local_slot % kTokenBatch;
        moe_kernel::words(s.stage_slot(2 * in_batch))[0] = plan.kept[e];
        moe_kernel::words(s.stage_slot(2 * in_batch + 1))[0] = plan.offset[e];
        noc_async_write(s.stage_slot(2 * in_batch), counts_out.get_noc_addr(local_slot), 4);
        noc_async_write(s.stage_slot(2 * in_batch + 1), offsets_out.get_noc_addr(local_slot), 4);
        if (in_batch == kTokenBatch - 1) noc_async_write_barrier();
        ++local_slot;
    }
    noc_async_write_barrier();
    stage[0] = num_slots;
    noc_async_write(s.stage, tensor<kNumSlots>(a).get_noc_addr(0), 4);
    noc_async_write_barrier();
}

void write_status(const Args& a, const Scratch& s, const uint32_t* status) {
    for (uint32_t w = 0; w < kStatusWords; ++w) s.stage_words()[w] = status[w];
    noc_async_write(s.stage, tensor<kStatus>(a).get_noc_addr(0), kStatusWords * 4);
    noc_async_write_barrier();
}

}  // namespace

void kernel_main() {
    const Args args = read_args();
    const Scratch scratch = reserve_scratch(args);
    FabricLine line(args.line_size, args.position, sender_links(0, args.num_links, args.num_senders), args.route_arg(),
                    scratch.headers, args.max_payload);
    line.open(args.connection_arg());
    uint32_t status[kStatusWords];
    clear_status(status);
    PlanTables plan(scratch.tables, args.num_experts);

    gather_first_reads(args, scratch);
    const uint32_t line_experts = map_experts_to_line(args, plan, status);
    count_own_assignments(args, scratch, plan, line_experts, status);
    // No line barrier: the count pages are the first thing a member sends, and the rows go to a
    // peer only after its count page has come, when it runs this program (DESIGN.md). The lists
    // do not depend on the plan, so they follow the counts at once.
    send_counts(args, scratch, line, line_experts);
    send_assignment_lists(args, scratch, plan, line);
    receive_counts(args, scratch, line, line_experts);

    // The packing plan of the whole line.
    dispatch_plan::count_line_assignments(plan, args.num_experts, args.line_size, args.position,
                                          [&scratch](uint32_t q) { return scratch.counts_of(q); });
    dispatch_plan::lay_out_blocks(plan, args.num_experts, args.line_size, args.position, args.capacity, status);
    // The main core's padding writer (write_padding.cpp) may start.
    noc_semaphore_inc(get_noc_addr(get_semaphore(sem_plan)), 1);

    lay_out_send_plan(args, scratch, plan);
    ring_first_row(args, 1);
    send_own_share(args, scratch, line);
    // The walk needs only the lists, so it runs while the rows travel; streamed, its first pass also
    // does the fan-out copies, which need the rows.
    wait_for_lists(args, scratch, plan, line);
    if (args.streamed) wait_for_rows(args, line);
    const uint32_t used_rows = dispatch_plan::rows_in_blocks(plan, args.num_experts, args.position);
    const uint32_t num_slots = receive_assignments(args, scratch, plan, used_rows);
    ring_first_row(args, 2);
    const finish_share::Where finish = finish_where(args, scratch);
    finish_share::write_slot_pages(finish, tensor<kSlotSource>(args));
    write_metadata(args, scratch, plan, num_slots, used_rows);
    write_status(args, scratch, status);
    if (!args.streamed) wait_for_rows(args, line);
    ring_first_row(args, 3);
    // The main core's padding writer copies too (its start flag rings a second time).
    noc_semaphore_inc(get_noc_addr(get_semaphore(sem_plan)), 1);
    finish_share::copy_fanout_share(finish, tensor<kTokens>(args), 0, kCopiersPerCore * args.num_gather_cores);
    line.close();
}
