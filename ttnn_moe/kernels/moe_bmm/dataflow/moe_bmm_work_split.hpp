// Device-side work split of moe_bmm, shared by its reader and writer kernels.
//
// Both dataflow kernels of a core read num_routed_tokens (and, in grouped mode,
// expert_offsets) from DRAM into L1 themselves and derive the same work list from
// them: counts never travel through the host.
//
// Tile coordinates: expert l's rows start at row tile row_tile_base(l) of x and of the
// output (padded mode: l * Mt, its block being Mt row tiles; grouped mode:
// expert_offsets[l] / 32). Its ACTIVE row tiles are the first ceil(count_l / 32). The active output
// tiles of all experts, ordered (expert, column tile, row tile), are split into
// contiguous, even shares over the cores (core i of P gets total/P tiles, the first
// total%P cores one more).
//
// Why column-major inside an expert: consecutive tiles of a share then use the same
// weight column w[l][:, n], so the reader loads that column once per "column run"
// (the maximal stretch of the share with one (l, n)) and the compute kernel keeps it
// resident while it multiplies every row tile of the run. A share may begin or end in
// the middle of a column; that column is then read once by each core holding part of
// it, so the weight bytes read in total are at most the active experts' bytes plus one
// column (Kt tiles) per boundary between two cores' shares.
#pragma once

#include <cstdint>

#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/dataflow_buffer.h"
#include "api/dataflow/noc.h"

namespace moe_bmm {

constexpr uint32_t kTileRows = 32;

// Runtime description of the problem, identical on every core (common runtime args).
struct Shape {
    uint32_t num_experts;    // E_l
    uint32_t grouped;        // 1: x is (M, Kd) packed by expert_offsets; 0: x is (E_l, T, Kd)
    uint32_t rows;           // padded: T; grouped: M (logical rows of x and of the output)
    uint32_t row_tiles;      // padded: Mt = ceil(T / 32) per expert; grouped: ceil(M / 32) in total
    uint32_t slot_bytes;     // bytes between two routing entries in the L1 scratch (DRAM alignment)
};

// Common runtime args shared by the reader and the writer (the factory writes them in this order).
namespace common_arg {
constexpr uint32_t num_experts = 0;
constexpr uint32_t grouped = 1;
constexpr uint32_t rows = 2;
constexpr uint32_t row_tiles = 3;
constexpr uint32_t slot_bytes = 4;
constexpr uint32_t inner_tiles = 5;   // Kt
constexpr uint32_t col_tiles = 6;     // Nt
constexpr uint32_t inner_block = 7;   // k tiles per CB push (divides Kt)
constexpr uint32_t resident_weights = 8;  // 1: a column run's Kt weight tiles stay in cb_w; 0: streamed per tile
constexpr uint32_t first_address = 9; // kernel-specific buffer addresses follow
}  // namespace common_arg

// Per-core runtime args of the reader and the writer.
namespace core_arg {
constexpr uint32_t core_index = 0;
constexpr uint32_t num_cores = 1;
}  // namespace core_arg

inline Shape shape_from_common_args() {
    return {get_common_arg_val<uint32_t>(common_arg::num_experts), get_common_arg_val<uint32_t>(common_arg::grouped),
            get_common_arg_val<uint32_t>(common_arg::rows), get_common_arg_val<uint32_t>(common_arg::row_tiles),
            get_common_arg_val<uint32_t>(common_arg::slot_bytes)};
}

// View over the routing scratch in L1: slot l holds count_l, slot E_l + l holds offset_l.
class Routing {
public:
    Routing(uint32_t l1_base, const Shape& shape) : base_(l1_base), shape_(shape) {}

    // Valid rows of expert l, clamped to the rows its block can hold, so a bad count
    // can never make a kernel read or write outside the tensors.
    uint32_t valid_rows(uint32_t l) const {
        const uint32_t count = word(l);
        const uint32_t first_row = row_tile_base(l) * kTileRows;
        const uint32_t capacity = shape_.grouped ? (first_row < shape_.rows ? shape_.rows - first_row : 0)
                                                 : shape_.rows;
        return count < capacity ? count : capacity;
    }
    uint32_t active_row_tiles(uint32_t l) const { return (valid_rows(l) + kTileRows - 1) / kTileRows; }
    // First output/input row tile of expert l (offsets are tile aligned by contract; floored here).
    uint32_t row_tile_base(uint32_t l) const {
        return shape_.grouped ? word(shape_.num_experts + l) / kTileRows : l * shape_.row_tiles;
    }
    // Row tiles of expert l's block in the padded layout (the zero-filled range is [active, this)).
    uint32_t block_row_tiles() const { return shape_.row_tiles; }
    uint32_t num_experts() const { return shape_.num_experts; }

private:
    uint32_t word(uint32_t slot) const { return moe_kernel::column_entry(base_, slot, shape_.slot_bytes); }
    uint32_t base_;
    Shape shape_;
};

// Reads count_l (and offset_l in grouped mode) into the slots of `scratch`, a CB of
// 2 * E_l pages of slot_bytes each, and returns the L1 address of slot 0. The CB is
// this kernel's own: it produces and consumes the entries (reserve, read, push, wait)
// and keeps them at the front until the kernel ends.
template <typename Accessor>
uint32_t load_routing(const Noc& noc, DataflowBuffer& scratch, const Accessor& counts, const Accessor& offsets,
                      const Shape& shape) {
    const uint32_t slots = 2 * shape.num_experts;
    scratch.reserve_back(slots);
    const uint32_t base = scratch.get_write_ptr();
    moe_kernel::read_column_async(counts, base, shape.num_experts, shape.slot_bytes);
    if (shape.grouped) {
        moe_kernel::read_column_async(offsets, base + shape.num_experts * shape.slot_bytes, shape.num_experts,
                                      shape.slot_bytes);
    }
    noc.async_read_barrier();
    scratch.push_back(slots);
    scratch.wait_front(slots);
    return scratch.get_read_ptr();
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

// One output tile: expert, row tile inside the expert's block, column tile.
struct TileCoord {
    uint32_t expert;
    uint32_t row_tile;
    uint32_t col_tile;
};

struct RowTileRange {
    uint32_t lo;
    uint32_t hi;
};

// Walks the tiles (l, n, r) with n in [0, Nt) and r in [lo(l), hi(l)), in that order.
// RowRange is a callable (l) -> {lo, hi}; the active set uses [0, active_row_tiles(l)),
// the zero-fill set of the padded mode [active_row_tiles(l), Mt).
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

    // Tiles left in the current column run among the next `remaining` tiles of a share
    // (the current one included): the run ends at the column's last row tile.
    uint32_t run_length(uint32_t remaining) const {
        const uint32_t left_in_column = rows_(expert_).hi - row_;
        return left_in_column < remaining ? left_in_column : remaining;
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

}  // namespace moe_bmm
