// conformance: kind=dataflow named=metadata_ready_semaphore_id:4,per_expert_total_tokens_cb_id:2,num_experts:2,tiles_per_block:28,tile_bytes:576
// Stands in for moe_compute's ring compute kernel on one ring core while dm0 streams the weights: it hands dm0
// the per-expert token counts (CB per_expert_total_tokens_cb_id, then metadata_ready = 1, as the tilize drain
// does) and consumes the weight CB (c_3) block by block as compute does, storing every block to DRAM in order.
// Runtime args: DRAM output address (a page of tiles_per_block tiles per block), this core's first output page,
// W0/W1 blocks and W2 blocks per (expert, chunk), then the token count of each expert.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t metadata_ready_id = get_named_compile_time_arg_val("metadata_ready_semaphore_id");
    constexpr uint32_t counts_cb = get_named_compile_time_arg_val("per_expert_total_tokens_cb_id");
    constexpr uint32_t experts = get_named_compile_time_arg_val("num_experts");
    constexpr uint32_t tiles_per_block = get_named_compile_time_arg_val("tiles_per_block");
    constexpr uint32_t tile_bytes = get_named_compile_time_arg_val("tile_bytes");
    constexpr uint32_t weight_cb = 3;
    constexpr uint32_t block_bytes = tiles_per_block * tile_bytes;
    const uint32_t out_addr = get_arg_val<uint32_t>(0);
    uint32_t page = get_arg_val<uint32_t>(1);
    const uint32_t w0_w1_blocks = get_arg_val<uint32_t>(2);
    const uint32_t w2_blocks = get_arg_val<uint32_t>(3);

    auto* counts = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(counts_cb));
    uint32_t chunks = 0;
    for (uint32_t e = 0; e < experts; ++e) {
        counts[e] = get_arg_val<uint32_t>(4 + e);
        chunks += (counts[e] + 31) / 32;
    }
    noc_semaphore_set(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(metadata_ready_id)), 1);

    const InterleavedAddrGen<true> out{.bank_base_address = out_addr, .page_size = block_bytes};
    for (uint32_t block = 0; block < chunks * (w0_w1_blocks + w2_blocks); ++block) {
        cb_wait_front(weight_cb, tiles_per_block);
        noc_async_write(get_read_ptr(weight_cb), out.get_noc_addr(page++), block_bytes);
        noc_async_write_barrier();
        cb_pop_front(weight_cb, tiles_per_block);
    }
}
