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
// x: per row tile, its Kt tiles in blocks of inner_block tiles (cb_x, double-buffered).
//
// Compile-time args: TensorAccessorArgs of x, w, num_routed_tokens (in that order);
//   named: cb_x, cb_w, cb_work, cb_routing.
// Common runtime args: see moe_bmm::common_arg, then x, w, num_routed_tokens and
//   expert_offsets addresses (grouped mode only; 0 in padded mode).
// Per-core runtime args: core_index, num_cores.
//
// conformance: kind=dataflow ct_args=2,2048,2,2048,2,32 named=cb_x:0,cb_w:1,cb_work:2,cb_routing:3 formats=2:uint32,3:uint32 label=bf16-weights
// conformance: kind=dataflow ct_args=2,2048,2,1088,2,32 named=cb_x:0,cb_w:1,cb_work:2,cb_routing:3 formats=1:bfloat8_b,2:uint32,3:uint32 label=bfp8-weights
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/dataflow_buffer.h"
#include "api/dataflow/noc.h"
#include "api/tensor/noc_traits.h"
#include "moe_bmm_work_split.hpp"

namespace {

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

}  // namespace

void kernel_main() {
    using namespace moe_bmm;
    constexpr uint32_t cb_x = get_named_compile_time_arg_val("cb_x");
    constexpr uint32_t cb_w = get_named_compile_time_arg_val("cb_w");
    constexpr uint32_t cb_work = get_named_compile_time_arg_val("cb_work");
    constexpr uint32_t cb_routing = get_named_compile_time_arg_val("cb_routing");
    constexpr auto x_args = TensorAccessorArgs<0>();
    constexpr auto w_args = TensorAccessorArgs<x_args.next_compile_time_args_offset()>();
    constexpr auto routing_args = TensorAccessorArgs<w_args.next_compile_time_args_offset()>();

    const Shape shape = shape_from_common_args();
    const uint32_t inner_tiles = get_common_arg_val<uint32_t>(common_arg::inner_tiles);
    const uint32_t col_tiles = get_common_arg_val<uint32_t>(common_arg::col_tiles);
    const uint32_t inner_block = get_common_arg_val<uint32_t>(common_arg::inner_block);
    const bool resident_weights = get_common_arg_val<uint32_t>(common_arg::resident_weights) != 0;
    const auto x = TensorAccessor(x_args, get_common_arg_val<uint32_t>(common_arg::first_address + 0));
    const auto w = TensorAccessor(w_args, get_common_arg_val<uint32_t>(common_arg::first_address + 1));
    const auto counts = TensorAccessor(routing_args, get_common_arg_val<uint32_t>(common_arg::first_address + 2));
    const auto offsets = TensorAccessor(routing_args, get_common_arg_val<uint32_t>(common_arg::first_address + 3));
    const uint32_t core_index = get_arg_val<uint32_t>(core_arg::core_index);
    const uint32_t num_cores = get_arg_val<uint32_t>(core_arg::num_cores);

    const Noc noc;
    DataflowBuffer x_dfb(cb_x);
    DataflowBuffer w_dfb(cb_w);
    DataflowBuffer work_dfb(cb_work);
    DataflowBuffer routing_dfb(cb_routing);

    const Routing routing(load_routing(noc, routing_dfb, counts, offsets, shape), shape);
    auto active_rows = [&routing](uint32_t l) { return RowTileRange{0, routing.active_row_tiles(l)}; };
    TileWalk walk(shape.num_experts, col_tiles, active_rows);
    const Share share = even_share(walk.total(), core_index, num_cores);

    // The compute kernel learns its schedule from these words (read_tile_value).
    auto send_word = [&work_dfb](uint32_t value) {
        work_dfb.reserve_back(1);
        moe_kernel::words(work_dfb.get_write_ptr())[0] = value;
        work_dfb.push_back(1);
    };
    send_word(share.count);

    const uint32_t x_tile_bytes = x_dfb.get_tile_size();
    const uint32_t w_tile_bytes = w_dfb.get_tile_size();
    // Reads the k tiles [k0, k0 + count) of w[l][:, n] (page w_first_page at k = 0) into cb_w's reserved back.
    auto read_w_tiles = [&](uint32_t w_first_page, uint32_t k0, uint32_t count) {
        for (uint32_t j = 0; j < count; ++j) {
            noc.async_read(w, w_dfb, w_tile_bytes, {.page_id = w_first_page + (k0 + j) * col_tiles},
                           {.offset_bytes = j * w_tile_bytes});
        }
    };

    for (uint32_t t = 0; t < share.count;) {
        TileCoord tile = t == 0 ? walk.seek(share.first) : walk.next();
        const uint32_t run = walk.run_length(share.count - t);
        const uint32_t valid_rows = routing.valid_rows(tile.expert);
        const uint32_t w_first_page = tile.expert * inner_tiles * col_tiles + tile.col_tile;
        send_word(run);

        if (resident_weights) {
            w_dfb.reserve_back(inner_tiles);
            read_w_tiles(w_first_page, 0, inner_tiles);
            noc.async_read_barrier();
            w_dfb.push_back(inner_tiles);
        }
        for (uint32_t r = 0; r < run; ++r) {
            if (r > 0) tile = walk.next();
            const uint32_t rows_in_tile = valid_rows - tile.row_tile * kTileRows;  // > 0: the tile is active
            const uint32_t x_first_page = (routing.row_tile_base(tile.expert) + tile.row_tile) * inner_tiles;
            for (uint32_t k0 = 0; k0 < inner_tiles; k0 += inner_block) {
                x_dfb.reserve_back(inner_block);
                if (!resident_weights) w_dfb.reserve_back(inner_block);
                for (uint32_t j = 0; j < inner_block; ++j) {
                    noc.async_read(x, x_dfb, x_tile_bytes, {.page_id = x_first_page + k0 + j},
                                   {.offset_bytes = j * x_tile_bytes});
                }
                if (!resident_weights) read_w_tiles(w_first_page, k0, inner_block);
                noc.async_read_barrier();
                if (rows_in_tile < kTileRows) {
                    for (uint32_t j = 0; j < inner_block; ++j) {
                        zero_bf16_tile_rows(x_dfb.get_write_ptr() + j * x_tile_bytes, rows_in_tile);
                    }
                }
                x_dfb.push_back(inner_block);
                if (!resident_weights) w_dfb.push_back(inner_block);
            }
        }
        t += run;
    }
}
