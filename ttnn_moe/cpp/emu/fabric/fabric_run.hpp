// The fabric during one program run: the connections kernels bind, the
// packets in flight, and their delivery. A packet is snapshotted (payload and
// header) when its header is sent, gets a ready time of max(the previous
// packet of its connection, now + a seeded random delay of 0..max_delay
// scheduler passes), and is delivered in order per connection once the
// scheduler reaches that pass. A fused write + increment lands its data
// before the increment. When no kernel can run, the scheduler fast-forwards
// to the next packet; only an idle fabric makes a deadlock.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "emu/fabric/topology.hpp"
#include "emu/include/ttnn_moe_emu/fabric_abi.h"

namespace ttnn_moe::emu {
class Run;
struct Instance;
struct CoreState;
}  // namespace ttnn_moe::emu

namespace ttnn_moe::emu::fabric {

struct Packet {
    ttnn_moe_emu::FabricPacket header;
    std::vector<uint8_t> payload;
    size_t sent_bytes = 0;  // of payload, what the sender wrote; the rest is a buffer slot's stale bytes
    // Where it lands: one chip, or every chip of a 1D multicast's range (nearest first).
    std::vector<size_t> dst_device_indices;
    std::vector<uint32_t> dst_chips;
    uint64_t ready_pass = 0;
    uint64_t arrival_cycle = 0;  // in the device-time model (emu/timing)
    std::string route;           // "chip 0 (0, 0) -> chip 1 (0, 1)"
};

struct Connection {
    enum class State : uint8_t { Closed, Opening, Open, Closing };
    std::string owner;  // the kernel, core and device that bound it
    const Instance* instance = nullptr;
    size_t device_index = 0;
    const MeshFabric* mesh = nullptr;
    uint32_t src_chip = 0;
    uint32_t target_chip = 0;
    uint32_t link = 0;
    bool mux_client = false;  // shares its link and direction with the other clients of its mux
    Direction direction = Direction::East;
    State state = State::Closed;
    bool pending_payload = false;
    std::vector<uint8_t> payload;  // sent without a header, waiting for it
    std::deque<Packet> in_flight;
    uint64_t last_ready_pass = 0;

    std::string name() const;  // "link 0 EAST from chip 0 (0, 0) towards chip 1 (0, 1)"
};

class FabricRun {
public:
    explicit FabricRun(Run& run);

    // Kernel side (the running instance is passed by the services).
    uint32_t connect(Instance& inst, uint32_t channel_arg, uint32_t teardown_sem_id, uint32_t buffer_index_sem_id);
    void open_start(uint32_t conn);
    void open_finish(uint32_t conn);
    void close_start(uint32_t conn);
    void close_finish(uint32_t conn);
    uint32_t free_slots(uint32_t conn);
    void send_payload(Instance& inst, uint32_t conn, uint32_t src_l1_addr, uint32_t size);
    void send_header(Instance& inst, uint32_t conn, const ttnn_moe_emu::FabricPacket& packet);
    uint32_t next_hop_direction(Instance& inst, uint32_t dst_mesh_id, uint32_t dst_chip_id);
    uint32_t channel_direction(Instance& inst, uint32_t channel_arg);

    // Scheduler side. Called after every pass; delivers what is due (and, when
    // `stalled`, fast-forwards to the next packet). Returns whether anything landed.
    bool advance(bool stalled);
    bool slot_free(uint32_t conn) const;
    // After the last kernel finished: delivers everything left, then checks every connection was closed.
    void finish();
    // In-flight summary for the deadlock report ("" when the fabric is idle).
    std::string report() const;
    std::string describe_slot_wait(uint32_t conn) const;

private:
    Connection& connection(uint32_t conn, const char* what);
    // The fabric of the mesh a device belongs to, or an error naming the device.
    const MeshFabric& mesh_of(const Instance& inst, const char* what);
    void deliver(const Connection& c, const Packet& p);
    void deliver_to(const Connection& c, const Packet& p, size_t dst_device_index);
    uint64_t next_random();

    Run& run_;
    std::vector<std::unique_ptr<Connection>> connections_;
    uint64_t pass_ = 0;
    uint64_t rng_state_ = 0;
    bool seeded_ = false;
};

}  // namespace ttnn_moe::emu::fabric
