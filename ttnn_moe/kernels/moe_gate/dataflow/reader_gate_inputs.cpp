// moe_gate reader: for each of this core's token row tiles, the row tile of x once (its H/32 tiles
// stay in cb_x while the compute kernel scores them against this core's expert tiles), then the gate
// weight of those expert tiles, tile by tile, in blocks of inner_block tiles along H (cb_w,
// double-buffered).
//
// Compile-time args: TensorAccessorArgs of x, then of gate_weight. Runtime args (reader_arg) and
// the named compile-time args: cpp/ops/moe_gate/moe_gate_shared.hpp.
//
// conformance: kind=dataflow ct_args=2,2048,2,4096 named=cb_x:0,cb_w:1 formats=1:float32 label=fp32-weight
// conformance: kind=dataflow ct_args=2,2048,2,2048 named=cb_x:0,cb_w:1 label=bf16-weight
#include <cstdint>

#include "../../../cpp/ops/moe_gate/moe_gate_shared.hpp"
#include "api/dataflow/dataflow_api.h"

using namespace ttnn_moe::moe_gate_shared;

namespace {

constexpr uint32_t cb_x = get_named_compile_time_arg_val(named_arg::kCbX);
constexpr uint32_t cb_w = get_named_compile_time_arg_val(named_arg::kCbW);
constexpr auto kXArgs = TensorAccessorArgs<0>();
constexpr auto kWArgs = TensorAccessorArgs<kXArgs.next_compile_time_args_offset()>();

struct Args {
    uint32_t x_addr, w_addr, first_row_tile, num_row_tiles, inner_tiles, first_expert_tile, num_expert_tiles;
    uint32_t inner_block;
};

Args read_args() {
    Args a;
    a.x_addr = get_arg_val<uint32_t>(reader_arg::kXAddr);
    a.w_addr = get_arg_val<uint32_t>(reader_arg::kGateWeightAddr);
    a.first_row_tile = get_arg_val<uint32_t>(reader_arg::kFirstRowTile);
    a.num_row_tiles = get_arg_val<uint32_t>(reader_arg::kNumRowTiles);
    a.inner_tiles = get_arg_val<uint32_t>(reader_arg::kInnerTiles);
    a.first_expert_tile = get_arg_val<uint32_t>(reader_arg::kFirstExpertTile);
    a.num_expert_tiles = get_arg_val<uint32_t>(reader_arg::kNumExpertTiles);
    a.inner_block = get_arg_val<uint32_t>(reader_arg::kInnerBlock);
    return a;
}

// Reads `count` consecutive tiles of `tensor` from page first_page on into cb's reserved back.
template <typename Tensor>
void read_tiles(uint32_t cb, const Tensor& tensor, uint32_t first_page, uint32_t count) {
    const uint32_t tile_bytes = get_tile_size(cb);
    const uint32_t l1 = get_write_ptr(cb);
    for (uint32_t j = 0; j < count; ++j)
        noc_async_read(tensor.get_noc_addr(first_page + j), l1 + j * tile_bytes, tile_bytes);
    noc_async_read_barrier();
}

}  // namespace

void kernel_main() {
    const Args a = read_args();
    const auto x = TensorAccessor(kXArgs, a.x_addr);
    const auto w = TensorAccessor(kWArgs, a.w_addr);
    for (uint32_t r = 0; r < a.num_row_tiles; ++r) {
        cb_reserve_back(cb_x, a.inner_tiles);
        read_tiles(cb_x, x, (a.first_row_tile + r) * a.inner_tiles, a.inner_tiles);
        cb_push_back(cb_x, a.inner_tiles);
        // gate_weight is (E, H): the H/32 tiles of expert tile e are pages e * H/32 .. on.
        for (uint32_t e = a.first_expert_tile; e < a.first_expert_tile + a.num_expert_tiles; ++e) {
            for (uint32_t k0 = 0; k0 < a.inner_tiles; k0 += a.inner_block) {
                cb_reserve_back(cb_w, a.inner_block);
                read_tiles(cb_w, w, e * a.inner_tiles + k0, a.inner_block);
                cb_push_back(cb_w, a.inner_block);
            }
        }
    }
}
