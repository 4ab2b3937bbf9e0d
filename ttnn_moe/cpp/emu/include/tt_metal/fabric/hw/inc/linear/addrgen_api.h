// tt-metal 0.81.1's tt::tt_fabric::linear packet-header builders over an
// address generator, for the emulator: the NOC address of page `id` (+ offset)
// of a tensor (TensorAccessor or an interleaved address generator) becomes the
// packet's write target. Unicast write and fused write + increment are
// emulated; the scatter and sparse-multicast builders are declared so headers
// defining helpers around them build, and fail to build when instantiated.
#pragma once

#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "api/tensor/tensor_accessor.h"
#include "hostdev/fabric_edm_packet_header.hpp"
#include "tt_metal/fabric/hw/inc/noc_addr.h"

namespace tt::tt_fabric {
namespace linear {
namespace addrgen_detail {

// The page size a builder uses when the caller gives none (the generator's page).
template <typename AddrGenType>
uint32_t get_page_size(const AddrGenType& d) {
    if constexpr (requires { d.get_aligned_page_size(); }) {
        return d.get_aligned_page_size();
    } else if constexpr (requires { d.aligned_page_size; }) {
        return d.aligned_page_size;
    } else {
        return d.page_size;
    }
}

template <typename AddrGenType>
FORCE_INLINE uint64_t get_noc_address(const AddrGenType& d, const uint32_t id, uint32_t offset = 0) {
    const uint64_t noc_address = d.get_noc_addr(id, offset);
    const auto [xy, local] = get_noc_address_components(noc_address);
    return safe_get_noc_addr(xy.x, xy.y, local);
}

template <typename T>
inline constexpr bool emulated = !sizeof(T*);

}  // namespace addrgen_detail

template <typename AddrGenType>
FORCE_INLINE void to_noc_unicast_write(uint32_t packet_payload_size, volatile PACKET_HEADER_TYPE* pkt_hdr,
                                       const uint32_t id, const AddrGenType& d, uint32_t offset = 0) {
    pkt_hdr->to_noc_unicast_write(NocUnicastCommandHeader{addrgen_detail::get_noc_address(d, id, offset)},
                                  packet_payload_size);
}

template <typename AddrGenType>
FORCE_INLINE void to_noc_unicast_write(volatile PACKET_HEADER_TYPE* pkt_hdr, const uint32_t id, const AddrGenType& d,
                                       uint32_t offset = 0) {
    to_noc_unicast_write(addrgen_detail::get_page_size(d), pkt_hdr, id, d, offset);
}

template <typename AddrGenType>
FORCE_INLINE void to_noc_fused_unicast_write_atomic_inc(uint32_t page_size, volatile PACKET_HEADER_TYPE* pkt_hdr,
                                                        const NocUnicastAtomicIncCommandHeader& atomic_inc_spec,
                                                        const uint32_t id, const AddrGenType& d, uint32_t offset = 0) {
    pkt_hdr->to_noc_fused_unicast_write_atomic_inc(
        NocUnicastAtomicIncFusedCommandHeader(addrgen_detail::get_noc_address(d, id, offset),
                                              atomic_inc_spec.noc_address, atomic_inc_spec.val, atomic_inc_spec.flush),
        page_size);
}

template <typename AddrGenType>
FORCE_INLINE void to_noc_fused_unicast_write_atomic_inc(volatile PACKET_HEADER_TYPE* pkt_hdr,
                                                        const NocUnicastAtomicIncCommandHeader& atomic_inc_spec,
                                                        const uint32_t id, const AddrGenType& d, uint32_t offset = 0) {
    to_noc_fused_unicast_write_atomic_inc(addrgen_detail::get_page_size(d), pkt_hdr, atomic_inc_spec, id, d, offset);
}

template <typename AddrGenType, typename... Rest>
FORCE_INLINE void to_noc_unicast_scatter_write(Rest&&...) {
    static_assert(addrgen_detail::emulated<AddrGenType>,
                  "tt::tt_fabric::linear::to_noc_unicast_scatter_write: fabric scatter writes are not emulated");
}

template <typename AddrGenType, typename... Rest>
FORCE_INLINE void to_noc_sparse_mcast_write(Rest&&...) {
    static_assert(addrgen_detail::emulated<AddrGenType>,
                  "tt::tt_fabric::linear::to_noc_sparse_mcast_write: fabric sparse multicast is not emulated");
}

}  // namespace linear

namespace addrgen_detail = linear::addrgen_detail;

}  // namespace tt::tt_fabric
