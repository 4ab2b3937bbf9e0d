// moe_bmm reader: the cores computing the same columns of one expert in different row blocks share
// their weight blocks.
//
// An expert with more than Mb active row tiles has several row blocks, and every row block reads the
// same weight columns: the shared expert at prefill (one expert, every token) has 8 row blocks on 64
// cores, so without sharing each weight tile would leave DRAM 8 times. Weight round j of a segment is
// the j-th segment of every core whose whole share lies in one row block of the same expert and whose
// j-th segment there has the same columns (the same weight blocks, in the same order). Its first core
// (lowest index), the sender, reads each weight block from DRAM and multicasts it into the same cb_w
// slot of the other cores, which only receive it: each weight tile leaves DRAM once per weight round.
// A core whose share holds units of two row blocks reads its weights alone (as it reads its x alone,
// moe_bmm_x_sharing.hpp).
//
// Every core takes part in its rounds in the same order, (segment j of its row block, k block, x, then
// the weight blocks column by column), so the weight rounds and the x rounds cannot wait on each other
// in a circle; they use their own pair of semaphores. The slot must be the same on every core of a
// round: cb_w holds two blocks and every segment starts in slot 0 (align_w_ring).
//
// The receivers are addressed by rectangles of the grid: runs of consecutive cores (as an x round's)
// or, when that takes fewer multicasts, runs in consecutive rows of one grid column (the shared
// expert's rounds at prefill are the cores of one grid column, one row block per grid row).
#pragma once

#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "moe_bmm_work_split.hpp"
#include "moe_bmm_x_sharing.hpp"

namespace moe_bmm {

// Who shares the weight blocks of one segment: its sender and its receivers.
class WRound {
public:
    WRound(const Shape& shape, const Routing& routing, uint32_t total, uint32_t num_cores, uint32_t core_index,
           const Segment& seg)
        : shape_(shape), total_(total), num_cores_(num_cores), seg_(seg) {
        const uint32_t active = routing.active_row_tiles(seg.expert);
        row_blocks_ = ceil_div(active, shape.unit_rows);
        last_rows_ = active - (row_blocks_ - 1) * shape.unit_rows;
        expert_base_ = seg.line_base - seg.first_row * shape.col_tiles;  // the row blocks before are full
        for (uint32_t l = seg.expert; l-- > 0;) {  // the last row block on the line before the expert's
            const uint32_t rows = routing.active_row_tiles(l);
            if (rows == 0) continue;
            prev_rows_ = (rows - 1) % shape.unit_rows + 1;
            break;
        }
        sender_ = core_index;
        if (row_blocks_ < 2 || !member(core_index)) return;  // nobody else reads these weight blocks
        for (uint32_t c = 0; c < num_cores; ++c) {
            if (!member(c)) continue;
            if (c < sender_) sender_ = c;
            ++members_;
        }
    }

    uint32_t sender() const { return sender_; }
    uint32_t receivers() const { return members_ > 0 ? members_ - 1 : 0; }

    // Calls visit(x0, y0, x1, y1) for grid rectangles (logical, inclusive) covering exactly the
    // receivers: runs of consecutive core indices (row-major rectangles, as an x round's), or runs in
    // consecutive rows of one grid column, whichever takes fewer multicasts.
    template <typename Visit>
    void for_each_receiver_rectangle(uint32_t grid_cols, Visit visit) const {
        if (receivers() == 0) return;
        uint32_t by_index = 0, by_column = 0;
        const auto count_index = [&](uint32_t, uint32_t, uint32_t, uint32_t) { ++by_index; };
        const auto count_column = [&](uint32_t, uint32_t, uint32_t, uint32_t) { ++by_column; };
        index_rectangles(grid_cols, count_index);
        column_rectangles(grid_cols, count_column);
        if (by_index <= by_column) {
            index_rectangles(grid_cols, visit);
        } else {
            column_rectangles(grid_cols, visit);
        }
    }

private:
    bool receiver(uint32_t c) const { return c != sender_ && member(c); }

    template <typename Visit>
    void index_rectangles(uint32_t grid_cols, Visit visit) const {
        uint32_t run = 0, length = 0;
        for (uint32_t c = 0; c <= num_cores_; ++c) {
            if (c < num_cores_ && receiver(c)) {
                if (length++ == 0) run = c;
            } else if (length > 0) {
                for_each_rectangle(run, run + length - 1, grid_cols, visit);
                length = 0;
            }
        }
    }

    template <typename Visit>
    void column_rectangles(uint32_t grid_cols, Visit visit) const {
        const uint32_t grid_rows = ceil_div(num_cores_, grid_cols);
        for (uint32_t x = 0; x < grid_cols; ++x) {
            uint32_t run = 0, length = 0;
            for (uint32_t y = 0; y <= grid_rows; ++y) {
                const uint32_t c = y * grid_cols + x;
                if (y < grid_rows && c < num_cores_ && receiver(c)) {
                    if (length++ == 0) run = y;
                } else if (length > 0) {
                    visit(x, run, x, run + length - 1);
                    length = 0;
                }
            }
        }
    }

    struct Block {
        uint32_t base;  // line position of its first unit
        uint32_t rows;
    };
    Block block(uint32_t b) const {
        return {expert_base_ + b * shape_.unit_rows * shape_.col_tiles,
                b + 1 == row_blocks_ ? last_rows_ : shape_.unit_rows};
    }

    // Core c shares this round: every unit starting in its share belongs to one row block of the expert
    // (none of the block before, none of the block after), and its segment seg_.round of that block has
    // seg_'s columns.
    bool member(uint32_t c) const {
        const Share share = even_share(total_, c, num_cores_);
        const uint32_t lo = share.first, hi = share.first + share.count;
        uint32_t b = lo <= expert_base_ ? 0 : (lo - expert_base_) / (shape_.unit_rows * shape_.col_tiles);
        if (b >= row_blocks_) return false;
        ColumnRange cols = share_columns(share, block(b).base, block(b).rows, shape_.col_tiles);
        if (cols.first == cols.last) {  // the share starts past block b's last unit start
            if (++b == row_blocks_) return false;
            cols = share_columns(share, block(b).base, block(b).rows, shape_.col_tiles);
            if (cols.first == cols.last) return false;
        }
        const Block blk = block(b);
        const uint32_t before = b > 0 ? shape_.unit_rows : prev_rows_;  // rows of the unit before the block
        if (before > 0 && lo + before <= blk.base) return false;        // that unit starts in the share
        if (hi > blk.base + blk.rows * shape_.col_tiles) return false;  // so does the next block's first
        const uint32_t width = max_segment_cols(shape_, blk.rows);
        const uint32_t first = cols.first + seg_.round * width;
        if (first >= cols.last || first != seg_.first_col) return false;
        const uint32_t end = first + width < cols.last ? first + width : cols.last;
        return end - first == seg_.cols;
    }

    Shape shape_;
    uint32_t total_;
    uint32_t num_cores_;
    Segment seg_;
    uint32_t row_blocks_ = 0;
    uint32_t last_rows_ = 0;
    uint32_t expert_base_ = 0;
    uint32_t prev_rows_ = 0;  // rows of the last row block before the expert's on the line (0: none)
    uint32_t sender_ = 0;
    uint32_t members_ = 0;
};

}  // namespace moe_bmm
