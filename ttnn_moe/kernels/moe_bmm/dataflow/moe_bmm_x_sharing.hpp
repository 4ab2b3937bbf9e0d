// moe_bmm reader: the cores computing the same round of a row block share its x blocks.
//
// A row block's columns are spread over consecutive cores (moe_bmm_work_split.hpp), and each of
// them needs the block's x tiles, k block by k block. Round j of a row block is the j-th segment of
// every core whose whole share lies in the row block and that has more than j segments of it (one
// round when each core's columns of the block fit one segment, the usual case). The round's first
// core (lowest index), its sender, reads each x block from DRAM and multicasts it over the NOC into
// the same cb_x slot of the round's other cores, its receivers: each x tile leaves DRAM once per
// round instead of once per core. A core whose share straddles two row blocks reads the x of both
// itself: in a round it would make the round's cores wait until it finished the other block, and
// the next row block's round wait for the core straddling its end in turn, a chain through the grid.
//
// Handshake per k block, with two semaphores per core: a receiver reserves its cb_x slot, clears
// its `valid` word and increments the sender's `ready`, then waits for `valid` to be 1; the sender
// reads the block, waits until `ready` counts every receiver, clears it, multicasts the block and
// then its own `valid` word (set to 1) to the receivers (NOC writes on one NOC land in issue order,
// so the flag never overtakes the data). A receiver increments `ready` again only after its flag
// came, which the sender multicasts after clearing `ready`, so the count never mixes two blocks; and
// a core sends only rounds of the one row block its share lies in, so no core outside the round
// counts in its `ready` while it waits.
//
// The slot a block lands in must be the same on every core of the round: cb_x holds two blocks and
// every segment starts in slot 0 (align_x_ring), so k block j of every round is in slot j % 2; a
// row-major x's cb_x_rows holds one block, the same slot for every block.
//
// Receivers are addressed by rectangles of the core grid: cores are in row-major order (index i at
// logical (i % grid columns, i / grid columns)), and each run of consecutive receivers is at most a
// partial row, whole rows and a partial row. The NOC coordinates of the grid's columns and rows come
// from the host (common runtime args), as tt-metal's multicast matmuls get theirs.
#pragma once

#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "moe_bmm_work_split.hpp"

namespace moe_bmm {

// The worker grid the cores lie on and the NOC coordinates of its columns and rows: the common
// runtime args from `noc_table` on hold grid_cols x coordinates, then grid_rows y coordinates.
struct Grid {
    uint32_t cols;
    uint32_t rows;
    uint32_t noc_table;
    uint32_t noc_x(uint32_t col) const { return get_common_arg_val<uint32_t>(noc_table + col); }
    uint32_t noc_y(uint32_t row) const { return get_common_arg_val<uint32_t>(noc_table + cols + row); }
};

// Calls visit(x0, y0, x1, y1) for the grid rectangles (logical, inclusive) that cover cores [a, b].
template <typename Visit>
void for_each_rectangle(uint32_t a, uint32_t b, uint32_t grid_cols, Visit visit) {
    while (a <= b) {
        const uint32_t x = a % grid_cols, y = a / grid_cols;
        if (x == 0 && b - a + 1 >= grid_cols) {
            const uint32_t whole_rows = (b - a + 1) / grid_cols;
            visit(0u, y, grid_cols - 1, y + whole_rows - 1);
            a += whole_rows * grid_cols;
        } else {
            const uint32_t row_end = y * grid_cols + grid_cols - 1;
            const uint32_t end = b < row_end ? b : row_end;
            visit(x, y, end % grid_cols, y);
            a = end + 1;
        }
    }
}

// Who shares the x blocks of one segment's round: its sender and its receivers.
class XRound {
public:
    XRound(const Shape& shape, uint32_t total, uint32_t num_cores, uint32_t core_index, const Segment& seg)
        : shape_(shape), total_(total), num_cores_(num_cores), seg_(seg) {
        const uint32_t block_tiles = seg.rows * shape.col_tiles;
        last_core_ = share_owner(total, seg.line_base + block_tiles - 1, num_cores);
        if (!member(core_index)) {  // this core reads the block's x alone
            sender_ = core_index;
            last_core_ = core_index;
            return;
        }
        sender_ = share_owner(total, seg.line_base, num_cores);
        while (!member(sender_)) ++sender_;  // this core is a member, so the search ends
        for (uint32_t c = sender_ + 1; c <= last_core_; ++c) receivers_ += member(c) ? 1 : 0;
    }

    uint32_t sender() const { return sender_; }
    uint32_t receivers() const { return receivers_; }

    // Calls visit(x0, y0, x1, y1) for grid rectangles (logical, inclusive) covering exactly the receivers.
    template <typename Visit>
    void for_each_receiver_rectangle(uint32_t grid_cols, Visit visit) const {
        for_each_receiver_run([&](uint32_t a, uint32_t b) { for_each_rectangle(a, b, grid_cols, visit); });
    }

    // Calls visit(a, b) for each maximal run [a, b] of consecutive receiver indices.
    template <typename Visit>
    void for_each_receiver_run(Visit visit) const {
        uint32_t run = 0, length = 0;
        for (uint32_t c = sender_ + 1; c <= last_core_ + 1; ++c) {
            if (c <= last_core_ && member(c)) {
                if (length++ == 0) run = c;
            } else if (length > 0) {
                visit(run, run + length - 1);
                length = 0;
            }
        }
    }

private:
    // Core c shares this round: its share holds units of this row block only, and more than
    // seg_.round segments of them. It holds no unit of the block before when it starts at the block
    // or past that block's last unit start (line_base - prev_rows), none of the block after when it
    // ends by the block's end (where the next block's first unit starts).
    bool member(uint32_t c) const {
        const Share share = even_share(total_, c, num_cores_);
        const bool first_block = share.first >= seg_.line_base || share.first + seg_.prev_rows > seg_.line_base;
        const bool last_block = share.first + share.count <= seg_.line_base + seg_.rows * shape_.col_tiles;
        const ColumnRange cols = share_columns(share, seg_.line_base, seg_.rows, shape_.col_tiles);
        return first_block && last_block && cols.last - cols.first > seg_.round * max_segment_cols(shape_, seg_.rows);
    }

    Shape shape_;
    uint32_t total_;
    uint32_t num_cores_;
    Segment seg_;
    uint32_t last_core_ = 0;
    uint32_t sender_ = 0;
    uint32_t receivers_ = 0;
};

// The multicast address of a logical rectangle of the grid at L1 address `addr`. NOC 1 runs the
// other way round, so its rectangle starts at the far corner.
inline uint64_t rectangle_addr(const Grid& grid, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1, uint32_t addr) {
    uint32_t start_x = grid.noc_x(x0), start_y = grid.noc_y(y0), end_x = grid.noc_x(x1), end_y = grid.noc_y(y1);
    if (noc_index == 1) {
        const uint32_t x = start_x, y = start_y;
        start_x = end_x;
        start_y = end_y;
        end_x = x;
        end_y = y;
    }
    return get_noc_multicast_addr(start_x, start_y, end_x, end_y, addr);
}

// The two semaphores of a sharing handshake on this core (one pair for x, one for the weights).
struct ShareSemaphores {
    uint32_t ready;  // sender: receivers ready for the next block
    uint32_t valid;  // receiver: the block has landed (1); the sender's is the source of the flag
};

// Receiver, first half: tells core `sender` that this core's CB slot is reserved for the next block.
inline void post_ready(const Grid& grid, uint32_t sender, const ShareSemaphores& sem) {
    noc_semaphore_set(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(sem.valid), 0);
    noc_semaphore_inc(get_noc_addr(grid.noc_x(sender % grid.cols), grid.noc_y(sender / grid.cols), sem.ready), 1);
}

// Receiver, second half: waits until the sender has multicast the block into the reserved slot.
inline void wait_block(const ShareSemaphores& sem) {
    noc_semaphore_wait(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(sem.valid), 1);
}

// Receiver: waits until core `sender` has multicast the block into this core's reserved CB slot.
inline void receive_block(const Grid& grid, uint32_t sender, const ShareSemaphores& sem) {
    post_ready(grid, sender, sem);
    wait_block(sem);
}

// Sender: the block (`bytes` at `l1`, this core's CB slot) into the same slot of every receiver of
// `round` (an XRound or a WRound), then the flag. Returns once they are issued: the multicast leaves
// while the reader reads the next block into the CB's other slot (the inbound and the outbound NOC
// port work at once). It first waits for this core's earlier multicasts to leave, the last of which
// read from the slot the next block lands in; the reader's last act waits for the final ones.
template <typename Round>
void multicast_block(const Grid& grid, const Round& round, const ShareSemaphores& sem, uint32_t l1, uint32_t bytes) {
    noc_async_writes_flushed();
    auto* ready = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(sem.ready);
    noc_semaphore_wait(ready, round.receivers());
    noc_semaphore_set(ready, 0);
    noc_semaphore_set(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(sem.valid), 1);
    round.for_each_receiver_rectangle(grid.cols, [&](uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1) {
        const uint32_t cores = (x1 - x0 + 1) * (y1 - y0 + 1);
        noc_async_write_multicast(l1, rectangle_addr(grid, x0, y0, x1, y1, l1), bytes, cores);
        noc_semaphore_set_multicast(sem.valid, rectangle_addr(grid, x0, y0, x1, y1, sem.valid), cores);
    });
}

}  // namespace moe_bmm
