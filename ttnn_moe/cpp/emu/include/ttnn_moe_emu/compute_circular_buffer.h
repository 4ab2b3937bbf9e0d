// tt-metal 0.81.1's CircularBuffer object as a compute kernel sees it (api/dataflow/circular_buffer.h
// under COMPILE_FOR_TRISC): the CB id with the compute cb_* calls as methods and the TRISC view of its
// pointers (16-byte units). The data-movement variant is the rest of that header.
#pragma once

#include <cstdint>

#include "internal/circular_buffer_interface.h"
#include "ttnn_moe_emu/compute_api.h"

class CircularBuffer {
public:
    explicit CircularBuffer(uint32_t cb_id) : cb_id_(cb_id) {}

    uint32_t get_cb_id() const { return cb_id_; }

    void reserve_back(int32_t num_pages) { ckernel::cb_reserve_back(cb_id_, static_cast<uint32_t>(num_pages)); }
    void push_back(int32_t num_pages) { ckernel::cb_push_back(cb_id_, static_cast<uint32_t>(num_pages)); }
    void wait_front(int32_t num_pages) { ckernel::cb_wait_front(cb_id_, static_cast<uint32_t>(num_pages)); }
    void pop_front(int32_t num_pages) { ckernel::cb_pop_front(cb_id_, static_cast<uint32_t>(num_pages)); }

    // fifo_wr_ptr / fifo_rd_ptr of the TRISC view, as the real class returns them.
    uint32_t get_write_ptr() const { return get_local_cb_interface(cb_id_).fifo_wr_ptr; }
    uint32_t get_read_ptr() const { return get_local_cb_interface(cb_id_).fifo_rd_ptr; }

private:
    uint32_t cb_id_;
};
