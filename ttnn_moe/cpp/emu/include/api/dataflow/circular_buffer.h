// tt-metal 0.81.1's CircularBuffer object (data-movement side): a CB id with
// the cb_* calls as methods, usable as a local L1 NOC endpoint (write pointer
// as destination, read pointer as source) and as the target of
// Noc::async_write_zeros. Compute kernels get the TRISC variant
// (ttnn_moe_emu/compute_circular_buffer.h).
#pragma once

#ifdef COMPILE_FOR_TRISC
#include "ttnn_moe_emu/compute_circular_buffer.h"
#else

#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/noc.h"
// As in 0.81.1 (whose zero-fill helpers include it): a kernel that includes this header may move tensor pages
// with Noc::async_read / async_write without naming the tensor NOC traits itself.
#include "api/tensor/noc_traits.h"

class CircularBuffer {
public:
    explicit CircularBuffer(uint32_t cb_id) : cb_id_(cb_id) {}

    uint32_t get_cb_id() const { return cb_id_; }

    void reserve_back(int32_t num_pages) { cb_reserve_back(cb_id_, num_pages); }
    void push_back(int32_t num_pages) { cb_push_back(cb_id_, num_pages); }
    void wait_front(int32_t num_pages) { cb_wait_front(cb_id_, num_pages); }
    void pop_front(int32_t num_pages) { cb_pop_front(cb_id_, num_pages); }

    bool pages_reservable_at_back(int32_t num_pages) const { return cb_pages_reservable_at_back(cb_id_, num_pages); }
    bool pages_available_at_front(int32_t num_pages) const { return cb_pages_available_at_front(cb_id_, num_pages); }

    uint32_t get_tile_size() const { return ::get_tile_size(cb_id_); }
    uint32_t get_write_ptr() const { return ::get_write_ptr(cb_id_); }
    uint32_t get_read_ptr() const { return ::get_read_ptr(cb_id_); }

private:
    uint32_t cb_id_;
};

template <>
struct noc_traits_t<CircularBuffer> {
    using src_args_type = DataflowBufferArgs;
    using dst_args_type = DataflowBufferArgs;
    template <Noc::AddressType address_type>
    static uint32_t src_addr(const CircularBuffer& src, const Noc&, const src_args_type& args) {
        static_assert(address_type == Noc::AddressType::LOCAL_L1, "a CircularBuffer is a local L1 source");
        return src.get_read_ptr() + args.offset_bytes;
    }
    template <Noc::AddressType address_type>
    static uint32_t dst_addr(const CircularBuffer& dst, const Noc&, const dst_args_type& args) {
        static_assert(address_type == Noc::AddressType::LOCAL_L1, "a CircularBuffer is a local L1 destination");
        return dst.get_write_ptr() + args.offset_bytes;
    }
};

#endif  // COMPILE_FOR_TRISC
