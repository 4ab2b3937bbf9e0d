// Writes a contiguous range of output tiles from a circular buffer to an
// interleaved DRAM tensor with the free-function API: the page of tile t lives in
// bank t % NUM_DRAM_BANKS at row t / NUM_DRAM_BANKS of that bank's slice.
//
// Compile-time args: [0] cb_out, [1] tile size in bytes.
// Runtime args: dst_addr (bank-local base address), first_tile, num_tiles.
//
// conformance: kind=dataflow ct_args=16,2048

#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t dst_addr = get_arg_val<uint32_t>(0);
    const uint32_t first_tile = get_arg_val<uint32_t>(1);
    const uint32_t num_tiles = get_arg_val<uint32_t>(2);

    constexpr uint32_t cb_out = get_compile_time_arg_val(0);
    constexpr uint32_t tile_bytes = get_compile_time_arg_val(1);

    for (uint32_t tile = first_tile; tile < first_tile + num_tiles; ++tile) {
        cb_wait_front(cb_out, 1);
        const uint32_t bank = tile % NUM_DRAM_BANKS;
        const uint32_t offset_in_bank = dst_addr + (tile / NUM_DRAM_BANKS) * tile_bytes;
        const uint64_t dst_noc_addr = get_noc_addr_from_bank_id<true>(bank, offset_in_bank);
        noc_async_write(get_read_ptr(cb_out), dst_noc_addr, tile_bytes);
        // The CB slot is reused as soon as it is popped: the write must have left L1.
        noc_async_writes_flushed();
        cb_pop_front(cb_out, 1);
    }
    noc_async_write_barrier();
}
