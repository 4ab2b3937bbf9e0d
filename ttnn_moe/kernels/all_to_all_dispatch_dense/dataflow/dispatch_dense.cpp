// all_to_all_dispatch_dense: one data-movement kernel per device (core (0, 0)).
//
// 1. Reads expert_mapping into the owner position of each expert on this line (or
//    none); an owner's blocks follow its experts' ascending ids (their local slots).
// 2. Line barrier, then routing-metadata exchange: this device's ids and weights
//    (one routing_metadata page) go to page `position` of every line member as
//    fused write + increment packets (the metadata traffic class).
// 3. Packing plan, identical on every member because it reads the same pages in
//    the same order: per expert the rows of the line (total) and of the sources
//    before this one (before); per destination, blocks in ascending local slot at
//    tile-aligned offsets, each keeping min(total, capacity - offset) rows.
//    The row of assignment (q, t, k) of expert e is offset[e] + its rank among
//    e's assignments in (q, t, k) order.
// 4. Send: each token row is read once and written once per destination device
//    that keeps one of its assignments, to the first such row (lowest k); rows
//    for this device go to all their rows over the NOC. A flushed increment per
//    peer says "all my rows have landed".
// 5. Receive: after every peer's increment, walk the line's assignments again,
//    write token_idx_map / weights / slot_source, and copy each remote token row
//    from its first row to its other rows on this device (fan-out).
//
// compile-time args: 13 interleaved accessors (IsDram|RuntimePageSize) in io order
//   x, topk_indices, topk_weights, expert_mapping, tokens, num_routed_tokens,
//   expert_offsets, token_idx_map, routed_token_weights, slot_source, num_slots,
//   dispatch_status, routing_metadata
// named compile-time args: cb_row, cb_own_meta, cb_line_meta, cb_mapping, cb_tables,
//   cb_idx_image, cb_weight_image, cb_stage, cb_headers, sem_init, sem_metadata, sem_payload
// runtime args: 13 addresses, T, K, H, E, E_l, N, D, position, device index,
//   capacity, max packet payload, mapping element bytes, metadata page bytes,
//   D row-major device indices of the line, 2*D route words (fabric_line.hpp),
//   then the fabric connection block.
// conformance: kind=dataflow ct_args=130,130,130,130,130,130,130,130,130,130,130,130,130 named=cb_row:0,cb_own_meta:1,cb_line_meta:2,cb_mapping:3,cb_tables:4,cb_idx_image:5,cb_weight_image:6,cb_stage:7,cb_headers:8,sem_init:0,sem_metadata:1,sem_payload:2 defines=ROUTING_MODE=137 label=1d
// conformance: kind=dataflow ct_args=130,130,130,130,130,130,130,130,130,130,130,130,130 named=cb_row:0,cb_own_meta:1,cb_line_meta:2,cb_mapping:3,cb_tables:4,cb_idx_image:5,cb_weight_image:6,cb_stage:7,cb_headers:8,sem_init:0,sem_metadata:1,sem_payload:2 defines=ROUTING_MODE=162;FABRIC_2D=1 label=2d
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "../../common/dataflow/fabric_line.hpp"

namespace {

constexpr uint32_t kNone = 0xFFFFFFFFu;
constexpr uint32_t kTile = 32;
constexpr uint32_t kMaxTopK = 32;
constexpr uint32_t kDramAlignment = 32;  // Wormhole

enum StatusWord : uint32_t {
    kDroppedRows, kNeededRows, kInvalidIds, kFirstInvalidToken, kFirstInvalidK, kFirstInvalidId,
    kMappingErrors, kFirstBadExpert, kStatusWords,
};

uint32_t round_up_tile(uint32_t rows) { return (rows + kTile - 1) / kTile * kTile; }
uint32_t align_dram(uint32_t bytes) { return (bytes + kDramAlignment - 1) / kDramAlignment * kDramAlignment; }

void fill_words(uint32_t l1_addr, uint32_t count, uint32_t value) {
    volatile uint32_t* words = reinterpret_cast<volatile uint32_t*>(l1_addr);
    for (uint32_t i = 0; i < count; ++i) words[i] = value;
}

// Per-expert plan tables in one L1 block of 6 * E words.
struct PlanTables {
    volatile uint32_t* owner;    // position of the owning device on this line, or kNone
    volatile uint32_t* before;   // assignments from sources before this one
    volatile uint32_t* total;    // assignments from the whole line
    volatile uint32_t* running;  // running rank while walking assignments
    volatile uint32_t* offset;   // first row of the expert's block on its owner
    volatile uint32_t* kept;     // rows of the block that fit the capacity
    PlanTables(uint32_t l1, uint32_t e) {
        volatile uint32_t* base = reinterpret_cast<volatile uint32_t*>(l1);
        owner = base; before = base + e; total = base + 2 * e;
        running = base + 3 * e; offset = base + 4 * e; kept = base + 5 * e;
    }
};

// One line member's routing metadata page: T*K ids (uint32) then T*K weights (bf16 bits).
struct MetaPage {
    volatile uint32_t* ids;
    volatile uint16_t* weights;
    MetaPage(uint32_t l1, uint32_t tk)
        : ids(reinterpret_cast<volatile uint32_t*>(l1)), weights(reinterpret_cast<volatile uint16_t*>(l1 + tk * 4)) {}
};

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
    const uint32_t metadata_addr = get_arg_val<uint32_t>(arg++);
    const uint32_t num_tokens = get_arg_val<uint32_t>(arg++);
    const uint32_t top_k = get_arg_val<uint32_t>(arg++);
    const uint32_t hidden = get_arg_val<uint32_t>(arg++);
    const uint32_t num_experts = get_arg_val<uint32_t>(arg++);
    const uint32_t local_experts = get_arg_val<uint32_t>(arg++);
    const uint32_t num_devices = get_arg_val<uint32_t>(arg++);
    const uint32_t line_size = get_arg_val<uint32_t>(arg++);
    const uint32_t position = get_arg_val<uint32_t>(arg++);
    const uint32_t device_index = get_arg_val<uint32_t>(arg++);
    const uint32_t capacity = get_arg_val<uint32_t>(arg++);
    const uint32_t max_payload = get_arg_val<uint32_t>(arg++);
    const uint32_t mapping_element_bytes = get_arg_val<uint32_t>(arg++);
    const uint32_t meta_bytes = get_arg_val<uint32_t>(arg++);
    const size_t line_devices_arg = arg;
    const size_t route_arg = line_devices_arg + line_size;
    const size_t connection_arg = route_arg + 2 * line_size;

    constexpr uint32_t cb_row = get_named_compile_time_arg_val("cb_row");
    constexpr uint32_t cb_own_meta = get_named_compile_time_arg_val("cb_own_meta");
    constexpr uint32_t cb_line_meta = get_named_compile_time_arg_val("cb_line_meta");
    constexpr uint32_t cb_mapping = get_named_compile_time_arg_val("cb_mapping");
    constexpr uint32_t cb_tables = get_named_compile_time_arg_val("cb_tables");
    constexpr uint32_t cb_idx_image = get_named_compile_time_arg_val("cb_idx_image");
    constexpr uint32_t cb_weight_image = get_named_compile_time_arg_val("cb_weight_image");
    constexpr uint32_t cb_stage = get_named_compile_time_arg_val("cb_stage");
    constexpr uint32_t cb_headers = get_named_compile_time_arg_val("cb_headers");
    constexpr uint32_t sem_init = get_named_compile_time_arg_val("sem_init");
    constexpr uint32_t sem_metadata = get_named_compile_time_arg_val("sem_metadata");
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
    constexpr auto metadata_args = TensorAccessorArgs<status_args.next_compile_time_args_offset()>();

    // Accessors take the DRAM-aligned page size (the bank stride of the pages).
    const uint32_t row_bytes = hidden * 2;
    const auto x = TensorAccessor(x_args, x_addr, align_dram(row_bytes));
    const auto ids_in = TensorAccessor(ids_args, ids_addr, align_dram(top_k * 4));
    const auto weights_in = TensorAccessor(weights_args, weights_addr, align_dram(top_k * 2));
    const auto mapping = TensorAccessor(mapping_args, mapping_addr, align_dram(num_devices * mapping_element_bytes));
    const auto tokens = TensorAccessor(tokens_args, tokens_addr, align_dram(row_bytes));
    const auto counts_out = TensorAccessor(counts_args, counts_addr, align_dram(4));
    const auto offsets_out = TensorAccessor(offsets_args, offsets_addr, align_dram(4));
    const auto idx_map_out = TensorAccessor(idx_map_args, idx_map_addr, align_dram(capacity * 4));
    const auto row_weights_out = TensorAccessor(row_weights_args, row_weights_addr, align_dram(capacity * 2));
    const auto slot_source_out = TensorAccessor(slot_source_args, slot_source_addr, align_dram(8));
    const auto num_slots_out = TensorAccessor(num_slots_args, num_slots_addr, align_dram(4));
    const auto status_out = TensorAccessor(status_args, status_addr, align_dram(kStatusWords * 4));
    const auto metadata = TensorAccessor(metadata_args, metadata_addr, align_dram(meta_bytes));

    for (uint32_t cb : {cb_row, cb_own_meta, cb_line_meta, cb_mapping, cb_tables, cb_idx_image, cb_weight_image,
                        cb_stage, cb_headers}) {
        cb_reserve_back(cb, 1);
    }
    const uint32_t row_l1 = get_write_ptr(cb_row);
    const uint32_t own_meta_l1 = get_write_ptr(cb_own_meta);
    const uint32_t line_meta_l1 = get_write_ptr(cb_line_meta);
    const uint32_t mapping_l1 = get_write_ptr(cb_mapping);
    const uint32_t stage_l1 = get_write_ptr(cb_stage);
    volatile uint32_t* stage = reinterpret_cast<volatile uint32_t*>(stage_l1);

    moe_fabric::FabricLine line(line_size, position, route_arg, get_write_ptr(cb_headers), max_payload);
    line.open(connection_arg);

    uint32_t status[kStatusWords] = {0, 0, 0, kNone, kNone, kNone, 0, kNone};

    // 1. expert -> owner position from the one-hot mapping rows.
    PlanTables plan(get_write_ptr(cb_tables), num_experts);
    uint32_t experts_at[moe_fabric::kMaxLine] = {};
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
        if (ones != 1 || bad_values != 0) {
            if (status[kMappingErrors]++ == 0) status[kFirstBadExpert] = e;
            continue;
        }
        for (uint32_t q = 0; q < line_size; ++q) {
            if (get_arg_val<uint32_t>(line_devices_arg + q) == owner_device) {
                plan.owner[e] = q;
                ++experts_at[q];
            }
        }
    }
    if (experts_at[position] != local_experts) ++status[kMappingErrors];

    // This device's ids and weights, packed into its routing-metadata page.
    const uint32_t tk = num_tokens * top_k;
    MetaPage own(own_meta_l1, tk);
    for (uint32_t t = 0; t < num_tokens; ++t) {
        noc_async_read(ids_in.get_noc_addr(t), stage_l1, top_k * 4);
        noc_async_read_barrier();
        for (uint32_t k = 0; k < top_k; ++k) {
            const uint32_t id = stage[k];
            own.ids[t * top_k + k] = id;
            if (id >= num_experts && status[kInvalidIds]++ == 0) {
                status[kFirstInvalidToken] = t;
                status[kFirstInvalidK] = k;
                status[kFirstInvalidId] = id;
            }
        }
        noc_async_read(weights_in.get_noc_addr(t), stage_l1, top_k * 2);
        noc_async_read_barrier();
        for (uint32_t k = 0; k < top_k; ++k) own.weights[t * top_k + k] = reinterpret_cast<volatile uint16_t*>(stage_l1)[k];
    }

    // 2. Every member runs this program before anyone writes into another's buffers.
    moe_fabric::line_barrier(line, sem_init);
    const uint64_t meta_page_noc = metadata.get_noc_addr(position);
    noc_async_write(own_meta_l1, meta_page_noc, meta_bytes);
    const uint64_t sem_metadata_noc = get_noc_addr(get_semaphore(sem_metadata));
    for (uint32_t q = 0; q < line_size; ++q) {
        if (q != position) line.write_and_signal(q, own_meta_l1, meta_page_noc, meta_bytes, sem_metadata_noc);
    }
    noc_async_write_barrier();
    moe_fabric::wait_for_line(line, sem_metadata, line.packets_for(meta_bytes));

    // Page of line member q: this device's own from L1, the others read from routing_metadata.
    auto load_page = [&](uint32_t q) -> MetaPage {
        if (q == position) return own;
        noc_async_read(metadata.get_noc_addr(q), line_meta_l1, meta_bytes);
        noc_async_read_barrier();
        return MetaPage(line_meta_l1, tk);
    };

    // 3. Packing plan of the whole line.
    for (uint32_t e = 0; e < num_experts; ++e) plan.before[e] = plan.total[e] = plan.running[e] = 0;
    for (uint32_t q = 0; q < line_size; ++q) {
        const MetaPage page = load_page(q);
        for (uint32_t i = 0; i < tk; ++i) {
            const uint32_t e = page.ids[i];
            if (e >= num_experts || plan.owner[e] == kNone) continue;
            plan.total[e] += 1;
            if (q < position) plan.before[e] += 1;
        }
    }
    for (uint32_t d = 0; d < line_size; ++d) {
        uint32_t next_row = 0, needed = 0;
        for (uint32_t e = 0; e < num_experts; ++e) {
            if (plan.owner[e] != d) continue;
            const uint32_t room = capacity - next_row;
            plan.offset[e] = next_row;
            plan.kept[e] = plan.total[e] < room ? plan.total[e] : room;
            next_row += round_up_tile(plan.kept[e]);
            needed += round_up_tile(plan.total[e]);
            if (d == position) status[kDroppedRows] += plan.total[e] - plan.kept[e];
        }
        if (d == position) status[kNeededRows] = needed;
    }

    // 4. Send this device's token rows.
    uint32_t first_row_at[moe_fabric::kMaxLine];
    uint32_t local_rows[kMaxTopK];
    for (uint32_t t = 0; t < num_tokens; ++t) {
        bool any = false;
        uint32_t num_local = 0;
        for (uint32_t q = 0; q < line_size; ++q) first_row_at[q] = kNone;
        for (uint32_t k = 0; k < top_k; ++k) {
            const uint32_t e = own.ids[t * top_k + k];
            if (e >= num_experts || plan.owner[e] == kNone) continue;
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
        for (uint32_t q = 0; q < line_size; ++q) {
            if (first_row_at[q] != kNone) line.write(q, row_l1, tokens.get_noc_addr(first_row_at[q]), row_bytes);
        }
        noc_async_writes_flushed();  // row_l1 is refilled by the next token
    }
    const uint64_t sem_payload_noc = get_noc_addr(get_semaphore(sem_payload));
    for (uint32_t q = 0; q < line_size; ++q) {
        if (q != position) line.atomic_inc(q, sem_payload_noc);
    }
    noc_async_write_barrier();

    // 5. Receive: every peer's rows have landed.
    moe_fabric::wait_for_line(line, sem_payload);
    const uint32_t idx_image_l1 = get_write_ptr(cb_idx_image);
    const uint32_t weight_image_l1 = get_write_ptr(cb_weight_image);
    volatile uint32_t* idx_image = reinterpret_cast<volatile uint32_t*>(idx_image_l1);
    volatile uint16_t* weight_image = reinterpret_cast<volatile uint16_t*>(weight_image_l1);
    fill_words(idx_image_l1, capacity, 0);
    for (uint32_t r = 0; r < capacity; ++r) weight_image[r] = 0;
    for (uint32_t e = 0; e < num_experts; ++e) plan.running[e] = 0;
    uint32_t num_slots = 0;
    uint32_t rows[kMaxTopK];
    for (uint32_t q = 0; q < line_size; ++q) {
        const MetaPage page = load_page(q);
        for (uint32_t t = 0; t < num_tokens; ++t) {
            uint32_t n = 0;
            for (uint32_t k = 0; k < top_k; ++k) {
                const uint32_t e = page.ids[t * top_k + k];
                if (e >= num_experts || plan.owner[e] != position) continue;
                const uint32_t rank = plan.running[e]++;
                if (rank >= plan.kept[e]) continue;
                rows[n] = plan.offset[e] + rank;
                weight_image[rows[n]] = page.weights[t * top_k + k];
                ++n;
            }
            if (n == 0) continue;
            const uint32_t slot = num_slots++;
            for (uint32_t i = 0; i < n; ++i) idx_image[rows[i]] = slot;
            stage[0] = q;
            stage[1] = t;
            noc_async_write(stage_l1, slot_source_out.get_noc_addr(slot), 8);
            noc_async_writes_flushed();
            if (q != position && n > 1) {
                noc_async_read(tokens.get_noc_addr(rows[0]), row_l1, row_bytes);
                noc_async_read_barrier();
                for (uint32_t i = 1; i < n; ++i) noc_async_write(row_l1, tokens.get_noc_addr(rows[i]), row_bytes);
                noc_async_writes_flushed();
            }
        }
    }

    // Metadata outputs.
    stage[0] = 0;
    stage[1] = 0;
    for (uint32_t s = num_slots; s < capacity; ++s) noc_async_write(stage_l1, slot_source_out.get_noc_addr(s), 8);
    noc_async_write_barrier();
    noc_async_write(idx_image_l1, idx_map_out.get_noc_addr(0), capacity * 4);
    noc_async_write(weight_image_l1, row_weights_out.get_noc_addr(0), capacity * 2);
    fill_words(row_l1, row_bytes / 4, 0);  // zero row for the padding of each block
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
