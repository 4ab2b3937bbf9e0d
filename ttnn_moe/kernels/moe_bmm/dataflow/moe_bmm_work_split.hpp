// Device-side work split of moe_bmm, shared by its reader and writer kernels.
//
// Both dataflow kernels of a core read num_routed_tokens (and, in grouped mode,
// expert_offsets) from DRAM into L1 themselves and derive the same work list from
// them: counts never travel through the host.
//
// Tile coordinates: expert l's rows start at row tile row_tile_base(l) of x and of the
// output (padded mode: l * Mt, its block being Mt row tiles; grouped mode:
// expert_offsets[l] / 32). Its ACTIVE row tiles are the first ceil(count_l / 32).
//
// Units: each expert's active row tiles are cut into row blocks of up to Mb (common arg
// row_block; fewer when that would leave cores without a unit, unit_row_tiles); a unit is one column
// tile of one row block, worth its row tiles. The units,
// ordered (expert, row block, column), lie on a line of all active output tiles; the line is
// split into contiguous, even shares (core i of P gets total/P tiles, the first total%P one
// more) and a core computes the units that START in its share. So no unit is split between
// cores: each weight column tile of a row block is read by exactly one core, once, for all the
// block's rows. A core's consecutive units of one row block form its segments, each up to
// output_block / rows columns: the compute kernel keeps a segment's partial sums in L1 and
// reads each x tile of the segment once for all its columns.
#pragma once

#include <cstdint>

#include "../../../cpp/ops/moe_bmm/moe_bmm_shared.hpp"
#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"

namespace moe_bmm {

using namespace ttnn_moe::moe_bmm_shared;

// The problem's shape, identical on every core (common runtime args, common_arg).
struct Shape {
    uint32_t num_experts;    // E_l
    bool grouped;            // x is (M, Kd) packed by expert_offsets, else (E_l, T, Kd)
    uint32_t rows;           // padded: T; grouped: M
    uint32_t row_tiles;      // padded: per expert; grouped: in total
    uint32_t slot_bytes;     // bytes between two routing entries in L1
    uint32_t inner_tiles;    // Kt
    uint32_t col_tiles;      // Nt
    uint32_t inner_block;    // k tiles per block
    uint32_t row_block;      // Mb: row tiles of an expert a segment's x block holds at most (cb_x's block)
    uint32_t unit_rows;      // row tiles of an expert per unit: Mb, or fewer (unit_row_tiles)
    uint32_t output_block;   // output tiles per segment at most
    uint32_t weight_halves;  // weight column tiles per output column tile (2: SwiGLU gate, up)
    bool addend;             // out = x @ w + addend: the addend's tile of each output tile is read too
    bool row_major_x;        // x's pages are rows (Kd elements), not tiles
    bool row_major_out;      // the output's pages are rows (N elements): only counted rows are written
    bool row_major_addend;   // the addend's pages are rows (N elements): read as strips, tilized by compute
    // Column tiles of w: gate and up alternate in SwiGLU mode.
    uint32_t weight_col_tiles() const { return weight_halves * col_tiles; }
};

inline Shape read_shape() {
    Shape s;
    s.num_experts = get_common_arg_val<uint32_t>(common_arg::kNumExperts);
    s.grouped = get_common_arg_val<uint32_t>(common_arg::kGrouped) != 0;
    s.rows = get_common_arg_val<uint32_t>(common_arg::kRows);
    s.row_tiles = get_common_arg_val<uint32_t>(common_arg::kRowTiles);
    s.slot_bytes = get_common_arg_val<uint32_t>(common_arg::kSlotBytes);
    s.inner_tiles = get_common_arg_val<uint32_t>(common_arg::kInnerTiles);
    s.col_tiles = get_common_arg_val<uint32_t>(common_arg::kColTiles);
    s.inner_block = get_common_arg_val<uint32_t>(common_arg::kInnerBlock);
    s.row_block = get_common_arg_val<uint32_t>(common_arg::kRowBlock);
    s.unit_rows = s.row_block;
    s.output_block = get_common_arg_val<uint32_t>(common_arg::kOutputBlock);
    s.weight_halves = get_common_arg_val<uint32_t>(common_arg::kWeightHalves);
    s.addend = get_common_arg_val<uint32_t>(common_arg::kAddend) != 0;
    s.row_major_x = get_common_arg_val<uint32_t>(common_arg::kRowMajorX) != 0;
    s.row_major_out = get_common_arg_val<uint32_t>(common_arg::kRowMajorOut) != 0;
    s.row_major_addend = get_common_arg_val<uint32_t>(common_arg::kRowMajorAddend) != 0;
    return s;
}

// View over the routing scratch in L1: slot l holds count_l, slot E_l + l holds offset_l.
class Routing {
public:
    Routing(uint32_t l1_base, const Shape& shape) : base_(l1_base), shape_(shape) {}

    // Valid rows of expert l, clamped to the rows its block can hold, so a bad count
    // can never make a kernel read or write outside the tensors.
    uint32_t valid_rows(uint32_t l) const {
        const uint32_t count = word(l);
        const uint32_t capacity = block_rows(l);
        return count < capacity ? count : capacity;
    }
    // Rows x and the output hold from expert l's first row on: T (padded), the rows left of M (grouped).
    uint32_t block_rows(uint32_t l) const {
        const uint32_t first_row = row_tile_base(l) * kTileRows;
        return shape_.grouped ? (first_row < shape_.rows ? shape_.rows - first_row : 0) : shape_.rows;
    }
    uint32_t active_row_tiles(uint32_t l) const { return (valid_rows(l) + kTileRows - 1) / kTileRows; }
    // First output/input row tile of expert l (offsets are tile aligned by contract; floored here).
    uint32_t row_tile_base(uint32_t l) const {
        return shape_.grouped ? word(shape_.num_experts + l) / kTileRows : l * shape_.row_tiles;
    }
    // First row of expert l in a row-major x or output: row l * T of (E_l, T, ..) (padded), the row of
    // its first row tile (grouped).
    uint32_t row_base(uint32_t l) const { return shape_.grouped ? row_tile_base(l) * kTileRows : l * shape_.rows; }
    // Row tiles of expert l's block in the padded layout (the zero-filled range is [active, this)).
    uint32_t block_row_tiles() const { return shape_.row_tiles; }
    uint32_t num_experts() const { return shape_.num_experts; }
    // count_l and offset_l as read (offset 0 in padded mode), for the status record.
    uint32_t count(uint32_t l) const { return word(l); }
    uint32_t offset(uint32_t l) const { return shape_.grouped ? word(shape_.num_experts + l) : 0; }

private:
    uint32_t word(uint32_t slot) const { return moe_kernel::column_entry(base_, slot, shape_.slot_bytes); }
    uint32_t base_;
    Shape shape_;
};

// Reads count_l (and offset_l in grouped mode) into the slots of CB `cb_routing` (2 * E_l
// pages of slot_bytes each) and returns the L1 address of slot 0. The CB is this
// kernel's own: it produces and consumes the entries (reserve, read, push, wait) and
// keeps them at the front until the kernel ends.
template <typename Accessor>
uint32_t load_routing(uint32_t cb_routing, const Accessor& counts, const Accessor& offsets, const Shape& shape) {
    const uint32_t slots = 2 * shape.num_experts;
    cb_reserve_back(cb_routing, slots);
    const uint32_t base = get_write_ptr(cb_routing);
    moe_kernel::read_column_async(counts, base, shape.num_experts, shape.slot_bytes);
    if (shape.grouped) {
        moe_kernel::read_column_async(offsets, base + shape.num_experts * shape.slot_bytes, shape.num_experts,
                                      shape.slot_bytes);
    }
    noc_async_read_barrier();
    cb_push_back(cb_routing, slots);
    cb_wait_front(cb_routing, slots);
    return get_read_ptr(cb_routing);
}

// Contiguous share [first, first + count) of `total` items for core `core_index` of `num_cores`.
struct Share {
    uint32_t first;
    uint32_t count;
};
inline Share even_share(uint32_t total, uint32_t core_index, uint32_t num_cores) {
    const uint32_t base = total / num_cores;
    const uint32_t extra = total % num_cores;
    return {core_index * base + (core_index < extra ? core_index : extra), base + (core_index < extra ? 1u : 0u)};
}

// The core whose even share of `total` items holds item `item` (< total): the inverse of even_share.
inline uint32_t share_owner(uint32_t total, uint32_t item, uint32_t num_cores) {
    const uint32_t base = total / num_cores;
    const uint32_t extra = total % num_cores;
    const uint32_t long_items = extra * (base + 1);  // the first `extra` cores hold one item more
    return item < long_items ? item / (base + 1) : extra + (item - long_items) / base;
}

// One output tile: expert, row tile inside the expert's block, column tile.
struct TileCoord {
    uint32_t expert;
    uint32_t row_tile;
    uint32_t col_tile;
};

// Page of an output tile in the output (and in the addend, which has the output's shape).
inline uint32_t output_page(const Shape& shape, const Routing& routing, const TileCoord& tile) {
    return (routing.row_tile_base(tile.expert) + tile.row_tile) * shape.col_tiles + tile.col_tile;
}

struct RowTileRange {
    uint32_t lo;
    uint32_t hi;
};

// Walks the tiles (l, n, r) with n in [0, Nt) and r in [lo(l), hi(l)), in that order.
// RowRange is a callable (l) -> {lo, hi}: the zero-fill set of the padded mode uses
// [active_row_tiles(l), Mt).
template <typename RowRange>
class TileWalk {
public:
    TileWalk(uint32_t num_experts, uint32_t col_tiles, RowRange rows)
        : num_experts_(num_experts), col_tiles_(col_tiles), rows_(rows) {}

    uint32_t total() const {
        uint32_t sum = 0;
        for (uint32_t l = 0; l < num_experts_; ++l) sum += tiles_of(l);
        return sum;
    }

    // Positions the walk on the `index`-th tile of the set (index < total()).
    TileCoord seek(uint32_t index) {
        expert_ = 0;
        while (expert_ < num_experts_ && tiles_of(expert_) <= index) {
            index -= tiles_of(expert_);
            ++expert_;
        }
        const auto range = rows_(expert_);
        const uint32_t rows_per_col = range.hi - range.lo;
        col_ = index / rows_per_col;
        row_ = range.lo + index % rows_per_col;
        return {expert_, row_, col_};
    }

    // The tile after the current one (the caller never steps past the last tile).
    TileCoord next() {
        const auto range = rows_(expert_);
        if (++row_ == range.hi) {
            row_ = range.lo;
            if (++col_ == col_tiles_) {
                col_ = 0;
                do {
                    ++expert_;
                } while (expert_ < num_experts_ && tiles_of(expert_) == 0);
                row_ = expert_ < num_experts_ ? rows_(expert_).lo : 0;
            }
        }
        return {expert_, row_, col_};
    }

private:
    uint32_t tiles_of(uint32_t l) const {
        const auto range = rows_(l);
        return (range.hi - range.lo) * col_tiles_;
    }
    uint32_t num_experts_;
    uint32_t col_tiles_;
    RowRange rows_;
    uint32_t expert_ = 0;
    uint32_t row_ = 0;
    uint32_t col_ = 0;
};

// A segment: `rows` row tiles of expert `expert` from its active row tile `first_row` on, times
// `cols` column tiles from `first_col` on. The compute kernel produces its output tiles column by
// column, row tile by row tile inside a column. `line_base` is the line position of the row block's
// first unit, `prev_rows` the rows of the row block before it on the line (0 for the first), and
// `round` the segment's index among this core's segments of its row block: cores computing the same
// round of a row block share its x blocks (moe_bmm_x_sharing.hpp).
struct Segment {
    uint32_t expert;
    uint32_t first_row;
    uint32_t rows;
    uint32_t first_col;
    uint32_t cols;
    uint32_t line_base;
    uint32_t prev_rows;
    uint32_t round;
};

inline uint32_t ceil_div(uint32_t a, uint32_t b) {
    return (a + b - 1) / b;
}

// All active output tiles: the length of the line.
inline uint32_t active_tiles(const Shape& shape, const Routing& routing) {
    uint32_t total = 0;
    for (uint32_t l = 0; l < shape.num_experts; ++l) total += routing.active_row_tiles(l) * shape.col_tiles;
    return total;
}

// Row tiles per unit: Mb, halved while the units would leave cores without one (an expert of many rows
// and few columns, like the shared expert at prefill), down to 1. More, smaller row blocks then read
// the weights more often, but their cores share them (moe_bmm_w_sharing.hpp). Both dataflow kernels of
// a core derive it from the counts, so they cut the same units.
inline uint32_t unit_row_tiles(const Shape& shape, const Routing& routing, uint32_t num_cores) {
    uint32_t rows = shape.row_block;
    for (; rows > 1; rows /= 2) {
        uint32_t units = 0;
        for (uint32_t l = 0; l < shape.num_experts; ++l) {
            units += ceil_div(routing.active_row_tiles(l), rows) * shape.col_tiles;
        }
        if (units >= num_cores) break;
    }
    return rows;
}

// Columns [first, last) of a row block of `rows` row tiles at line position `base` whose units start
// in `share` (column n's unit starts at base + n * rows); empty (first == last) when none does.
struct ColumnRange {
    uint32_t first;
    uint32_t last;
};
inline ColumnRange share_columns(const Share& share, uint32_t base, uint32_t rows, uint32_t col_tiles) {
    const uint32_t lo = share.first, hi = share.first + share.count;
    if (hi <= base) return {0, 0};
    const uint32_t first = lo > base ? ceil_div(lo - base, rows) : 0;
    const uint32_t end = ceil_div(hi - base, rows);
    const uint32_t last = end < col_tiles ? end : col_tiles;
    return first < last ? ColumnRange{first, last} : ColumnRange{0, 0};
}

// Columns of a segment at most: the segment's partial sums (rows x columns) fit cb_partial.
inline uint32_t max_segment_cols(const Shape& shape, uint32_t rows) {
    return shape.output_block / rows;
}

// Calls visit(segment) for each segment of core `core_index` of `num_cores`, in order.
template <typename Visit>
void for_each_segment(const Shape& shape, const Routing& routing, uint32_t core_index, uint32_t num_cores,
                      Visit visit) {
    const Share share = even_share(active_tiles(shape, routing), core_index, num_cores);
    const uint32_t hi = share.first + share.count;
    uint32_t base = 0;       // line position of the current row block's first unit
    uint32_t prev_rows = 0;  // rows of the row block before it
    for (uint32_t l = 0; l < shape.num_experts && base < hi; ++l) {
        const uint32_t active = routing.active_row_tiles(l);
        for (uint32_t r0 = 0; r0 < active && base < hi; r0 += shape.unit_rows) {
            const uint32_t rows = active - r0 < shape.unit_rows ? active - r0 : shape.unit_rows;
            const ColumnRange cols = share_columns(share, base, rows, shape.col_tiles);
            const uint32_t max_cols = max_segment_cols(shape, rows);
            uint32_t round = 0;
            for (uint32_t n = cols.first; n < cols.last; n += max_cols, ++round) {
                const uint32_t seg_cols = cols.last - n < max_cols ? cols.last - n : max_cols;
                visit(Segment{l, r0, rows, n, seg_cols, base, prev_rows, round});
            }
            base += rows * shape.col_tiles;
            prev_rows = rows;
        }
    }
}

}  // namespace moe_bmm
