#include "ops/moe_bmm/moe_bmm_layout.hpp"

#include "ops/moe_bmm/moe_bmm_shared.hpp"

namespace ttnn_moe::ops::moe_bmm {

std::vector<CircularBuffer> circular_buffers(const Dims& dims, program::DataFormat weight_format) {
    using program::DataFormat;
    using program::tile_size_bytes;
    const uint32_t double_block = 2 * dims.inner_block;   // the reader fills one block while compute eats the other
    const uint32_t routing_slots = 2 * dims.num_experts;  // counts, then offsets
    // Resident: one whole weight column (Kt tiles) stays while a core computes its row tiles.
    // SwiGLU: the gate and the up column side by side (weight_halves of them).
    const uint32_t w_pages = dims.weight_halves * (dims.resident_weights ? dims.inner_tiles : double_block);
    const uint32_t x_pages =
        ttnn_moe::moe_bmm_shared::x_ring_pages(dims.inner_tiles, dims.inner_block, dims.resident_x_rows);
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
    if (dims.addend) cbs.push_back({kCbAddend, DataFormat::Float16_b, tile_size_bytes(DataFormat::Float16_b), 2});
    return cbs;
}

}  // namespace ttnn_moe::ops::moe_bmm
