// tt-metal 0.81.1's remote circular buffers (api/remote_circular_buffer.h): the kernel side of a
// GlobalCircularBuffer, a buffer one core fills in other cores' L1 (the tensor prefetcher's path).
// Global circular buffers are not emulated; the header exists because tt-metal's descriptor fork of the
// matmul in1 reader includes it unconditionally and uses it only under ENABLE_GLOBAL_CB. Its calls are
// declared with their signatures, so such kernels build, and end the run naming the call when made.
#pragma once

#include <cstdint>

#include "api/dataflow/dataflow_api.h"

#define TTNN_MOE_EMU_REMOTE_CB_NOT_EMULATED(call) \
    ttnn_moe_emu::fail("experimental::" call ": remote (global) circular buffers are not emulated")

namespace experimental {

FORCE_INLINE void remote_cb_wait_front(uint32_t cb_id, uint32_t num_pages) {
    TTNN_MOE_EMU_REMOTE_CB_NOT_EMULATED("remote_cb_wait_front");
}
FORCE_INLINE void remote_cb_pop_front(uint32_t cb_id, uint32_t num_pages, uint8_t noc = noc_index) {
    TTNN_MOE_EMU_REMOTE_CB_NOT_EMULATED("remote_cb_pop_front");
}
FORCE_INLINE void remote_cb_reserve_back(uint32_t cb_id, uint32_t num_pages) {
    TTNN_MOE_EMU_REMOTE_CB_NOT_EMULATED("remote_cb_reserve_back");
}
FORCE_INLINE void remote_cb_sender_barrier(uint32_t cb_id) {
    TTNN_MOE_EMU_REMOTE_CB_NOT_EMULATED("remote_cb_sender_barrier");
}
template <bool skip_ptr_update = true>
FORCE_INLINE void remote_cb_push_back_and_write_pages(uint32_t cb_id, uint32_t local_cb_addr, uint32_t num_pages,
                                                      uint32_t num_rows, uint32_t coalesced_num_pages_per_row,
                                                      uint32_t coalesced_page_size, uint8_t noc = noc_index) {
    TTNN_MOE_EMU_REMOTE_CB_NOT_EMULATED("remote_cb_push_back_and_write_pages");
}
template <uint32_t num_local_cbs>
FORCE_INLINE void align_local_cbs_to_remote_cb(uint32_t remote_cb_index,
                                               const uint32_t (&local_cb_indices)[num_local_cbs]) {
    TTNN_MOE_EMU_REMOTE_CB_NOT_EMULATED("align_local_cbs_to_remote_cb");
}
FORCE_INLINE void update_remote_cb_config_in_l1(uint32_t remote_cb_index) {
    TTNN_MOE_EMU_REMOTE_CB_NOT_EMULATED("update_remote_cb_config_in_l1");
}

}  // namespace experimental
