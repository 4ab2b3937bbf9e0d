// moe_bmm reader: derives this core's share of the active output tiles from the
// device-resident counts and feeds the compute kernel, one column run (consecutive
// tiles of the share with the same expert l and column tile n, see
// moe_bmm_work_split.hpp) at a time. Weights of experts without tokens are never read.
//
// Schedule for the compute kernel, through cb_work (one uint32 per page, read there
// with read_tile_value): first the share's tile count, then before each column run
// the run's number of row tiles.
//
// Weights, by the factory's choice (common arg resident_weights):
//   resident (1): the Kt tiles of w[l][:, n] are read ONCE per run into cb_w (Kt pages)
//                 and stay there while the compute kernel does every row tile of the run;
//   streamed (0): when a whole column does not fit in L1, the column is re-read in blocks
//                 of inner_block tiles for every row tile, next to the x blocks.
// SwiGLU (common arg weight_halves = 2): output column n has two weight columns, gate (w column
// tile 2n) and up (2n + 1); wherever one column (or block) goes above, the gate's goes first and
// the up's right after it, so each x tile read serves both products.
// x, by the factory's choice (common arg resident_x_rows = R):
//   resident: an expert with at most R active row tiles has them read ONCE per core into cb_x
//             (Kt tiles per row tile) when its first column run starts, and they stay there
//             for all its column runs of the share (the compute kernel pops them when the
//             next expert's arrive), instead of being re-read for every column;
//   streamed: otherwise, per row tile, its Kt tiles in blocks of inner_block tiles
//             (cb_x, double-buffered).
// Before each column run the compute kernel gets a second word saying which (x_block in
// moe_bmm_shared.hpp).
// Addend (common arg addend = 1): before each output tile's x and weight blocks, the addend's tile
// of that output tile goes to cb_addend; the compute kernel starts the tile's sum from it.
//
// Compile-time args: TensorAccessorArgs of x, w, num_routed_tokens (reader_tensor order).
// Common runtime args (common_arg, then reader_common_arg), per-core runtime args
// (core_arg) and the named compile-time args: cpp/ops/moe_bmm/moe_bmm_shared.hpp.
//
// conformance: kind=dataflow ct_args=2,2048,2,2048,2,32 named=cb_x:0,cb_w:1,cb_work:2,cb_routing:3,cb_addend:6 formats=2:uint32,3:uint32 label=bf16-weights
// conformance: kind=dataflow ct_args=2,2048,2,1088,2,32 named=cb_x:0,cb_w:1,cb_work:2,cb_routing:3,cb_addend:6 formats=1:bfloat8_b,2:uint32,3:uint32 label=bfp8-weights
#include <cstdint>
#include <tuple>

#include "api/dataflow/dataflow_api.h"
#include "moe_bmm_work_split.hpp"

using namespace moe_bmm;

namespace {

constexpr uint32_t cb_x = get_named_compile_time_arg_val(named_arg::kCbX);
constexpr uint32_t cb_w = get_named_compile_time_arg_val(named_arg::kCbW);
constexpr uint32_t cb_work = get_named_compile_time_arg_val(named_arg::kCbWork);
constexpr uint32_t cb_routing = get_named_compile_time_arg_val(named_arg::kCbRouting);
constexpr uint32_t cb_addend = get_named_compile_time_arg_val(named_arg::kCbAddend);
constexpr auto kTensorArgs = make_tensor_accessor_args_tuple<reader_tensor::kCount, 0>();

struct Args {
    Shape shape;
    uint32_t x_addr, w_addr, counts_addr, offsets_addr, addend_addr;
    uint32_t core_index, num_cores;
};

Args read_args() {
    Args a;
    a.shape = read_shape();
    a.x_addr = get_common_arg_val<uint32_t>(reader_common_arg::kXAddr);
    a.w_addr = get_common_arg_val<uint32_t>(reader_common_arg::kWAddr);
    a.counts_addr = get_common_arg_val<uint32_t>(reader_common_arg::kCountsAddr);
    a.offsets_addr = get_common_arg_val<uint32_t>(reader_common_arg::kOffsetsAddr);
    a.addend_addr = get_common_arg_val<uint32_t>(reader_common_arg::kAddendAddr);
    a.core_index = get_arg_val<uint32_t>(core_arg::kCoreIndex);
    a.num_cores = get_arg_val<uint32_t>(core_arg::kNumCores);
    return a;
}

// Zeroes rows [first_row, 32) of a bfloat16 tile in L1 (four 16x16 faces: top-left,
// top-right, bottom-left, bottom-right; row-major inside a face). Rows of the last
// active row tile past count_l may hold anything (grouped inputs leave them
// unwritten), so they are cleared before the matmul: output rows past count_l are 0.
void zero_bf16_tile_rows(uint32_t tile_addr, uint32_t first_row) {
    constexpr uint32_t face_dim = 16;
    constexpr uint32_t face_row_words = face_dim * sizeof(uint16_t) / sizeof(uint32_t);
    constexpr uint32_t face_words = face_dim * face_row_words;
    auto* tile = reinterpret_cast<volatile uint32_t*>(tile_addr);
    for (uint32_t row = first_row; row < 2 * face_dim; ++row) {
        const uint32_t left_face = row < face_dim ? 0 : 2;
        const uint32_t row_in_face = (row % face_dim) * face_row_words;
        for (uint32_t face = left_face; face < left_face + 2; ++face) {
            for (uint32_t w = 0; w < face_row_words; ++w) tile[face * face_words + row_in_face + w] = 0;
        }
    }
}

// One word of the compute kernel's schedule (it reads it with read_tile_value).
void send_word(uint32_t value) {
    cb_reserve_back(cb_work, 1);
    moe_kernel::words(get_write_ptr(cb_work))[0] = value;
    cb_push_back(cb_work, 1);
}

// Starts reading `count` tiles (of cb's tile size) of `tensor` from page first_page on, `stride`
// pages apart, to L1 from address l1 on.
template <typename Tensor>
void read_tiles_async_at(uint32_t l1, uint32_t cb, const Tensor& tensor, uint32_t first_page, uint32_t stride,
                         uint32_t count) {
    const uint32_t tile_bytes = get_tile_size(cb);
    for (uint32_t j = 0; j < count; ++j) {
        noc_async_read(tensor.get_noc_addr(first_page + j * stride), l1 + j * tile_bytes, tile_bytes);
    }
}

// The same into the reserved back of `cb`.
template <typename Tensor>
void read_tiles_async(uint32_t cb, const Tensor& tensor, uint32_t first_page, uint32_t stride, uint32_t count) {
    read_tiles_async_at(get_write_ptr(cb), cb, tensor, first_page, stride, count);
}

// A column run: consecutive tiles of the share with the same expert l and column tile n.
struct ColumnRun {
    uint32_t w_first_page;  // page of w[l][0, n]'s first weight column (the gate's in SwiGLU mode)
    uint32_t valid_rows;    // rows of expert l
};

// Starts reading tiles [k0, k0 + count) of the run's weight columns (each half's after the
// previous half's) into the reserved back of cb_w.
template <typename W>
void read_weight_tiles_async(const Shape& shape, const W& w, const ColumnRun& run, uint32_t k0, uint32_t count) {
    const uint32_t stride = shape.weight_col_tiles();
    const uint32_t half_bytes = count * get_tile_size(cb_w);
    for (uint32_t h = 0; h < shape.weight_halves; ++h) {
        read_tiles_async_at(get_write_ptr(cb_w) + h * half_bytes, cb_w, w, run.w_first_page + k0 * stride + h, stride,
                            count);
    }
}

// The Kt weight tiles of the run's column(s), once; they stay in cb_w for the whole run.
template <typename W>
void read_resident_column(const Shape& shape, const W& w, const ColumnRun& run) {
    const uint32_t pages = shape.weight_halves * shape.inner_tiles;
    cb_reserve_back(cb_w, pages);
    read_weight_tiles_async(shape, w, run, 0, shape.inner_tiles);
    noc_async_read_barrier();
    cb_push_back(cb_w, pages);
}

// The Kt x tiles of one row tile in blocks of inner_block (with the weights' block next to
// each when they are streamed); rows past the expert's count are zeroed.
template <typename X, typename W>
void read_row_tile(const Shape& shape, const X& x, const W& w, const ColumnRun& run, uint32_t x_first_page,
                   uint32_t rows_in_tile) {
    const uint32_t x_tile_bytes = get_tile_size(cb_x);
    const uint32_t w_block_pages = shape.weight_halves * shape.inner_block;
    for (uint32_t k0 = 0; k0 < shape.inner_tiles; k0 += shape.inner_block) {
        cb_reserve_back(cb_x, shape.inner_block);
        if (!shape.resident_weights) cb_reserve_back(cb_w, w_block_pages);
        read_tiles_async(cb_x, x, x_first_page + k0, 1, shape.inner_block);
        if (!shape.resident_weights) read_weight_tiles_async(shape, w, run, k0, shape.inner_block);
        noc_async_read_barrier();
        if (rows_in_tile < kTileRows) {
            for (uint32_t j = 0; j < shape.inner_block; ++j) {
                zero_bf16_tile_rows(get_write_ptr(cb_x) + j * x_tile_bytes, rows_in_tile);
            }
        }
        cb_push_back(cb_x, shape.inner_block);
        if (!shape.resident_weights) cb_push_back(cb_w, w_block_pages);
    }
}

// The addend's tile at `page` (the output tile's page) into cb_addend.
template <typename Addend>
void read_addend_tile(const Addend& addend, uint32_t page) {
    cb_reserve_back(cb_addend, 1);
    read_tiles_async(cb_addend, addend, page, 1, 1);
    noc_async_read_barrier();
    cb_push_back(cb_addend, 1);
}

// Pushes the `pad` pages from cb_x's write position to the ring's end without data, so that the
// next resident block starts at the base; the compute kernel pops them.
void push_filler(uint32_t pad) {
    if (pad == 0) return;
    cb_reserve_back(cb_x, pad);
    cb_push_back(cb_x, pad);
}

// An expert's active row tiles of x into cb_x, one row tile (Kt pages) per push; rows past
// the expert's count are zeroed.
template <typename X>
void read_resident_rows(const Shape& shape, const X& x, const Routing& routing, uint32_t expert) {
    const uint32_t x_tile_bytes = get_tile_size(cb_x);
    const uint32_t valid_rows = routing.valid_rows(expert);
    for (uint32_t r = 0; r < routing.active_row_tiles(expert); ++r) {
        cb_reserve_back(cb_x, shape.inner_tiles);
        read_tiles_async(cb_x, x, (routing.row_tile_base(expert) + r) * shape.inner_tiles, 1, shape.inner_tiles);
        noc_async_read_barrier();
        const uint32_t rows_in_tile = valid_rows - r * kTileRows;
        if (rows_in_tile < kTileRows) {
            for (uint32_t j = 0; j < shape.inner_tiles; ++j) {
                zero_bf16_tile_rows(get_write_ptr(cb_x) + j * x_tile_bytes, rows_in_tile);
            }
        }
        cb_push_back(cb_x, shape.inner_tiles);
    }
}

// The weight column(s) in blocks of inner_block tiles, for one row tile (streamed weights, resident x).
template <typename W>
void read_weight_blocks(const Shape& shape, const W& w, const ColumnRun& run) {
    const uint32_t w_block_pages = shape.weight_halves * shape.inner_block;
    for (uint32_t k0 = 0; k0 < shape.inner_tiles; k0 += shape.inner_block) {
        cb_reserve_back(cb_w, w_block_pages);
        read_weight_tiles_async(shape, w, run, k0, shape.inner_block);
        noc_async_read_barrier();
        cb_push_back(cb_w, w_block_pages);
    }
}

}  // namespace

void kernel_main() {
    const Args args = read_args();
    const Shape& shape = args.shape;
    const auto x = TensorAccessor(std::get<reader_tensor::kX>(kTensorArgs), args.x_addr);
    const auto w = TensorAccessor(std::get<reader_tensor::kW>(kTensorArgs), args.w_addr);
    const auto counts = TensorAccessor(std::get<reader_tensor::kRouting>(kTensorArgs), args.counts_addr);
    const auto offsets = TensorAccessor(std::get<reader_tensor::kRouting>(kTensorArgs), args.offsets_addr);
    const auto addend = TensorAccessor(std::get<reader_tensor::kX>(kTensorArgs), args.addend_addr);

    const Routing routing(load_routing(cb_routing, counts, offsets, shape), shape);
    auto active_rows = [&routing](uint32_t l) { return RowTileRange{0, routing.active_row_tiles(l)}; };
    TileWalk walk(shape.num_experts, shape.col_tiles, active_rows);
    const Share share = even_share(walk.total(), args.core_index, args.num_cores);
    send_word(share.count);

    // One column run at a time: its length and x block to the compute kernel, the expert's x rows
    // when they become resident, its weights, its row tiles.
    uint32_t resident_expert = shape.num_experts;  // none
    const uint32_t x_ring = x_ring_pages(shape.inner_tiles, shape.inner_block, shape.resident_x_rows);
    uint32_t x_pushed = 0;  // pages pushed into cb_x so far
    for (uint32_t t = 0; t < share.count;) {
        TileCoord tile = t == 0 ? walk.seek(share.first) : walk.next();
        const uint32_t run_tiles = walk.run_length(share.count - t);
        const ColumnRun run{
            tile.expert * shape.inner_tiles * shape.weight_col_tiles() + shape.weight_halves * tile.col_tile,
            routing.valid_rows(tile.expert)};
        const uint32_t expert_rows = routing.active_row_tiles(tile.expert);
        const bool x_resident = expert_rows <= shape.resident_x_rows;
        const uint32_t state = !x_resident                      ? x_block::kStreamed
                               : tile.expert == resident_expert ? x_block::kKept
                                                                : x_block::kLoaded;
        const uint32_t pad = state == x_block::kLoaded ? (x_ring - x_pushed % x_ring) % x_ring : 0;
        send_word(run_tiles);
        send_word(state | expert_rows << x_block::kRowsShift | tile.row_tile << x_block::kFirstRowShift |
                  pad << x_block::kPadShift);
        if (state == x_block::kLoaded) {
            push_filler(pad);
            read_resident_rows(shape, x, routing, tile.expert);
            x_pushed += pad + expert_rows * shape.inner_tiles;
        } else if (state == x_block::kStreamed) {
            x_pushed += run_tiles * shape.inner_tiles;
        }
        resident_expert = x_resident ? tile.expert : shape.num_experts;
        if (shape.resident_weights) read_resident_column(shape, w, run);
        for (uint32_t r = 0; r < run_tiles; ++r) {
            if (r > 0) tile = walk.next();
            if (shape.addend) read_addend_tile(addend, output_page(shape, routing, tile));
            if (x_resident) {
                if (!shape.resident_weights) read_weight_blocks(shape, w, run);
                continue;
            }
            const uint32_t rows_in_tile = run.valid_rows - tile.row_tile * kTileRows;  // > 0: the tile is active
            const uint32_t x_first_page = (routing.row_tile_base(tile.expert) + tile.row_tile) * shape.inner_tiles;
            read_row_tile(shape, x, w, run, x_first_page, rows_in_tile);
        }
        t += run_tiles;
    }
}
