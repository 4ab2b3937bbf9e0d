// A worker's view of its dispatch line over tt-fabric (0.81.1 worker API).
//
// The worker holds fabric connections to its forward and backward neighbors on the
// line, one per link (num_links per direction), and reaches position q through a
// connection of q's direction: with a 1D fabric (Linear/Ring) the packet header
// carries the hop count, with a 2D fabric (FABRIC_2D) the destination's chip and
// mesh ids. Packets of one connection arrive in order; packets on different links
// do not, so a "done" signal goes on every link.
//
// Runtime args consumed, from `route_arg_idx`: the route words of every line position
//   (cpp/ops/common/common_shared.hpp: direction and hops, chip id and mesh id);
// from `connection_arg_idx` (the block setup_fabric_connection produced on the host):
//   [has_forward][num_links x forward connection args][has_backward][num_links x backward args].
//
// Token payload goes as plain unicast writes, routing metadata as fused write +
// increment packets, so fabric counters that split traffic by packet type tell
// the two apart.
//
// Every send waits until the NOC has read the payload and the header
// (noc_async_writes_flushed), so the caller may reuse both buffers at once.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../../../cpp/ops/common/common_shared.hpp"
#include "api/dataflow/dataflow_api.h"
#if defined(FABRIC_2D)
#include "tt_metal/fabric/hw/inc/mesh/api.h"
#else
#include "tt_metal/fabric/hw/inc/linear/api.h"
#endif

namespace moe_fabric {

using namespace ttnn_moe::common_shared;

class FabricLine {
public:
    // header_l1: L1 room for one PACKET_HEADER_TYPE, 16-byte aligned.
    FabricLine(uint32_t line_size, uint32_t position, uint32_t num_links, size_t route_arg_idx, uint32_t header_l1,
               uint32_t max_payload_bytes)
        : line_size_(line_size),
          position_(position),
          num_links_(num_links),
          max_payload_(max_payload_bytes),
          header_(reinterpret_cast<volatile PACKET_HEADER_TYPE*>(header_l1)) {
        for (uint32_t q = 0; q < line_size; ++q) {
            route_[q] = get_arg_val<uint32_t>(route_arg_idx + kRouteWordsPerPosition * q);
            node_[q] = get_arg_val<uint32_t>(route_arg_idx + kRouteWordsPerPosition * q + 1);
        }
    }

    // Builds and opens the connections listed at `connection_arg_idx`.
    void open(size_t connection_arg_idx) {
        size_t idx = connection_arg_idx;
        for (uint32_t side = 0; side < 2; ++side) {
            has_[side] = get_arg_val<uint32_t>(idx++) != 0;
            for (uint32_t link = 0; has_[side] && link < num_links_; ++link) {
                senders_[side][link] =
                    tt::tt_fabric::WorkerToFabricEdmSender::build_from_args<ProgrammableCoreType::TENSIX>(idx);
                senders_[side][link].open_start();
            }
        }
        for (uint32_t side = 0; side < 2; ++side) {
            for (uint32_t link = 0; has_[side] && link < num_links_; ++link) senders_[side][link].open_finish();
        }
    }

    void close() {
        for (uint32_t side = 0; side < 2; ++side) {
            for (uint32_t link = 0; has_[side] && link < num_links_; ++link) senders_[side][link].close_start();
        }
        for (uint32_t side = 0; side < 2; ++side) {
            for (uint32_t link = 0; has_[side] && link < num_links_; ++link) senders_[side][link].close_finish();
        }
    }

    uint32_t line_size() const { return line_size_; }
    uint32_t position() const { return position_; }
    uint32_t num_links() const { return num_links_; }

    // Writes `bytes` from local L1 to `dst_noc_addr` on the device at position q
    // (q != position) over `link`, split into packets of at most max_payload bytes.
    void write(uint32_t q, uint32_t src_l1, uint64_t dst_noc_addr, uint32_t bytes, uint32_t link = 0) {
        for (uint32_t done = 0; done < bytes; done += max_payload_) {
            const uint32_t chunk = bytes - done < max_payload_ ? bytes - done : max_payload_;
            send_write(q, src_l1 + done, dst_noc_addr + done, chunk, link);
        }
    }

    // Packets write() and write_and_signal() split `bytes` into.
    uint32_t packets_for(uint32_t bytes) const { return (bytes + max_payload_ - 1) / max_payload_; }

    // Like write() on link 0, but every packet is a fused write + increment of the
    // semaphore at `sem_noc_addr` on q (the data lands before the increment, and after
    // every earlier packet of link 0): the receiver waits for packets_for(bytes)
    // increments per sender.
    void write_and_signal(uint32_t q, uint32_t src_l1, uint64_t dst_noc_addr, uint32_t bytes, uint64_t sem_noc_addr) {
        for (uint32_t done = 0; done < bytes; done += max_payload_) {
            const uint32_t chunk = bytes - done < max_payload_ ? bytes - done : max_payload_;
            const tt::tt_fabric::NocUnicastAtomicIncFusedCommandHeader command(dst_noc_addr + done, sem_noc_addr, 1,
                                                                               true);
            auto* sender = sender_to(q, 0);
#if defined(FABRIC_2D)
            tt::tt_fabric::mesh::experimental::fabric_unicast_noc_fused_unicast_with_atomic_inc(
                sender, header_, chip_id(q), mesh_id(q), src_l1 + done, chunk, command);
#else
            tt::tt_fabric::linear::experimental::fabric_unicast_noc_fused_unicast_with_atomic_inc(
                sender, header_, src_l1 + done, chunk, command, hops(q));
#endif
            noc_async_writes_flushed();
        }
    }

    // write_and_signal() to every other member. 1D: one chip multicast per side (from one hop away
    // over the members on that side), so a link carries the bytes once instead of once per member
    // beyond it; 2D: one unicast per member. Each member still gets packets_for(bytes) increments.
    void write_and_signal_all(uint32_t src_l1, uint64_t dst_noc_addr, uint32_t bytes, uint64_t sem_noc_addr) {
#if defined(FABRIC_2D)
        for (uint32_t q = 0; q < line_size_; ++q) {
            if (q != position_) write_and_signal(q, src_l1, dst_noc_addr, bytes, sem_noc_addr);
        }
#else
        for (uint32_t side = 0; side < 2; ++side) {
            const uint8_t range = reach(side);
            if (range == 0) continue;
            auto& sender = senders_[side][0];
            for (uint32_t done = 0; done < bytes; done += max_payload_) {
                const uint32_t chunk = bytes - done < max_payload_ ? bytes - done : max_payload_;
                const tt::tt_fabric::NocUnicastAtomicIncFusedCommandHeader command(dst_noc_addr + done, sem_noc_addr, 1,
                                                                                   true);
                header_->to_chip_multicast(tt::tt_fabric::MulticastRoutingCommandHeader{1, range});
                header_->to_noc_fused_unicast_write_atomic_inc(command, chunk);
                sender.wait_for_empty_write_slot();
                sender.send_payload_without_header_non_blocking_from_address(src_l1 + done, chunk);
                sender.send_payload_flush_non_blocking_from_address(
                    static_cast<uint32_t>(reinterpret_cast<uintptr_t>(header_)), sizeof(PACKET_HEADER_TYPE));
                noc_async_writes_flushed();
            }
        }
#endif
    }

    // Increments the semaphore at `sem_noc_addr` on the device at position q, after
    // every earlier write of this worker to q over `link` has landed (flush).
    void atomic_inc(uint32_t q, uint64_t sem_noc_addr, uint32_t link = 0) {
        const tt::tt_fabric::NocUnicastAtomicIncCommandHeader command(sem_noc_addr, 1, true);
        auto* sender = sender_to(q, link);
#if defined(FABRIC_2D)
        tt::tt_fabric::mesh::experimental::fabric_unicast_noc_unicast_atomic_inc(sender, header_, chip_id(q),
                                                                                 mesh_id(q), command);
#else
        tt::tt_fabric::linear::experimental::fabric_unicast_noc_unicast_atomic_inc(sender, header_, command, hops(q));
#endif
        noc_async_writes_flushed();
    }

private:
    void send_write(uint32_t q, uint32_t src_l1, uint64_t dst_noc_addr, uint32_t bytes, uint32_t link) {
        const tt::tt_fabric::NocUnicastCommandHeader command{dst_noc_addr};
        auto* sender = sender_to(q, link);
#if defined(FABRIC_2D)
        tt::tt_fabric::mesh::experimental::fabric_unicast_noc_unicast_write(sender, header_, chip_id(q), mesh_id(q),
                                                                            src_l1, bytes, command);
#else
        tt::tt_fabric::linear::experimental::fabric_unicast_noc_unicast_write(sender, header_, src_l1, bytes, command,
                                                                              hops(q));
#endif
        noc_async_writes_flushed();
    }

    tt::tt_fabric::WorkerToFabricEdmSender* sender_to(uint32_t q, uint32_t link) {
        const uint32_t direction = route_[q] & ((1u << kHopsShift) - 1);
        ASSERT(direction == kForward || direction == kBackward);
        ASSERT(link < num_links_);
        return &senders_[direction == kForward ? 0 : 1][link];
    }
    // Hops to the farthest member reached through side 0's (forward) or side 1's (backward)
    // connections: the members on a side are the chips 1 .. that many hops away.
    uint8_t reach(uint32_t side) const {
        uint8_t farthest = 0;
        for (uint32_t q = 0; q < line_size_; ++q) {
            const uint32_t direction = route_[q] & ((1u << kHopsShift) - 1);
            if (q != position_ && direction == (side == 0 ? kForward : kBackward) && hops(q) > farthest) {
                farthest = hops(q);
            }
        }
        return farthest;
    }
    uint8_t hops(uint32_t q) const { return static_cast<uint8_t>((route_[q] >> kHopsShift) & 0xFF); }
    uint8_t chip_id(uint32_t q) const { return static_cast<uint8_t>(node_[q] & ((1u << kMeshIdShift) - 1)); }
    uint16_t mesh_id(uint32_t q) const { return static_cast<uint16_t>(node_[q] >> kMeshIdShift); }

    uint32_t line_size_;
    uint32_t position_;
    uint32_t num_links_;
    uint32_t max_payload_;
    volatile PACKET_HEADER_TYPE* header_;
    uint32_t route_[kMaxLineDevices] = {};
    uint32_t node_[kMaxLineDevices] = {};
    bool has_[2] = {false, false};
    tt::tt_fabric::WorkerToFabricEdmSender senders_[2][kMaxFabricLinks];
};

// Every member of the line increments `sem_id` on every other member (link 0), then waits
// for line_size - 1 increments: afterwards all members run this op's program, so
// their semaphores and buffers may receive remote writes.
// Caveat for hardware: `sem_id` is a program semaphore, initialised when each device
// launches its program. The emulator starts all programs of a mesh together; on a real
// mesh a fast peer's increment could reach a device before its launch resets the
// semaphore, so a hardware launch should pass a GlobalSemaphore address here instead.
inline void line_barrier(FabricLine& line, uint32_t sem_id) {
    const uint32_t sem_l1 = get_semaphore(sem_id);
    const uint64_t sem_noc = get_noc_addr(sem_l1);
    for (uint32_t q = 0; q < line.line_size(); ++q) {
        if (q != line.position()) line.atomic_inc(q, sem_noc);
    }
    volatile tt_l1_ptr uint32_t* sem = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(sem_l1);
    noc_semaphore_wait(sem, line.line_size() - 1);
}

// Waits until every other line member has incremented `sem_id` `per_member` times.
inline void wait_for_line(const FabricLine& line, uint32_t sem_id, uint32_t per_member = 1) {
    volatile tt_l1_ptr uint32_t* sem = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_id));
    noc_semaphore_wait(sem, (line.line_size() - 1) * per_member);
}

}  // namespace moe_fabric
