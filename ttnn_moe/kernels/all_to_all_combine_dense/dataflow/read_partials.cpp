// all_to_all_combine_dense's partial reader: the core's second data-movement RISC, on the other
// NOC. For every token of its core's share [first, end), in order, it waits until combine_dense.cpp
// hands the token over (sem_handoff_ready > t - first), reads the partial rows of the source positions named in the handoff
// block into the cb_partial block reserved there (chunk c of the i-th of them at page
// c * line_size + first_page + i), waits for them to land and reports the token done
// (sem_handoff_done = t - first + 1). The dataflow kernel reads the other partials meanwhile and pushes
// the block once both halves landed, so each token's partial bytes cross two NOC ports.
//
// Runtime args: all_to_all_combine_dense_shared.hpp (reader_arg); the compile-time args are the
// partials accessor (IsDram|RuntimePageSize).
// conformance: kind=dataflow ct_args=130 named=cb_handoff:8,sem_handoff_ready:2,sem_handoff_done:3
#include <cstdint>

#include "../../../cpp/ops/all_to_all_combine_dense/all_to_all_combine_dense_shared.hpp"
#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"

using namespace ttnn_moe::all_to_all_combine_dense_shared;

void kernel_main() {
    constexpr uint32_t cb_handoff = get_named_compile_time_arg_val(named_arg::kCbHandoff);
    constexpr uint32_t sem_handoff_ready = get_named_compile_time_arg_val(named_arg::kSemHandoffReady);
    constexpr uint32_t sem_handoff_done = get_named_compile_time_arg_val(named_arg::kSemHandoffDone);
    constexpr auto partials_args = TensorAccessorArgs<0>();
    const uint32_t num_tokens = get_arg_val<uint32_t>(reader_arg::kNumTokens);
    const uint32_t hidden = get_arg_val<uint32_t>(reader_arg::kHidden);
    const uint32_t line_size = get_arg_val<uint32_t>(reader_arg::kLineSize);
    const auto partials = TensorAccessor(partials_args, get_arg_val<uint32_t>(reader_arg::kPartialsAddress),
                                         moe_kernel::align_up(hidden * 2));
    const uint32_t num_chunks = (hidden + kTileElements - 1) / kTileElements;
    const uint32_t page_bytes = kTileElements * 2;
    // The block is plain L1 written by the dataflow kernel: its address, never reserved here.
    volatile uint32_t* handoff = moe_kernel::words(get_write_ptr(cb_handoff));
    volatile tt_l1_ptr uint32_t* ready =
        reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_handoff_ready));
    volatile tt_l1_ptr uint32_t* done = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_handoff_done));

    const uint32_t first = get_arg_val<uint32_t>(reader_arg::kFirstToken);
    const uint32_t end = get_arg_val<uint32_t>(reader_arg::kEndToken);
    for (uint32_t t = first; t < end; ++t) {
        noc_semaphore_wait_min(ready, t - first + 1);
        const uint32_t block = handoff[kHandoffBlock];
        const uint32_t sources = handoff[kHandoffSources];
        uint32_t i = handoff[kHandoffFirstPage];
        for (uint32_t q = 0; q < line_size; ++q) {
            if ((sources >> q & 1u) == 0) continue;
            for (uint32_t chunk = 0; chunk < num_chunks; ++chunk) {
                const uint32_t left = hidden - chunk * kTileElements;
                const uint32_t elements = left < kTileElements ? left : kTileElements;
                const uint32_t page = block + (chunk * line_size + i) * page_bytes;
                noc_async_read(partials.get_noc_addr(q * num_tokens + t, chunk * kTileElements * 2), page,
                               elements * 2);
                moe_kernel::zero_page_tail(page, elements * 2, page_bytes);
            }
            ++i;
        }
        noc_async_read_barrier();
        noc_semaphore_set(done, t - first + 1);
    }
}
