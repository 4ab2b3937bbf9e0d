// The last writes of all_to_all_dispatch_dense, shared by the G cores of the grid's first row (the
// main core, the row senders, the gather-only cores; core c of G does share c):
// the used slots' slot_source pages (one NOC write each) and the fan-out copies of
// remote token rows from their first row on this device to their other rows. The main kernel
// (dispatch_dense.cpp) walks the line's assignments, leaves the slot_source entries of the used
// slots (packed (position, token) pairs) and the fan-out copies ((from row, to row) pairs) in its
// L1, publishes where in the finish header (cb_finish, FinishWord) and rings sem_go a second time
// (the slot_source pages may go), then a third once every row sent to this device has landed (the
// fan-out copies may go). The copies follow the last row's landing, so they are spread over every
// core of the row rather than the C senders (TG 4x8, H 7168: a third of the op on four cores).
#pragma once

#include <cstdint>

#include "../../../cpp/ops/all_to_all_dispatch_dense/all_to_all_dispatch_dense_shared.hpp"
#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"

namespace finish_share {

using namespace ttnn_moe::all_to_all_dispatch_dense_shared;

// Reads entries [first, first + n) of the main core's packed pairs at `image` into `packed`; returns
// the L1 address of entry `first` there (the read starts at an even entry: both sides of a NOC
// read agree modulo 16 bytes).
inline uint32_t read_pairs(uint32_t main_x, uint32_t main_y, uint32_t image, uint32_t first, uint32_t n,
                           uint32_t packed) {
    const uint32_t even = first & ~1u;
    noc_async_read(get_noc_addr(main_x, main_y, image + even * 8), packed, (first + n - even) * 8);
    noc_async_read_barrier();
    return packed + (first - even) * 8;
}

inline uint32_t share_start(uint32_t c, uint32_t n, uint32_t cores) {
    const uint32_t start = c * ((n + cores - 1) / cores);
    return start < n ? start : n;
}

// The n fan-out copies of the (from row, to row) pairs at `pairs` (L1), through two row buffers.
// The copies of one token's row follow each other (its first row to each of its other rows): they
// form a group whose row is read once. Group j's row is read into buffer j % 2 while group j - 1's
// copies are written from the other.
template <typename Tokens>
void copy_rows(uint32_t pairs, uint32_t n, const Tokens& tokens, uint32_t rows, uint32_t row_stride,
               uint32_t row_bytes) {
    const volatile uint32_t* pair = moe_kernel::words(pairs);
    uint32_t written = 0;  // the first copy of the group being written
    uint32_t begin = 0;    // the first copy of the group being read
    uint32_t buffer = 0;   // the buffer the group being read goes to
    while (written < n) {
        uint32_t end = begin;
        if (begin < n) {
            for (end = begin + 1; end < n && pair[2 * end] == pair[2 * begin]; ++end) {
            }
            noc_async_read(tokens.get_noc_addr(pair[2 * begin]), rows + buffer * row_stride, row_bytes);
        }
        for (uint32_t i = written; i < begin; ++i) {
            noc_async_write(rows + (buffer ^ 1) * row_stride, tokens.get_noc_addr(pair[2 * i + 1]), row_bytes);
        }
        noc_async_read_barrier();
        noc_async_writes_flushed();
        written = begin;
        begin = end;
        buffer ^= 1;
    }
}

struct Where {
    uint32_t core, num_cores, row_bytes;
    uint32_t main_x, main_y;
    uint32_t finish;      // cb_finish on this core (the header at the same address on the main core)
    uint32_t page_stage;  // kFinishChunk DRAM-aligned slots for single slot_source pages
    uint32_t rows;        // two token rows
    uint32_t row_stride;
};

// Reads the finish header from the main core's cb_finish (at `main_finish` there) into this core's
// finish block (the main core's own block is the header).
inline void read_header(const Where& w, uint32_t main_finish) {
    noc_async_read(get_noc_addr(w.main_x, w.main_y, main_finish), w.finish, kFinishWords * 4);
    noc_async_read_barrier();
}
// The dataflow kernels' finish block is cb_finish, at the header's address.
inline void read_header(const Where& w) {
    read_header(w, w.finish);
}

// Share `core` of the used slots' slot_source pages, from kFinishFirstPage up to num_slots (the
// pages past num_slots are never written: no consumer reads them). The finish block must hold the
// header.
template <typename SlotSource>
void write_slot_pages(const Where& w, const SlotSource& slot_source) {
    volatile uint32_t* header = moe_kernel::words(w.finish);
    const uint32_t num_slots = header[kFinishNumSlots];
    const uint32_t slot_image = header[kFinishSlotImage];
    const uint32_t written = header[kFinishFirstPage];
    const uint32_t packed = w.finish + kFinishHeaderBytes;  // kFinishChunk + 1 packed pairs

    const uint32_t unwritten = num_slots > written ? num_slots - written : 0;
    const uint32_t first_page = written + share_start(w.core, unwritten, w.num_cores);
    const uint32_t end_page = written + share_start(w.core + 1, unwritten, w.num_cores);
    for (uint32_t page = first_page; page < end_page; page += kFinishChunk) {
        const uint32_t n = end_page - page < kFinishChunk ? end_page - page : kFinishChunk;
        const uint32_t pairs = read_pairs(w.main_x, w.main_y, slot_image, page, n, packed);
        for (uint32_t i = 0; i < n; ++i) {
            volatile uint32_t* entry = moe_kernel::words(w.page_stage + i * moe_kernel::kDramAlign);
            entry[0] = moe_kernel::words(pairs)[2 * i];
            entry[1] = moe_kernel::words(pairs)[2 * i + 1];
            noc_async_write(w.page_stage + i * moe_kernel::kDramAlign, slot_source.get_noc_addr(page + i), 8);
        }
        noc_async_write_barrier();
    }
}

// Share `copier` of `copiers` of the fan-out copies, once every row sent to this device has landed.
// The finish block must hold the header.
template <typename Tokens>
void copy_fanout_share(const Where& w, const Tokens& tokens, uint32_t copier, uint32_t copiers) {
    volatile uint32_t* header = moe_kernel::words(w.finish);
    const uint32_t num_fanout = header[kFinishNumFanout];
    const uint32_t fanout = header[kFinishFanout];
    const uint32_t packed = w.finish + kFinishHeaderBytes;
    const uint32_t first_copy = share_start(copier, num_fanout, copiers);
    const uint32_t end_copy = share_start(copier + 1, num_fanout, copiers);
    for (uint32_t copy = first_copy; copy < end_copy; copy += kFinishChunk) {
        const uint32_t n = end_copy - copy < kFinishChunk ? end_copy - copy : kFinishChunk;
        copy_rows(read_pairs(w.main_x, w.main_y, fanout, copy, n, packed), n, tokens, w.rows, w.row_stride,
                  w.row_bytes);
    }
    noc_async_write_barrier();
}

}  // namespace finish_share
