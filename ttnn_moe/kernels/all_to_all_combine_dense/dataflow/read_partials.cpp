// all_to_all_combine_dense's partial reader: the core's second data-movement RISC, on the other
// NOC. For every token of its core's share [first, end), in order, it feeds the compute kernel
// (sum_partials.cpp) the number n of the token's partial rows (a cb_count page, at least 1) and
// then the rows partials[q, t] of the positions q that sent one, in ascending q (num_chunks pages
// of 1024 elements each, the tail of the last zeroed), or one zero row when none did. The rows go
// kReadBatchRows behind one read barrier, so several DRAM reads are in flight at once, while the
// dataflow kernel (combine_dense.cpp) writes the sums out on the other NOC.
//
// Which positions sent a token it reads from the presence rows the dataflow kernel merges in
// cb_presence (plain L1 of this core), a window of kPresenceWindowTokens tokens at a time: it waits
// for sem_windows_merged to count the window, and once every row of the window is pushed sets
// sem_windows_read so the next window may be merged into the same rows.
//
// Runtime args: all_to_all_combine_dense_shared.hpp (reader_arg); the compile-time args are the
// partials accessor (IsDram|RuntimePageSize).
// conformance: kind=dataflow ct_args=130 named=cb_partial:1,cb_count:7,cb_presence:3,sem_windows_merged:2,sem_windows_read:3
#include <cstdint>

#include "../../../cpp/ops/all_to_all_combine_dense/all_to_all_combine_dense_shared.hpp"
#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"

using namespace ttnn_moe::all_to_all_combine_dense_shared;

namespace {

constexpr uint32_t cb_partial = get_named_compile_time_arg_val(named_arg::kCbPartial);
constexpr uint32_t cb_count = get_named_compile_time_arg_val(named_arg::kCbCount);
constexpr uint32_t cb_presence = get_named_compile_time_arg_val(named_arg::kCbPresence);
constexpr uint32_t sem_windows_merged = get_named_compile_time_arg_val(named_arg::kSemWindowsMerged);
constexpr uint32_t sem_windows_read = get_named_compile_time_arg_val(named_arg::kSemWindowsRead);
constexpr uint32_t kPageBytes = kTileElements * 2;

// Rows reserved in cb_partial a batch at a time and pushed once the batch's reads have landed. A
// batch is kReadBatchRows rows, fewer where the ring ends (a reservation never runs past it).
class RowBatch {
public:
    RowBatch(uint32_t ring_rows, uint32_t num_chunks) : ring_rows_(ring_rows), num_chunks_(num_chunks) {}

    // L1 of the next row's first page (a full batch is pushed first).
    uint32_t take() {
        if (taken_ > 0 && taken_ == reserved_) push();
        if (taken_ == 0) {
            const uint32_t to_ring_end = ring_rows_ - ring_row_;
            reserved_ = to_ring_end < kReadBatchRows ? to_ring_end : kReadBatchRows;
            cb_reserve_back(cb_partial, reserved_ * num_chunks_);
            base_ = get_write_ptr(cb_partial);
        }
        return base_ + taken_++ * num_chunks_ * kPageBytes;
    }
    // The taken rows to the compute kernel, once their reads have landed.
    void push() {
        if (taken_ == 0) return;
        noc_async_read_barrier();
        cb_push_back(cb_partial, taken_ * num_chunks_);
        ring_row_ = (ring_row_ + taken_) % ring_rows_;
        taken_ = 0;
    }

private:
    uint32_t ring_rows_, num_chunks_;
    uint32_t ring_row_ = 0;  // the ring row of the next reservation
    uint32_t base_ = 0;
    uint32_t reserved_ = 0;
    uint32_t taken_ = 0;
};

void push_partial_count(uint32_t count) {
    cb_reserve_back(cb_count, 1);
    moe_kernel::words(get_write_ptr(cb_count))[0] = count;
    cb_push_back(cb_count, 1);
}

}  // namespace

void kernel_main() {
    constexpr auto partials_args = TensorAccessorArgs<0>();
    const uint32_t num_tokens = get_arg_val<uint32_t>(reader_arg::kNumTokens);
    const uint32_t hidden = get_arg_val<uint32_t>(reader_arg::kHidden);
    const uint32_t line_size = get_arg_val<uint32_t>(reader_arg::kLineSize);
    const uint32_t presence_stride = get_arg_val<uint32_t>(reader_arg::kPresenceStride);
    const auto partials = TensorAccessor(partials_args, get_arg_val<uint32_t>(reader_arg::kPartialsAddress),
                                         moe_kernel::align_up(hidden * 2));
    const uint32_t num_chunks = (hidden + kTileElements - 1) / kTileElements;
    // The presence rows are plain L1 merged by the dataflow kernel: their address, never reserved here.
    const uint32_t presence = get_write_ptr(cb_presence);
    volatile tt_l1_ptr uint32_t* merged =
        reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_windows_merged));
    volatile tt_l1_ptr uint32_t* read = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_windows_read));
    RowBatch batch(get_arg_val<uint32_t>(reader_arg::kPartialRows), num_chunks);

    const uint32_t first = get_arg_val<uint32_t>(reader_arg::kFirstToken);
    const uint32_t end = get_arg_val<uint32_t>(reader_arg::kEndToken);
    uint32_t windows = 0;
    uint32_t presence_first = 0;  // the token of the rows' first word (the dataflow kernel's rule)
    for (uint32_t t = first; t < end; ++t) {
        if ((t - first) % kPresenceWindowTokens == 0) {
            if (windows > 0) {
                batch.push();  // the last window's sums can be written before the next is merged
                noc_semaphore_set(read, windows);
            }
            noc_semaphore_wait_min(merged, ++windows);
            presence_first = t - t % (moe_kernel::kDramAlign / 4);
        }
        uint32_t present = 0;
        for (uint32_t q = 0; q < line_size; ++q) {
            present += moe_kernel::words(presence + q * presence_stride)[t - presence_first] != 0 ? 1 : 0;
        }
        push_partial_count(present > 0 ? present : 1);
        if (present == 0) {
            moe_kernel::fill_words(batch.take(), num_chunks * kPageBytes / 4, 0);
            continue;
        }
        for (uint32_t q = 0; q < line_size; ++q) {
            if (moe_kernel::words(presence + q * presence_stride)[t - presence_first] == 0) continue;
            const uint32_t row = batch.take();
            for (uint32_t chunk = 0; chunk < num_chunks; ++chunk) {
                const uint32_t left = hidden - chunk * kTileElements;
                const uint32_t elements = left < kTileElements ? left : kTileElements;
                const uint32_t page = row + chunk * kPageBytes;
                noc_async_read(partials.get_noc_addr(q * num_tokens + t, chunk * kTileElements * 2), page,
                               elements * 2);
                moe_kernel::zero_page_tail(page, elements * 2, kPageBytes);
            }
        }
    }
    batch.push();
}
