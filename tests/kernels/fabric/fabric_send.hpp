// Shared by the fabric test kernels: send a buffer over a fabric connection in
// packets of at most max_packet bytes. 1D builds route by hop count along the
// connection's line (linear::experimental), 2D builds by destination chip
// (mesh::experimental); FABRIC_2D comes from the build, as on hardware.
#pragma once

#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "tt_metal/fabric/hw/inc/edm_fabric/edm_fabric_worker_adapters.hpp"
#if defined(FABRIC_2D)
#include "tt_metal/fabric/hw/inc/mesh/api.h"
#else
#include "tt_metal/fabric/hw/inc/linear/api.h"
#endif

// Writes [src, src + n_bytes) to dst_noc_addr on the destination chip; the
// last packet also increments the semaphore at sem_noc_addr (fused) when
// fuse_inc, so the receiver sees the increment only after all the data.
inline void fabric_send_buffer(tt::tt_fabric::WorkerToFabricEdmSender& sender, volatile PACKET_HEADER_TYPE* header,
                               uint32_t route,  // hops (1D) or destination chip id (2D)
                               uint32_t src, uint64_t dst_noc_addr, uint32_t n_bytes, uint32_t max_packet,
                               bool fuse_inc, uint64_t sem_noc_addr) {
    for (uint32_t offset = 0; offset < n_bytes; offset += max_packet) {
        const uint32_t size = n_bytes - offset < max_packet ? n_bytes - offset : max_packet;
        const bool last = offset + size == n_bytes;
        if (last && fuse_inc) {
            tt::tt_fabric::NocUnicastAtomicIncFusedCommandHeader cmd(dst_noc_addr + offset, sem_noc_addr, 1, true);
#if defined(FABRIC_2D)
            tt::tt_fabric::mesh::experimental::fabric_unicast_noc_fused_unicast_with_atomic_inc(
                &sender, header, static_cast<uint8_t>(route), 0, src + offset, size, cmd);
#else
            tt::tt_fabric::linear::experimental::fabric_unicast_noc_fused_unicast_with_atomic_inc(
                &sender, header, src + offset, size, cmd, static_cast<uint8_t>(route));
#endif
        } else {
            tt::tt_fabric::NocUnicastCommandHeader cmd{dst_noc_addr + offset};
#if defined(FABRIC_2D)
            tt::tt_fabric::mesh::experimental::fabric_unicast_noc_unicast_write(
                &sender, header, static_cast<uint8_t>(route), 0, src + offset, size, cmd);
#else
            tt::tt_fabric::linear::experimental::fabric_unicast_noc_unicast_write(&sender, header, src + offset, size,
                                                                                  cmd, static_cast<uint8_t>(route));
#endif
        }
        // The header and source L1 are reused by the next packet: let this one leave first.
        noc_async_writes_flushed();
    }
}

// One semaphore increment on the destination chip.
inline void fabric_send_inc(tt::tt_fabric::WorkerToFabricEdmSender& sender, volatile PACKET_HEADER_TYPE* header,
                            uint32_t route, uint64_t sem_noc_addr) {
    tt::tt_fabric::NocUnicastAtomicIncCommandHeader cmd(sem_noc_addr, 1, true);
#if defined(FABRIC_2D)
    tt::tt_fabric::mesh::experimental::fabric_unicast_noc_unicast_atomic_inc(&sender, header,
                                                                             static_cast<uint8_t>(route), 0, cmd);
#else
    tt::tt_fabric::linear::experimental::fabric_unicast_noc_unicast_atomic_inc(&sender, header, cmd,
                                                                               static_cast<uint8_t>(route));
#endif
}
