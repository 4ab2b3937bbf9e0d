#include "ops/moe_bmm/moe_bmm_layout.hpp"

#include <algorithm>

#include "ops/moe_bmm/moe_bmm_shared.hpp"

namespace ttnn_moe::ops::moe_bmm {

std::vector<CircularBuffer> circular_buffers(const Dims& dims, program::DataFormat weight_format) {
    using program::DataFormat;
    using program::tile_size_bytes;
    const uint32_t routing_slots = 2 * dims.num_experts;  // counts, then offsets
    // Two of each block: the reader fills one while the compute kernel eats the other. x: the
    // segment's rows of one k block; w: one column's k block (gate and up side by side in SwiGLU).
    // A row-major x arrives in cb_x_rows, one block of strips (the pages of a block of tiles), and cb_x
    // holds the one block the compute kernel tilizes from it and then eats: the reader fills the next
    // block while the matmuls run, in the L1 of the two tiled blocks.
    const uint32_t x_block_pages = dims.row_block * dims.inner_block;
    const uint32_t x_pages = (dims.row_major_x ? 1 : 2) * x_block_pages;
    const uint32_t w_pages = 2 * dims.weight_halves * dims.inner_block;
    // Partial sums of a segment's output tiles between k blocks (both products in SwiGLU), in the
    // DST format so that spilling and reloading them changes no bit. With all of Kt in one block no
    // sum is spilled, and the ring would be most of the op's L1 (64 fp32 SwiGLU tiles: 512 KB).
    const bool spills = dims.inner_tiles > dims.inner_block;
    const uint32_t partial_pages = dims.output_block * dims.weight_halves;
    const DataFormat partial_format = dims.fp32_partials ? DataFormat::Float32 : DataFormat::Float16_b;
    std::vector<CircularBuffer> cbs{
        {kCbX, DataFormat::Float16_b, tile_size_bytes(DataFormat::Float16_b), x_pages},
        {kCbW, weight_format, tile_size_bytes(weight_format), w_pages},
        {kCbWork, DataFormat::UInt32, kWorkPageBytes, 2},
        {kCbRoutingReader, DataFormat::UInt32, kRoutingSlotBytes, routing_slots},
        {kCbRoutingWriter, DataFormat::UInt32, kRoutingSlotBytes, routing_slots},
        {kCbZero, DataFormat::Float16_b, tile_size_bytes(DataFormat::Float16_b), 1},
        {kCbStatus, DataFormat::UInt32, ttnn_moe::moe_bmm_shared::kStatusWords * 4, 1},
        {kCbOut, DataFormat::Float16_b, tile_size_bytes(DataFormat::Float16_b), 2},
    };
    if (spills) cbs.push_back({kCbPartial, partial_format, tile_size_bytes(partial_format), partial_pages});
    if (dims.row_major_x) {
        cbs.push_back({kCbXRows, DataFormat::Float16_b, tile_size_bytes(DataFormat::Float16_b), x_block_pages});
    }
    // The addend: two tiles the reader streams, one per output tile; a row-major addend arrives as
    // strips of up to kAddendStripTiles tiles (two: the reader reads the next while the compute kernel
    // tilizes one), tilized into all of a segment's tiles before its first k block, since the first
    // block needs them column by column and a strip holds a row tile's columns.
    if (dims.addend) {
        const uint32_t tile = tile_size_bytes(DataFormat::Float16_b);
        cbs.push_back({kCbAddend, DataFormat::Float16_b, tile, dims.row_major_addend ? dims.output_block : 2});
        if (dims.row_major_addend) {
            const uint32_t strip = std::min(ttnn_moe::moe_bmm_shared::kAddendStripTiles, dims.col_tiles);
            cbs.push_back({kCbAddendRows, DataFormat::Float16_b, tile, 2 * strip});
        }
    }
    return cbs;
}

}  // namespace ttnn_moe::ops::moe_bmm
