// The packing plan of all_to_all_dispatch_dense, computed identically by every device
// of a dispatch line from the same per-expert assignment counts (see dispatch_dense.cpp).
#pragma once

#include <cstdint>

#include "../../../cpp/ops/all_to_all_dispatch_dense/all_to_all_dispatch_dense_shared.hpp"

namespace dispatch_plan {

using namespace ttnn_moe::all_to_all_dispatch_dense_shared;

inline uint32_t round_up_tile(uint32_t rows) {
    return (rows + kTile - 1) / kTile * kTile;
}

// Per-expert plan tables in one L1 block of kPlanTables * E words.
struct PlanTables {
    volatile uint32_t* owner;       // position of the owning device on this line, or kNone
    volatile uint32_t* line_index;  // index among the line's experts (ascending e), or kNone
    volatile uint32_t* before;      // assignments from sources before this one
    volatile uint32_t* total;       // assignments from the whole line
    volatile uint32_t* running;     // running rank while walking assignments
    volatile uint32_t* offset;      // first row of the expert's block on its owner
    volatile uint32_t* kept;        // rows of the block that fit the capacity
    PlanTables(uint32_t l1, uint32_t e) {
        volatile uint32_t* base = reinterpret_cast<volatile uint32_t*>(l1);
        owner = base;
        line_index = base + e;
        before = base + 2 * e;
        total = base + 3 * e;
        running = base + 4 * e;
        offset = base + 5 * e;
        kept = base + 6 * e;
    }
    bool in_line(uint32_t e, uint32_t num_experts) const { return e < num_experts && owner[e] != kNone; }
};

// One assignment in a routing list: token, expert, routing weight (bf16 bits).
struct ListEntry {
    uint32_t token;
    uint32_t expert_and_weight;  // expert | weight << kListExpertBits
    static uint32_t pack(uint32_t expert, uint16_t weight) {
        return expert | static_cast<uint32_t>(weight) << kListExpertBits;
    }
    uint32_t expert() const volatile { return expert_and_weight & ((1u << kListExpertBits) - 1); }
    uint16_t weight() const volatile { return static_cast<uint16_t>(expert_and_weight >> kListExpertBits); }
};
static_assert(sizeof(ListEntry) == kListEntryBytes);

// total[e]: assignments of the whole line to expert e; before[e]: those from positions
// before `position`. counts_of(q)[line_index[e]] = position q's assignments to e.
template <typename CountsOf>
inline void count_line_assignments(PlanTables& plan, uint32_t num_experts, uint32_t line_size, uint32_t position,
                                   const CountsOf& counts_of) {
    for (uint32_t e = 0; e < num_experts; ++e) {
        plan.before[e] = plan.total[e] = plan.running[e] = 0;
        if (!plan.in_line(e, num_experts)) continue;
        for (uint32_t q = 0; q < line_size; ++q) {
            const uint32_t c = counts_of(q)[plan.line_index[e]];
            plan.total[e] += c;
            if (q < position) plan.before[e] += c;
        }
    }
}

// Blocks of every destination: its experts in ascending id (local slot) at tile-aligned
// offsets, each keeping min(total, capacity - offset) rows. Records this device's
// dropped and needed rows in status.
inline void lay_out_blocks(PlanTables& plan, uint32_t num_experts, uint32_t line_size, uint32_t position,
                           uint32_t capacity, uint32_t* status) {
    // Experts off the line get an empty block, so the tables the padding writers copy whole are
    // defined everywhere.
    for (uint32_t e = 0; e < num_experts; ++e) {
        if (plan.owner[e] >= line_size) plan.offset[e] = plan.kept[e] = 0;
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
}

// Rows of this device's blocks (the end of its last one): every row past them is unused, and neither
// dispatch nor its consumers touch it, so no part of the op scales with the capacity.
inline uint32_t rows_in_blocks(const PlanTables& plan, uint32_t num_experts, uint32_t position) {
    uint32_t end = 0;
    for (uint32_t e = 0; e < num_experts; ++e) {
        if (plan.owner[e] != position) continue;
        const uint32_t block_end = plan.offset[e] + round_up_tile(plan.kept[e]);
        if (block_end > end) end = block_end;
    }
    return end;
}

}  // namespace dispatch_plan
