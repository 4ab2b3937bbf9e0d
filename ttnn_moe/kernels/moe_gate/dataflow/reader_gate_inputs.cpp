// moe_gate reader: for each of this core's token row tiles, the gate weight of the core's expert
// tiles, tile by tile, in blocks of inner_block tiles along H (cb_w, double-buffered). The row tile of
// x comes over the other NOC, read by the core's writer kernel (gate_x_row_tile.hpp).
//
// Compile-time args: TensorAccessorArgs of gate_weight. Runtime args (reader_arg) and the named
// compile-time args: cpp/ops/moe_gate/moe_gate_shared.hpp.
//
// conformance: kind=dataflow ct_args=2,4096 named=cb_w:1 formats=1:float32 label=fp32-weight
// conformance: kind=dataflow ct_args=2,2048 named=cb_w:1 label=bf16-weight
#include <cstdint>

#include "../../../cpp/ops/moe_gate/moe_gate_shared.hpp"
#include "api/dataflow/dataflow_api.h"

using namespace ttnn_moe::moe_gate_shared;

namespace {

constexpr uint32_t cb_w = get_named_compile_time_arg_val(named_arg::kCbW);
constexpr auto kWArgs = TensorAccessorArgs<0>();

struct Args {
    uint32_t w_addr, num_row_tiles, inner_tiles, first_expert_tile, num_expert_tiles, inner_block;
};

Args read_args() {
    Args a;
    a.w_addr = get_arg_val<uint32_t>(reader_arg::kGateWeightAddr);
    a.num_row_tiles = get_arg_val<uint32_t>(reader_arg::kNumRowTiles);
    a.inner_tiles = get_arg_val<uint32_t>(reader_arg::kInnerTiles);
    a.first_expert_tile = get_arg_val<uint32_t>(reader_arg::kFirstExpertTile);
    a.num_expert_tiles = get_arg_val<uint32_t>(reader_arg::kNumExpertTiles);
    a.inner_block = get_arg_val<uint32_t>(reader_arg::kInnerBlock);
    return a;
}

}  // namespace

void kernel_main() {
    const Args a = read_args();
    const auto w = TensorAccessor(kWArgs, a.w_addr);
    const uint32_t tile_bytes = get_tile_size(cb_w);
    for (uint32_t r = 0; r < a.num_row_tiles; ++r) {
        // gate_weight is (E, H): the H/32 tiles of expert tile e are pages e * H/32 .. on.
        for (uint32_t e = a.first_expert_tile; e < a.first_expert_tile + a.num_expert_tiles; ++e) {
            for (uint32_t k0 = 0; k0 < a.inner_tiles; k0 += a.inner_block) {
                cb_reserve_back(cb_w, a.inner_block);
                const uint32_t l1 = get_write_ptr(cb_w);
                for (uint32_t j = 0; j < a.inner_block; ++j) {
                    noc_async_read(w.get_noc_addr(e * a.inner_tiles + k0 + j), l1 + j * tile_bytes, tile_bytes);
                }
                noc_async_read_barrier();
                cb_push_back(cb_w, a.inner_block);
            }
        }
    }
}
