// Sending one share of this device's token rows (all_to_all_dispatch_dense): what the main kernel
// (dispatch_dense.cpp, sender 0) and each row sender (send_rows.cpp) run over their own fabric link.
//
// A sender walks its tokens in order with its slice of the send plan (send_plan layout in
// all_to_all_dispatch_dense_shared.hpp): the row the next assignment to expert e from this device
// takes, and the end of e's kept rows. Each token row is read from x once and written to all its
// kept rows on this device (NOC) and to its first kept row (lowest k) on every remote destination
// (fabric; the share's tokens take turns on the sender's links). The ids are read from the main
// core's cb_own (gathered there first) or, when the tables stream, from their DRAM copy,
// kTokenBatch tokens at a time; a row is read into one of two buffers while the previous
// token's row is sent from the other. Afterwards one increment per peer and link on the main
// core's sem_payload, behind the rows of that link: "my rows landed".
#pragma once

#include <cstdint>

#include "../../../cpp/ops/all_to_all_dispatch_dense/all_to_all_dispatch_dense_shared.hpp"
#include "../../common/dataflow/fabric_line.hpp"
#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"

namespace row_sender {

using namespace ttnn_moe::all_to_all_dispatch_dense_shared;

// A sender's view of the send plan, in its core's L1.
struct SendPlan {
    volatile uint32_t* owner;     // owner position of each expert, or kNone
    volatile uint32_t* end_row;   // end of each expert's kept rows
    volatile uint32_t* next_row;  // the row this sender's next assignment to each expert takes
    SendPlan(uint32_t l1, uint32_t num_experts, uint32_t sender) {
        volatile uint32_t* base = moe_kernel::words(l1);
        owner = base;
        end_row = base + num_experts;
        next_row = base + (kSendPlanFixedTables + sender) * num_experts;
    }
};

// Rows of one token's kept assignments: those on this device, and per remote position the
// first one (lowest k), else kNone.
struct TokenRows {
    uint32_t t, buffer;
    bool any;
    uint32_t num_local;
    uint32_t local[kMaxTopK];
    uint32_t first_at[moe_fabric::kMaxLineDevices];
};

struct Share {
    uint32_t first_token, end_token;
    uint32_t top_k, num_experts, hidden, position;
    uint32_t row_bytes() const { return hidden * 2; }
};

// L1 the sender works in: room for kTokenBatch tokens' ids, two row buffers.
struct Buffers {
    uint32_t ids;
    uint32_t rows;
    uint32_t row_stride;
};

inline void find_rows(const Share& share, const SendPlan& plan, const volatile uint32_t* ids, TokenRows& rows) {
    rows.any = false;
    rows.num_local = 0;
    for (uint32_t q = 0; q < moe_fabric::kMaxLineDevices; ++q) rows.first_at[q] = kNone;
    for (uint32_t k = 0; k < share.top_k; ++k) {
        const uint32_t e = ids[k];
        if (e >= share.num_experts || plan.owner[e] == kNone) continue;
        const uint32_t row = plan.next_row[e]++;
        if (row >= plan.end_row[e]) continue;
        const uint32_t d = plan.owner[e];
        rows.any = true;
        if (d == share.position) {
            rows.local[rows.num_local++] = row;
        } else if (rows.first_at[d] == kNone) {
            rows.first_at[d] = row;
        }
    }
}

template <typename Tokens>
void send_token_row(const Share& share, moe_fabric::FabricLine& line, const Tokens& tokens, const TokenRows& r) {
    for (uint32_t i = 0; i < r.num_local; ++i) {
        noc_async_write(r.buffer, tokens.get_noc_addr(r.local[i]), share.row_bytes());
    }
    for (uint32_t q = 0; q < line.line_size(); ++q) {
        if (r.first_at[q] == kNone) continue;
        line.write(q, r.buffer, tokens.get_noc_addr(r.first_at[q]), share.row_bytes(),
                   (r.t - share.first_token) % line.num_links());
    }
    noc_async_writes_flushed();
}

// The share's rows, then one increment of sem_payload per link on the main core of every peer.
template <typename X, typename Tokens>
void send_share(const Share& share, const X& x, const Tokens& tokens, moe_fabric::FabricLine& line,
                const SendPlan& plan, const Buffers& b, uint64_t own_ids_noc, uint32_t ids_alignment,
                uint32_t main_sem_payload_l1, uint32_t main_noc_x, uint32_t main_noc_y) {
    TokenRows reads[2];
    uint32_t next = 0;
    bool has_pending = false;
    for (uint32_t first = share.first_token; first < share.end_token; first += kTokenBatch) {
        const uint32_t batch = share.end_token - first < kTokenBatch ? share.end_token - first : kTokenBatch;
        // From the ids_alignment boundary below the batch's first id: both sides of a NOC read
        // agree modulo that alignment.
        const uint64_t src = own_ids_noc + first * share.top_k * 4;
        const uint32_t skew = static_cast<uint32_t>(src % ids_alignment);
        noc_async_read(src - skew, b.ids, skew + batch * share.top_k * 4);
        noc_async_read_barrier();
        const volatile uint32_t* batch_ids = moe_kernel::words(b.ids + skew);
        for (uint32_t i = 0; i < batch; ++i) {
            TokenRows& read = reads[next];
            find_rows(share, plan, batch_ids + i * share.top_k, read);
            if (!read.any) continue;
            read.t = first + i;
            read.buffer = b.rows + next * b.row_stride;
            noc_async_read(x.get_noc_addr(read.t), read.buffer, share.row_bytes());
            if (has_pending) send_token_row(share, line, tokens, reads[next ^ 1]);
            noc_async_read_barrier();
            has_pending = true;
            next ^= 1;
        }
    }
    if (has_pending) send_token_row(share, line, tokens, reads[next ^ 1]);
    const uint64_t sem_payload_noc = get_noc_addr(main_noc_x, main_noc_y, main_sem_payload_l1);
    for (uint32_t q = 0; q < line.line_size(); ++q) {
        if (q == share.position) continue;
        for (uint32_t link = 0; link < line.num_links(); ++link) line.atomic_inc(q, sem_payload_noc, link);
    }
    noc_async_write_barrier();
}

}  // namespace row_sender
