// moe_bmm writer: derives the same share of active output tiles as this core's reader
// and writes the compute kernel's results to them. In padded mode it also writes zero
// tiles to its even share of the inactive row tiles of every expert's T range (row
// tiles ceil(count_l / 32) .. Mt - 1), so the whole (E_l, T, N) output is defined.
// Grouped mode writes active row tiles only: rows outside them are left as they were
// (nobody reads them: see the op's docstring).
//
// Compile-time args: TensorAccessorArgs of num_routed_tokens, then of the output;
//   named: cb_out, cb_zero, cb_routing.
// Common runtime args: see moe_bmm::common_arg, then output, num_routed_tokens and
//   expert_offsets addresses (grouped mode only; 0 in padded mode).
// Per-core runtime args: core_index, num_cores.
//
// conformance: kind=dataflow ct_args=2,32,2,2048 named=cb_out:16,cb_zero:5,cb_routing:4 formats=4:uint32
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/dataflow_buffer.h"
#include "api/dataflow/noc.h"
#include "api/tensor/noc_traits.h"
#include "moe_bmm_work_split.hpp"

void kernel_main() {
    using namespace moe_bmm;
    constexpr uint32_t cb_out = get_named_compile_time_arg_val("cb_out");
    constexpr uint32_t cb_zero = get_named_compile_time_arg_val("cb_zero");
    constexpr uint32_t cb_routing = get_named_compile_time_arg_val("cb_routing");
    constexpr auto routing_args = TensorAccessorArgs<0>();
    constexpr auto out_args = TensorAccessorArgs<routing_args.next_compile_time_args_offset()>();

    const Shape shape = shape_from_common_args();
    const uint32_t col_tiles = get_common_arg_val<uint32_t>(common_arg::col_tiles);
    const auto out = TensorAccessor(out_args, get_common_arg_val<uint32_t>(common_arg::first_address + 0));
    const auto counts = TensorAccessor(routing_args, get_common_arg_val<uint32_t>(common_arg::first_address + 1));
    const auto offsets = TensorAccessor(routing_args, get_common_arg_val<uint32_t>(common_arg::first_address + 2));
    const uint32_t core_index = get_arg_val<uint32_t>(core_arg::core_index);
    const uint32_t num_cores = get_arg_val<uint32_t>(core_arg::num_cores);

    const Noc noc;
    DataflowBuffer out_dfb(cb_out);
    DataflowBuffer zero_dfb(cb_zero);
    DataflowBuffer routing_dfb(cb_routing);
    const uint32_t tile_bytes = out_dfb.get_tile_size();

    const Routing routing(load_routing(noc, routing_dfb, counts, offsets, shape), shape);
    auto page_of = [&](const TileCoord& tile) {
        return (routing.row_tile_base(tile.expert) + tile.row_tile) * col_tiles + tile.col_tile;
    };

    // Zero tiles first: they need no compute, so they overlap the first matmuls.
    if (!shape.grouped) {
        auto idle_rows = [&routing](uint32_t l) {
            return RowTileRange{routing.active_row_tiles(l), routing.block_row_tiles()};
        };
        TileWalk idle(shape.num_experts, col_tiles, idle_rows);
        const Share zeros = even_share(idle.total(), core_index, num_cores);
        if (zeros.count > 0) {
            zero_dfb.reserve_back(1);
            moe_kernel::fill_words(zero_dfb.get_write_ptr(), tile_bytes / sizeof(uint32_t), 0);
            zero_dfb.push_back(1);
            zero_dfb.wait_front(1);
            for (uint32_t t = 0; t < zeros.count; ++t) {
                const TileCoord tile = t == 0 ? idle.seek(zeros.first) : idle.next();
                noc.async_write(zero_dfb, out, tile_bytes, {.offset_bytes = 0}, {.page_id = page_of(tile)});
            }
            noc.async_write_barrier();
            zero_dfb.pop_front(1);
        }
    }

    auto active_rows = [&routing](uint32_t l) { return RowTileRange{0, routing.active_row_tiles(l)}; };
    TileWalk walk(shape.num_experts, col_tiles, active_rows);
    const Share share = even_share(walk.total(), core_index, num_cores);
    for (uint32_t t = 0; t < share.count; ++t) {
        const TileCoord tile = t == 0 ? walk.seek(share.first) : walk.next();
        out_dfb.wait_front(1);
        noc.async_write(out_dfb, out, tile_bytes, {.offset_bytes = 0}, {.page_id = page_of(tile)});
        noc.async_writes_flushed();
        out_dfb.pop_front(1);
    }
    noc.async_write_barrier();
}
