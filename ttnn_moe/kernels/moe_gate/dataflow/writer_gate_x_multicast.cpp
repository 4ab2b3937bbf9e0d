// moe_gate x stream, resident split (RISC-V 0 / NOC 0): this core's grid row's row tiles of x into cb_x,
// block by block along H. The row's cores take turns: the row's n-th block is read from DRAM by its
// column n % split_cols, which multicasts it into the same cb_x slot of every core of the row (itself
// included), so each x tile leaves DRAM once, and each core's NOC port reads and sends a share.
//
// Handshake per block, with two semaphores per core: a receiver reserves its slot, clears its
// sem_x_valid and increments the sender's sem_x_ready, then waits for its sem_x_valid to be 1; the
// sender reads the block, waits until sem_x_ready counts every receiver, clears it, multicasts the
// block and then its own sem_x_valid (set to 1) (writes on one NOC land in issue order, so the flag
// never overtakes the data). A receiver increments a sender's sem_x_ready again only after the flag of
// every block before came, and that sender multicasts its flag after clearing sem_x_ready, so a count
// never mixes two blocks. Every core pushes the same blocks, so a block's slot has the same address on
// all of them.
//
// Compile-time args: TensorAccessorArgs of x. Runtime args (x_stream_arg) and the named compile-time
// args: cpp/ops/moe_gate/moe_gate_shared.hpp.
//
// conformance: kind=dataflow ct_args=2,2048 named=cb_x:0,sem_x_ready:1,sem_x_valid:2
#include <cstdint>

#include "../../../cpp/ops/moe_gate/moe_gate_shared.hpp"
#include "api/dataflow/dataflow_api.h"

using namespace ttnn_moe::moe_gate_shared;

namespace {

constexpr uint32_t cb_x = get_named_compile_time_arg_val(named_arg::kCbX);
constexpr uint32_t sem_x_ready = get_named_compile_time_arg_val(named_arg::kSemXReady);
constexpr uint32_t sem_x_valid = get_named_compile_time_arg_val(named_arg::kSemXValid);
constexpr auto kXArgs = TensorAccessorArgs<0>();

uint32_t column_noc_x(uint32_t col) {
    return get_arg_val<uint32_t>(x_stream_arg::kColumnNocXs + col);
}

// The multicast address of `l1` on every core of the row. NOC 1 runs the other way round, so its
// rectangle would start at the far end.
uint64_t row_addr(uint32_t cols, uint32_t row_noc_y, uint32_t l1) {
    const uint32_t first = column_noc_x(0), last = column_noc_x(cols - 1);
    if (noc_index == 1) return get_noc_multicast_addr(last, row_noc_y, first, row_noc_y, l1);
    return get_noc_multicast_addr(first, row_noc_y, last, row_noc_y, l1);
}

}  // namespace

void kernel_main() {
    const uint32_t x_addr = get_arg_val<uint32_t>(x_stream_arg::kXAddr);
    const uint32_t inner_tiles = get_arg_val<uint32_t>(x_stream_arg::kInnerTiles);
    const uint32_t inner_block = get_arg_val<uint32_t>(x_stream_arg::kInnerBlock);
    const uint32_t first_row_tile = get_arg_val<uint32_t>(x_stream_arg::kFirstRowTile);
    const uint32_t num_row_tiles = get_arg_val<uint32_t>(x_stream_arg::kNumRowTiles);
    const uint32_t cols = get_arg_val<uint32_t>(x_stream_arg::kSplitCols);
    const uint32_t col = get_arg_val<uint32_t>(x_stream_arg::kSplitCol);
    const uint32_t row_noc_y = get_arg_val<uint32_t>(x_stream_arg::kRowNocY);
    const auto x = TensorAccessor(kXArgs, x_addr);
    const uint32_t tile_bytes = get_tile_size(cb_x);
    const uint32_t block_bytes = inner_block * tile_bytes;
    const uint32_t ready_l1 = get_semaphore(sem_x_ready), valid_l1 = get_semaphore(sem_x_valid);
    auto* ready = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(ready_l1);
    auto* valid = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(valid_l1);

    // Block n of the row is row tile first_row_tile + n / blocks_per_row_tile, its k block n % that. The
    // row's blocks go in rounds of split_cols, one per core; cb_x holds two rounds, so a round's slots
    // never wrap (every block is pushed whole, in order, from the CB's start).
    const uint32_t blocks_per_row_tile = inner_tiles / inner_block;
    const uint32_t blocks = num_row_tiles * blocks_per_row_tile;
    for (uint32_t round = 0; round < blocks; round += cols) {
        const uint32_t round_blocks = blocks - round < cols ? blocks - round : cols;
        // The whole round's slots at once: every core reads its block of the round from DRAM at the same
        // time, so the reads hold the row's NOC ports once per round, not once per multicast.
        cb_reserve_back(cb_x, round_blocks * inner_block);
        const uint32_t round_l1 = get_write_ptr(cb_x);
        if (col < round_blocks) {
            const uint32_t n = round + col;
            const uint32_t first_page =
                (first_row_tile + n / blocks_per_row_tile) * inner_tiles + (n % blocks_per_row_tile) * inner_block;
            const uint32_t l1 = round_l1 + col * block_bytes;
            for (uint32_t j = 0; j < inner_block; ++j) {
                noc_async_read(x.get_noc_addr(first_page + j), l1 + j * tile_bytes, tile_bytes);
            }
            noc_async_read_barrier();
        }
        for (uint32_t sender = 0; sender < round_blocks; ++sender) {
            const uint32_t l1 = round_l1 + sender * block_bytes;
            if (cols > 1 && sender == col) {
                noc_semaphore_wait(ready, cols - 1);
                noc_semaphore_set(ready, 0);
                noc_semaphore_set(valid, 1);
                noc_async_write_multicast_loopback_src(l1, row_addr(cols, row_noc_y, l1), block_bytes, cols);
                noc_semaphore_set_multicast_loopback_src(valid_l1, row_addr(cols, row_noc_y, valid_l1), cols);
            } else if (cols > 1) {
                noc_semaphore_set(valid, 0);
                noc_semaphore_inc(get_noc_addr(column_noc_x(sender), row_noc_y, ready_l1), 1);
                noc_semaphore_wait(valid, 1);
            }
            cb_push_back(cb_x, inner_block);
        }
        noc_async_writes_flushed();  // this core's multicast has left its slot before the slot is refilled
    }
    noc_async_write_barrier();
    noc_async_atomic_barrier();
}
