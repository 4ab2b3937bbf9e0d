// Reads a contiguous range of tile pages of an interleaved DRAM tensor into a
// dataflow buffer, one tile at a time, with the object API (Noc, DataflowBuffer,
// TensorAccessor).
//
// Compile-time args: [0, 2) TensorAccessorArgs of the source tensor.
// Named compile-time args: cb_in (the dataflow buffer the tiles go to).
// Runtime args: src_addr, first_tile, num_tiles.
//
// conformance: kind=dataflow ct_args=2,2048 named=cb_in:0
// conformance: kind=dataflow ct_args=2,1088 named=cb_in:1 formats=1:bfloat8_b label=bfp8

#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/dataflow_buffer.h"
#include "api/dataflow/noc.h"
#include "api/tensor/noc_traits.h"

void kernel_main() {
    const uint32_t src_addr = get_arg_val<uint32_t>(0);
    const uint32_t first_tile = get_arg_val<uint32_t>(1);
    const uint32_t num_tiles = get_arg_val<uint32_t>(2);

    constexpr uint32_t cb_in = get_named_compile_time_arg_val("cb_in");
    constexpr auto src_args = TensorAccessorArgs<0>();

    Noc noc;
    DataflowBuffer in(cb_in);
    const uint32_t tile_bytes = in.get_entry_size();
    const auto src = TensorAccessor(src_args, src_addr, tile_bytes);

    for (uint32_t tile = first_tile; tile < first_tile + num_tiles; ++tile) {
        in.reserve_back(1);
        noc.async_read(src, in, tile_bytes, {.page_id = tile}, {.offset_bytes = 0});
        noc.async_read_barrier();
        in.push_back(1);
    }
}
