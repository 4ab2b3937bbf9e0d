// all_to_all_dispatch_dense: one data-movement kernel per device (core (0, 0)).
//
// 1. Reads expert_mapping into the owner position of each expert on this line (or
//    none) and each line expert's index among the line's experts (ascending e). An
//    owner's blocks follow its experts' ascending ids (their local slots).
// 2. Line barrier, then the counts exchange: this device's assignments per line
//    expert (one routing_counts page) go to page `position` of every line member.
// 3. Packing plan, identical on every member because it reads the same count pages:
//    per expert the assignments of the line (total) and of the sources before this
//    one (before); per destination, blocks in ascending local slot at tile-aligned
//    offsets, each keeping min(total, capacity - offset) rows. The row of assignment
//    (q, t, k) of expert e is offset[e] + its rank among e's assignments in
//    (q, t, k) order.
// 4. Send: each token row is read once and written once per destination device
//    that keeps one of its assignments, to the first such row (lowest k); rows for
//    this device go to all their rows over the NOC. Then each peer gets the list of
//    this device's assignments to its experts, (t, e, weight) in (t, k) order, into
//    routing_lists page `position`, and a flushed increment per link: "all my rows
//    landed". Token t's rows travel on link t % num_links; metadata on link 0.
// 5. Receive: after every peer's increment, walk the line's assignments to this
//    device (the lists, in source order), write token_idx_map / weights /
//    slot_source, and copy each remote token row from its first row to its other
//    rows on this device (fan-out).
// Counts and lists travel as fused write + increment packets (the routing-metadata
// traffic class), token rows as plain writes (the payload class).
//
// compile-time args: 14 interleaved accessors (IsDram|RuntimePageSize) in io order
//   x, topk_indices, topk_weights, expert_mapping, tokens, num_routed_tokens,
//   expert_offsets, token_idx_map, routed_token_weights, slot_source, num_slots,
//   dispatch_status, routing_counts, routing_lists
// named compile-time args: cb_row, cb_own, cb_counts, cb_list, cb_mapping, cb_tables,
//   cb_idx_image, cb_weight_image, cb_stage, cb_headers, sem_init, sem_counts,
//   sem_lists, sem_payload
// runtime args: 14 addresses, T, K, H, E, E_l, N, D, position, capacity, max packet
//   payload, mapping element bytes, num_links, D row-major device indices of the line, 2*D
//   route words (fabric_line.hpp), then the fabric connection block.
// conformance: kind=dataflow ct_args=130,130,130,130,130,130,130,130,130,130,130,130,130,130 named=cb_row:0,cb_own:1,cb_counts:2,cb_list:3,cb_mapping:4,cb_tables:5,cb_idx_image:6,cb_weight_image:7,cb_stage:8,cb_headers:9,sem_init:0,sem_counts:1,sem_lists:2,sem_payload:3 defines=ROUTING_MODE=137 label=1d
// conformance: kind=dataflow ct_args=130,130,130,130,130,130,130,130,130,130,130,130,130,130 named=cb_row:0,cb_own:1,cb_counts:2,cb_list:3,cb_mapping:4,cb_tables:5,cb_idx_image:6,cb_weight_image:7,cb_stage:8,cb_headers:9,sem_init:0,sem_counts:1,sem_lists:2,sem_payload:3 defines=ROUTING_MODE=162;FABRIC_2D=1 label=2d
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "../../common/dataflow/fabric_line.hpp"
#include "../../common/dataflow/scratch.hpp"
#include "../../common/l1_scratch.hpp"
#include "dispatch_plan.hpp"

namespace {

constexpr uint32_t kMaxTopK = 32;
}  // namespace

void kernel_main() {
    size_t arg = 0;
    const uint32_t x_addr = get_arg_val<uint32_t>(arg++);
    const uint32_t ids_addr = get_arg_val<uint32_t>(arg++);
    const uint32_t weights_addr = get_arg_val<uint32_t>(arg++);
    const uint32_t mapping_addr = get_arg_val<uint32_t>(arg++);
    const uint32_t tokens_addr = get_arg_val<uint32_t>(arg++);
    const uint32_t counts_addr = get_arg_val<uint32_t>(arg++);
    const uint32_t offsets_addr = get_arg_val<uint32_t>(arg++);
    const uint32_t idx_map_addr = get_arg_val<uint32_t>(arg++);
    const uint32_t row_weights_addr = get_arg_val<uint32_t>(arg++);
    const uint32_t slot_source_addr = get_arg_val<uint32_t>(arg++);
    const uint32_t num_slots_addr = get_arg_val<uint32_t>(arg++);
    const uint32_t status_addr = get_arg_val<uint32_t>(arg++);
    const uint32_t routing_counts_addr = get_arg_val<uint32_t>(arg++);
    const uint32_t routing_lists_addr = get_arg_val<uint32_t>(arg++);
    const uint32_t num_tokens = get_arg_val<uint32_t>(arg++);
    const uint32_t top_k = get_arg_val<uint32_t>(arg++);
    const uint32_t hidden = get_arg_val<uint32_t>(arg++);
    const uint32_t num_experts = get_arg_val<uint32_t>(arg++);
    const uint32_t local_experts = get_arg_val<uint32_t>(arg++);
    const uint32_t num_devices = get_arg_val<uint32_t>(arg++);
    const uint32_t line_size = get_arg_val<uint32_t>(arg++);
    const uint32_t position = get_arg_val<uint32_t>(arg++);
    const uint32_t capacity = get_arg_val<uint32_t>(arg++);
    const uint32_t max_payload = get_arg_val<uint32_t>(arg++);
    const uint32_t mapping_element_bytes = get_arg_val<uint32_t>(arg++);
    const uint32_t num_links = get_arg_val<uint32_t>(arg++);
    const size_t line_devices_arg = arg;
    const size_t route_arg = line_devices_arg + line_size;
    const size_t connection_arg = route_arg + 2 * line_size;

    constexpr uint32_t cb_row = get_named_compile_time_arg_val("cb_row");
    constexpr uint32_t cb_own = get_named_compile_time_arg_val("cb_own");
    constexpr uint32_t cb_counts = get_named_compile_time_arg_val("cb_counts");
    constexpr uint32_t cb_list = get_named_compile_time_arg_val("cb_list");
    constexpr uint32_t cb_mapping = get_named_compile_time_arg_val("cb_mapping");
    constexpr uint32_t cb_tables = get_named_compile_time_arg_val("cb_tables");
    constexpr uint32_t cb_idx_image = get_named_compile_time_arg_val("cb_idx_image");
    constexpr uint32_t cb_weight_image = get_named_compile_time_arg_val("cb_weight_image");
    constexpr uint32_t cb_stage = get_named_compile_time_arg_val("cb_stage");
    constexpr uint32_t cb_headers = get_named_compile_time_arg_val("cb_headers");
    constexpr uint32_t sem_init = get_named_compile_time_arg_val("sem_init");
    constexpr uint32_t sem_counts = get_named_compile_time_arg_val("sem_counts");
    constexpr uint32_t sem_lists = get_named_compile_time_arg_val("sem_lists");
    constexpr uint32_t sem_payload = get_named_compile_time_arg_val("sem_payload");

    constexpr auto x_args = TensorAccessorArgs<0>();
    constexpr auto ids_args = TensorAccessorArgs<x_args.next_compile_time_args_offset()>();
    constexpr auto weights_args = TensorAccessorArgs<ids_args.next_compile_time_args_offset()>();
    constexpr auto mapping_args = TensorAccessorArgs<weights_args.next_compile_time_args_offset()>();
    constexpr auto tokens_args = TensorAccessorArgs<mapping_args.next_compile_time_args_offset()>();
    constexpr auto counts_args = TensorAccessorArgs<tokens_args.next_compile_time_args_offset()>();
    constexpr auto offsets_args = TensorAccessorArgs<counts_args.next_compile_time_args_offset()>();
    constexpr auto idx_map_args = TensorAccessorArgs<offsets_args.next_compile_time_args_offset()>();
    constexpr auto row_weights_args = TensorAccessorArgs<idx_map_args.next_compile_time_args_offset()>();
    constexpr auto slot_source_args = TensorAccessorArgs<row_weights_args.next_compile_time_args_offset()>();
    constexpr auto num_slots_args = TensorAccessorArgs<slot_source_args.next_compile_time_args_offset()>();
    constexpr auto status_args = TensorAccessorArgs<num_slots_args.next_compile_time_args_offset()>();
    constexpr auto routing_counts_args = TensorAccessorArgs<status_args.next_compile_time_args_offset()>();
    constexpr auto routing_lists_args = TensorAccessorArgs<routing_counts_args.next_compile_time_args_offset()>();

    // Accessors take the DRAM-aligned page size (the bank stride of the pages).
    const uint32_t row_bytes = hidden * 2;
    const uint32_t tk = num_tokens * top_k;
    const auto x = TensorAccessor(x_args, x_addr, moe_kernel::align_up(row_bytes));
    const auto ids_in = TensorAccessor(ids_args, ids_addr, moe_kernel::align_up(top_k * 4));
    const auto weights_in = TensorAccessor(weights_args, weights_addr, moe_kernel::align_up(top_k * 2));
    const auto mapping = TensorAccessor(mapping_args, mapping_addr, moe_kernel::align_up(num_devices * mapping_element_bytes));
    const auto tokens = TensorAccessor(tokens_args, tokens_addr, moe_kernel::align_up(row_bytes));
    const auto counts_out = TensorAccessor(counts_args, counts_addr, moe_kernel::align_up(4));
    const auto offsets_out = TensorAccessor(offsets_args, offsets_addr, moe_kernel::align_up(4));
    const auto idx_map_out = TensorAccessor(idx_map_args, idx_map_addr, moe_kernel::align_up(capacity * 4));
    const auto row_weights_out = TensorAccessor(row_weights_args, row_weights_addr, moe_kernel::align_up(capacity * 2));
    const auto slot_source_out = TensorAccessor(slot_source_args, slot_source_addr, moe_kernel::align_up(8));
    const auto num_slots_out = TensorAccessor(num_slots_args, num_slots_addr, moe_kernel::align_up(4));
    const auto status_out = TensorAccessor(status_args, status_addr, moe_kernel::align_up(kStatusWords * 4));
    const auto routing_counts = TensorAccessor(routing_counts_args, routing_counts_addr, moe_kernel::align_up(num_experts * 4));
    const auto routing_lists = TensorAccessor(routing_lists_args, routing_lists_addr, moe_kernel::align_up(tk * 8));

    const uint32_t counts_page_bytes = moe_kernel::align_up(num_experts * 4);
    const uint32_t row_l1 = moe_scratch::reserve(cb_row, row_bytes);
    const uint32_t mapping_l1 = moe_scratch::reserve(cb_mapping, num_devices * mapping_element_bytes);
    // D pages of E words, this device's at `position`
    const uint32_t counts_l1 = moe_scratch::reserve(cb_counts, line_size * counts_page_bytes);
    const uint32_t list_l1 = moe_scratch::reserve(cb_list, tk * sizeof(ListEntry));
    const uint32_t stage_l1 = moe_scratch::reserve(cb_stage, kMaxTopK * 4);
    const uint32_t own_l1 = moe_scratch::reserve(cb_own, tk * 6);
    const uint32_t tables_l1 = moe_scratch::reserve(cb_tables, kPlanTables * num_experts * 4);
    const uint32_t idx_image_l1 = moe_scratch::reserve(cb_idx_image, capacity * 4);
    const uint32_t weight_image_l1 = moe_scratch::reserve(cb_weight_image, capacity * 2);
    const uint32_t headers_l1 = moe_scratch::reserve(cb_headers, sizeof(PACKET_HEADER_TYPE));
    volatile uint32_t* stage = reinterpret_cast<volatile uint32_t*>(stage_l1);
    volatile uint32_t* own_ids = reinterpret_cast<volatile uint32_t*>(own_l1);
    volatile uint16_t* own_weights = reinterpret_cast<volatile uint16_t*>(own_l1 + tk * 4);
    volatile ListEntry* list = reinterpret_cast<volatile ListEntry*>(list_l1);
    auto counts_of = [&](uint32_t q) {
        return reinterpret_cast<volatile uint32_t*>(counts_l1 + q * counts_page_bytes);
    };

    moe_fabric::FabricLine line(line_size, position, num_links, route_arg, headers_l1, max_payload);
    line.open(connection_arg);

    uint32_t status[kStatusWords] = {0, 0, 0, kNone, kNone, kNone, 0, kNone};

    // 1. expert -> owner position and line index from the one-hot mapping rows.
    PlanTables plan(tables_l1, num_experts);
    uint32_t experts_at[moe_fabric::kMaxLine] = {};
    uint32_t line_experts = 0;
    for (uint32_t e = 0; e < num_experts; ++e) {
        noc_async_read(mapping.get_noc_addr(e), mapping_l1, num_devices * mapping_element_bytes);
        noc_async_read_barrier();
        uint32_t ones = 0, owner_device = kNone, bad_values = 0;
        for (uint32_t n = 0; n < num_devices; ++n) {
            const uint32_t v = mapping_element_bytes == 2 ? reinterpret_cast<volatile uint16_t*>(mapping_l1)[n]
                                                          : reinterpret_cast<volatile uint32_t*>(mapping_l1)[n];
            if (v == 1) {
                ++ones;
                owner_device = n;
            } else if (v != 0) {
                ++bad_values;
            }
        }
        plan.owner[e] = kNone;
        plan.line_index[e] = kNone;
        if (ones != 1 || bad_values != 0) {
            if (status[kMappingErrors]++ == 0) status[kFirstBadExpert] = e;
            continue;
        }
        for (uint32_t q = 0; q < line_size; ++q) {
            if (get_arg_val<uint32_t>(line_devices_arg + q) == owner_device) {
                plan.owner[e] = q;
                plan.line_index[e] = line_experts++;
                ++experts_at[q];
            }
        }
    }
    if (experts_at[position] != local_experts) ++status[kMappingErrors];

    // This device's ids and weights, and its assignments per line expert.
    volatile uint32_t* own_counts = counts_of(position);
    for (uint32_t i = 0; i < line_experts; ++i) own_counts[i] = 0;
    for (uint32_t t = 0; t < num_tokens; ++t) {
        noc_async_read(ids_in.get_noc_addr(t), stage_l1, top_k * 4);
        noc_async_read_barrier();
        for (uint32_t k = 0; k < top_k; ++k) {
            const uint32_t id = stage[k];
            own_ids[t * top_k + k] = id;
            if (id >= num_experts) {
                if (status[kInvalidIds]++ == 0) {
                    status[kFirstInvalidToken] = t;
                    status[kFirstInvalidK] = k;
                    status[kFirstInvalidId] = id;
                }
            } else if (plan.owner[id] != kNone) {
                own_counts[plan.line_index[id]] += 1;
            }
        }
        noc_async_read(weights_in.get_noc_addr(t), stage_l1, top_k * 2);
        noc_async_read_barrier();
        for (uint32_t k = 0; k < top_k; ++k) own_weights[t * top_k + k] = reinterpret_cast<volatile uint16_t*>(stage_l1)[k];
    }

    // 2. Every member runs this program before anyone writes into another's buffers.
    moe_fabric::line_barrier(line, sem_init);
    const uint32_t counts_bytes = moe_kernel::align_up(line_experts * 4);
    const uint64_t counts_page_noc = routing_counts.get_noc_addr(position);
    const uint64_t sem_counts_noc = get_noc_addr(get_semaphore(sem_counts));
    for (uint32_t q = 0; q < line_size; ++q) {
        if (q != position) line.write_and_signal(q, counts_l1 + position * counts_page_bytes, counts_page_noc,
                                                 counts_bytes, sem_counts_noc);
    }
    moe_fabric::wait_for_line(line, sem_counts, line.packets_for(counts_bytes));
    for (uint32_t q = 0; q < line_size; ++q) {
        if (q != position) noc_async_read(routing_counts.get_noc_addr(q), counts_l1 + q * counts_page_bytes, counts_bytes);
    }
    noc_async_read_barrier();

    // 3. Packing plan of the whole line.
    count_line_assignments(plan, num_experts, line_size, position, counts_of);
    lay_out_blocks(plan, num_experts, line_size, position, capacity, status);

    // 4. Send this device's token rows, then its assignment lists.
    uint32_t first_row_at[moe_fabric::kMaxLine];
    uint32_t local_rows[kMaxTopK];
    for (uint32_t t = 0; t < num_tokens; ++t) {
        bool any = false;
        uint32_t num_local = 0;
        for (uint32_t q = 0; q < line_size; ++q) first_row_at[q] = kNone;
        for (uint32_t k = 0; k < top_k; ++k) {
            const uint32_t e = own_ids[t * top_k + k];
            if (!plan.in_line(e, num_experts)) continue;
            const uint32_t rank = plan.before[e] + plan.running[e]++;
            if (rank >= plan.kept[e]) continue;
            const uint32_t row = plan.offset[e] + rank;
            const uint32_t d = plan.owner[e];
            any = true;
            if (d == position) {
                local_rows[num_local++] = row;
            } else if (first_row_at[d] == kNone) {
                first_row_at[d] = row;
            }
        }
        if (!any) continue;
        noc_async_read(x.get_noc_addr(t), row_l1, row_bytes);
        noc_async_read_barrier();
        for (uint32_t i = 0; i < num_local; ++i) noc_async_write(row_l1, tokens.get_noc_addr(local_rows[i]), row_bytes);
        for (uint32_t q = 0; q < line_size; ++q) {  // tokens take turns on the links
            if (first_row_at[q] != kNone) {
                line.write(q, row_l1, tokens.get_noc_addr(first_row_at[q]), row_bytes, t % num_links);
            }
        }
        noc_async_writes_flushed();  // row_l1 is refilled by the next token
    }
    const uint64_t list_page_noc = routing_lists.get_noc_addr(position);
    const uint64_t sem_lists_noc = get_noc_addr(get_semaphore(sem_lists));
    const uint64_t sem_payload_noc = get_noc_addr(get_semaphore(sem_payload));
    for (uint32_t q = 0; q < line_size; ++q) {
        if (q == position) continue;
        uint32_t n = 0;
        for (uint32_t i = 0; i < tk; ++i) {
            const uint32_t e = own_ids[i];
            if (!plan.in_line(e, num_experts) || plan.owner[e] != q) continue;
            list[n].token = i / top_k;
            list[n].expert_and_weight = e | static_cast<uint32_t>(own_weights[i]) << 16;
            ++n;
        }
        if (n) line.write_and_signal(q, list_l1, list_page_noc, n * sizeof(ListEntry), sem_lists_noc);
        for (uint32_t link = 0; link < num_links; ++link) line.atomic_inc(q, sem_payload_noc, link);
    }
    noc_async_write_barrier();

    // 5. Receive: every peer's rows and lists have landed (a flushed increment per link).
    moe_fabric::wait_for_line(line, sem_payload, num_links);
    uint32_t list_packets = 0;
    for (uint32_t q = 0; q < line_size; ++q) {
        if (q == position) continue;
        uint32_t n = 0;
        for (uint32_t e = 0; e < num_experts; ++e) {
            if (plan.owner[e] == position) n += counts_of(q)[plan.line_index[e]];
        }
        if (n) list_packets += line.packets_for(n * sizeof(ListEntry));
    }
    noc_semaphore_wait(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_lists)), list_packets);

    volatile uint32_t* idx_image = reinterpret_cast<volatile uint32_t*>(idx_image_l1);
    volatile uint16_t* weight_image = reinterpret_cast<volatile uint16_t*>(weight_image_l1);
    moe_kernel::fill_words(idx_image_l1, capacity, 0);
    for (uint32_t r = 0; r < capacity; ++r) weight_image[r] = 0;
    for (uint32_t e = 0; e < num_experts; ++e) plan.running[e] = 0;
    uint32_t num_slots = 0;
    uint32_t rows[kMaxTopK];
    uint32_t num_rows = 0;
    // Closes the (q, t) pair whose kept rows are rows[0..num_rows): its slot, and the fan-out
    // of a remote token row from its first row.
    auto close_pair = [&](uint32_t q, uint32_t t) {
        if (num_rows == 0) return;
        const uint32_t slot = num_slots++;
        for (uint32_t i = 0; i < num_rows; ++i) idx_image[rows[i]] = slot;
        stage[0] = q;
        stage[1] = t;
        noc_async_write(stage_l1, slot_source_out.get_noc_addr(slot), 8);
        noc_async_writes_flushed();
        if (q != position && num_rows > 1) {
            noc_async_read(tokens.get_noc_addr(rows[0]), row_l1, row_bytes);
            noc_async_read_barrier();
            for (uint32_t i = 1; i < num_rows; ++i) noc_async_write(row_l1, tokens.get_noc_addr(rows[i]), row_bytes);
            noc_async_writes_flushed();
        }
        num_rows = 0;
    };
    auto take = [&](uint32_t e, uint16_t weight) {
        const uint32_t rank = plan.running[e]++;
        if (rank >= plan.kept[e]) return;
        rows[num_rows] = plan.offset[e] + rank;
        weight_image[rows[num_rows]] = weight;
        ++num_rows;
    };
    for (uint32_t q = 0; q < line_size; ++q) {
        if (q == position) {
            for (uint32_t t = 0; t < num_tokens; ++t) {
                for (uint32_t k = 0; k < top_k; ++k) {
                    const uint32_t e = own_ids[t * top_k + k];
                    if (plan.in_line(e, num_experts) && plan.owner[e] == position) take(e, own_weights[t * top_k + k]);
                }
                close_pair(q, t);
            }
            continue;
        }
        uint32_t n = 0;
        for (uint32_t e = 0; e < num_experts; ++e) {
            if (plan.owner[e] == position) n += counts_of(q)[plan.line_index[e]];
        }
        if (n == 0) continue;
        noc_async_read(routing_lists.get_noc_addr(q), list_l1, n * sizeof(ListEntry));
        noc_async_read_barrier();
        uint32_t token = list[0].token;
        for (uint32_t i = 0; i < n; ++i) {
            if (list[i].token != token) {
                close_pair(q, token);
                token = list[i].token;
            }
            take(list[i].expert_and_weight & 0xFFFF, static_cast<uint16_t>(list[i].expert_and_weight >> 16));
        }
        close_pair(q, token);
    }

    // Metadata outputs.
    stage[0] = 0;
    stage[1] = 0;
    for (uint32_t s = num_slots; s < capacity; ++s) noc_async_write(stage_l1, slot_source_out.get_noc_addr(s), 8);
    noc_async_write_barrier();
    noc_async_write(idx_image_l1, idx_map_out.get_noc_addr(0), capacity * 4);
    noc_async_write(weight_image_l1, row_weights_out.get_noc_addr(0), capacity * 2);
    moe_kernel::fill_words(row_l1, row_bytes / 4, 0);  // zero row for the padding of each block
    uint32_t local_slot = 0;
    for (uint32_t e = 0; e < num_experts && local_slot < local_experts; ++e) {
        if (plan.owner[e] != position) continue;
        stage[0] = plan.kept[e];
        noc_async_write(stage_l1, counts_out.get_noc_addr(local_slot), 4);
        noc_async_write_barrier();
        stage[0] = plan.offset[e];
        noc_async_write(stage_l1, offsets_out.get_noc_addr(local_slot), 4);
        noc_async_write_barrier();
        const uint32_t block_end = plan.offset[e] + round_up_tile(plan.kept[e]);
        for (uint32_t r = plan.offset[e] + plan.kept[e]; r < block_end; ++r) {
            noc_async_write(row_l1, tokens.get_noc_addr(r), row_bytes);
        }
        ++local_slot;
    }
    stage[0] = num_slots;
    noc_async_write(stage_l1, num_slots_out.get_noc_addr(0), 4);
    noc_async_write_barrier();
    for (uint32_t w = 0; w < kStatusWords; ++w) stage[w] = status[w];
    noc_async_write(stage_l1, status_out.get_noc_addr(0), kStatusWords * 4);
    noc_async_write_barrier();
    line.close();
}
