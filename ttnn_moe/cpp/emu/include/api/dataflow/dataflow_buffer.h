// DataflowBuffer: the object view of one circular buffer (0.81.1), usable in
// dataflow and compute kernels.
#pragma once

#include <cstdint>

#include "api/debug/assert.h"
#include "emu_kernel_config.h"
#include "ttnn_moe_emu/kernel_common.h"
#ifndef COMPILE_FOR_TRISC
#include "api/dataflow/noc.h"
#endif

namespace dfb {
enum AccessPattern : uint8_t { STRIDED, ALL, BLOCKED, UNKNOWN };
}  // namespace dfb

class DataflowBuffer {
public:
    DataflowBuffer(uint16_t logical_dfb_id) : logical_dfb_id_(logical_dfb_id) {}

    uint16_t get_id() const { return logical_dfb_id_; }
    uint32_t get_entry_size() const { return info(ttnn_moe_emu::CbField::PageSize); }
    uint32_t get_stride_size() const { return get_entry_size(); }
    uint32_t get_total_num_entries() const { return info(ttnn_moe_emu::CbField::NumPages); }
    uint32_t get_total_size_bytes() const { return info(ttnn_moe_emu::CbField::TotalSize); }
    uint32_t get_local_num_entries() const { return get_total_num_entries(); }
    uint32_t get_local_size_bytes() const { return get_total_size_bytes(); }
    uint32_t get_ring_span_bytes() const { return get_total_size_bytes(); }
    uint32_t get_ring_span_num_entries() const { return get_total_num_entries(); }
    uint16_t get_producer_share() const { return 1; }
    uint16_t get_consumer_share() const { return 1; }
    uint16_t get_producer_stride_tiles() const { return 1; }
    uint16_t get_consumer_stride_tiles() const { return 1; }

    void reserve_back(uint16_t num_entries) { ttnn_moe_emu::services->cb_reserve_back(logical_dfb_id_, num_entries); }
    void push_back(uint16_t num_entries) { ttnn_moe_emu::services->cb_push_back(logical_dfb_id_, num_entries); }
    void wait_front(uint16_t num_entries) { ttnn_moe_emu::services->cb_wait_front(logical_dfb_id_, num_entries); }
    void pop_front(uint16_t num_entries) { ttnn_moe_emu::services->cb_pop_front(logical_dfb_id_, num_entries); }

#ifndef COMPILE_FOR_TRISC
    bool pages_reservable_at_back(int32_t num_pages) const {
        return ttnn_moe_emu::services->cb_pages_reservable_at_back(logical_dfb_id_, num_pages) != 0;
    }
    bool pages_available_at_front(int32_t num_pages) const {
        return ttnn_moe_emu::services->cb_pages_available_at_front(logical_dfb_id_, num_pages) != 0;
    }
    void write_barrier(const Noc& noc) const { noc.async_write_barrier(); }
#endif

    constexpr uint32_t get_tile_size() const { return ttnn_moe_emu_config::cb_tile_size[logical_dfb_id_]; }
    constexpr uint32_t get_tile_r_dim() const { return ttnn_moe_emu_config::cb_tile_r_dim[logical_dfb_id_]; }
    constexpr uint32_t get_tile_c_dim() const { return ttnn_moe_emu_config::cb_tile_c_dim[logical_dfb_id_]; }
    constexpr uint32_t get_tile_hw() const { return get_tile_r_dim() * get_tile_c_dim(); }
    constexpr uint32_t get_tile_num_faces() const { return get_tile_hw() >= 1024 ? 4 : get_tile_hw() / 256; }
    constexpr uint32_t get_face_r_dim() const { return get_tile_r_dim() < 16 ? get_tile_r_dim() : 16; }
    constexpr DataFormat get_dataformat() const {
        return static_cast<DataFormat>(ttnn_moe_emu_config::cb_format[logical_dfb_id_]);
    }

    void finish() {}
    uint32_t get_write_ptr() const { return ttnn_moe_emu::services->cb_write_ptr(logical_dfb_id_); }
    uint32_t get_read_ptr() const { return ttnn_moe_emu::services->cb_read_ptr(logical_dfb_id_); }
    void evil_set_write_ptr(uint32_t addr) { ttnn_moe_emu::services->cb_set_write_ptr(logical_dfb_id_, addr); }
    void evil_set_read_ptr(uint32_t addr) { ttnn_moe_emu::services->cb_set_read_ptr(logical_dfb_id_, addr); }

private:
    uint32_t info(ttnn_moe_emu::CbField field) const { return ttnn_moe_emu::services->cb_info(logical_dfb_id_, field); }

    uint16_t logical_dfb_id_;
};

using DataflowBufferAnyPattern = DataflowBuffer;

#ifndef COMPILE_FOR_TRISC
template <>
struct noc_traits_t<DataflowBuffer> {
    using src_args_type = DataflowBufferArgs;
    using dst_args_type = DataflowBufferArgs;
    struct dst_args_mcast_type {
        uint32_t noc_x_start{};
        uint32_t noc_y_start{};
        uint32_t noc_x_end{};
        uint32_t noc_y_end{};
        uint32_t offset_bytes{};
    };
    template <Noc::AddressType address_type>
    static uint32_t src_addr(const DataflowBuffer& src, const Noc&, const src_args_type& args) {
        static_assert(address_type == Noc::AddressType::LOCAL_L1,
                      "DataflowBuffer without mcast range can only be used as L1 source");
        return src.get_read_ptr() + args.offset_bytes;
    }
    template <Noc::AddressType address_type>
    static uint32_t dst_addr(const DataflowBuffer& dst, const Noc&, const dst_args_type& args) {
        static_assert(address_type == Noc::AddressType::LOCAL_L1,
                      "DataflowBuffer without mcast range can only be used as L1 destination");
        return dst.get_write_ptr() + args.offset_bytes;
    }
    template <Noc::AddressType address_type>
    static uint64_t dst_addr_mcast(const DataflowBuffer& dst, const Noc& noc, const dst_args_mcast_type& args) {
        static_assert(address_type == Noc::AddressType::NOC,
                      "DataflowBuffer with mcast range cannot be used as L1 destination");
        return ::get_noc_multicast_addr(args.noc_x_start, args.noc_y_start, args.noc_x_end, args.noc_y_end,
                                        dst.get_write_ptr() + args.offset_bytes, noc.get_noc_id());
    }
};
#endif
