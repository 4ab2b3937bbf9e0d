// conformance: kind=dataflow named=metadata_ready_semaphore_id:4,matmul_chunk_ready_semaphore_id:6,matmul_chunk_available_semaphore_id:5,per_expert_cb:2,chunk_cb:0,experts:8,counts_bytes:32,store_chunks:1,hidden_tiles:8,drain_noc_x:7,drain_noc_y:11
// Stands in for moe_compute's matmul ring on one ring core while only the tilize stage runs: it takes part in
// the stage's handshake as the ring's dm1 does (waits for metadata_ready, then per chunk for matmul_chunk_ready
// and, once the chunk is used, increments matmul_chunk_available on the tilize drain) and stores what arrived:
// the per-expert token counts (CB per_expert_cb) and, with store_chunks, every chunk of `hidden_tiles` tiles from
// its half of the double-buffered chunk CB (chunk c in half c % 2), to DRAM.
// Runtime args: counts DRAM address (a counts_bytes page per ring core), chunks DRAM address (a page of
// hidden_tiles tiles per chunk), this core's index in the ring, the chunk pages per core.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t metadata_ready_id = get_named_compile_time_arg_val("metadata_ready_semaphore_id");
    constexpr uint32_t chunk_ready_id = get_named_compile_time_arg_val("matmul_chunk_ready_semaphore_id");
    constexpr uint32_t chunk_available_id = get_named_compile_time_arg_val("matmul_chunk_available_semaphore_id");
    constexpr uint32_t per_expert_cb = get_named_compile_time_arg_val("per_expert_cb");
    constexpr uint32_t chunk_cb = get_named_compile_time_arg_val("chunk_cb");
    constexpr uint32_t experts = get_named_compile_time_arg_val("experts");
    constexpr uint32_t counts_bytes = get_named_compile_time_arg_val("counts_bytes");
    constexpr bool store_chunks = get_named_compile_time_arg_val("store_chunks") == 1;
    constexpr uint32_t hidden_tiles = get_named_compile_time_arg_val("hidden_tiles");
    constexpr uint32_t drain_x = get_named_compile_time_arg_val("drain_noc_x");
    constexpr uint32_t drain_y = get_named_compile_time_arg_val("drain_noc_y");
    constexpr uint32_t tile_bytes = 2048;
    constexpr uint32_t chunk_bytes = hidden_tiles * tile_bytes;
    const uint32_t counts_addr = get_arg_val<uint32_t>(0);
    const uint32_t chunks_addr = get_arg_val<uint32_t>(1);
    const uint32_t ring_index = get_arg_val<uint32_t>(2);
    const uint32_t pages_per_core = get_arg_val<uint32_t>(3);

    noc_semaphore_wait_min(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(metadata_ready_id)), 1);
    const uint32_t counts_l1 = get_read_ptr(per_expert_cb);
    const InterleavedAddrGen<true> counts{.bank_base_address = counts_addr, .page_size = counts_bytes};
    noc_async_write(counts_l1, counts.get_noc_addr(ring_index), counts_bytes);
    uint32_t chunks = 0;
    for (uint32_t e = 0; e < experts; ++e) {
        chunks += (reinterpret_cast<volatile tt_l1_ptr uint32_t*>(counts_l1)[e] + 31) / 32;
    }
    const InterleavedAddrGen<true> out{.bank_base_address = chunks_addr, .page_size = chunk_bytes};
    const uint32_t buffer = get_write_ptr(chunk_cb);
    auto* ready = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(chunk_ready_id));
    for (uint32_t c = 0; c < chunks; ++c) {
        noc_semaphore_wait_min(ready, c + 1);
        if constexpr (store_chunks) {
            noc_async_write(buffer + (c % 2) * chunk_bytes, out.get_noc_addr(ring_index * pages_per_core + c),
                            chunk_bytes);
            noc_async_write_barrier();
        }
        noc_semaphore_inc(get_noc_addr(drain_x, drain_y, get_semaphore(chunk_available_id)), 1);
    }
    noc_async_atomic_barrier();
}
