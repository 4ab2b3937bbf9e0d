// Fabric counters: every packet is counted once at its sender, by flow
// (source chip, destination chip, link, sending core, packet type), and once
// per physical link hop it crosses. Bytes are payload bytes (headers excluded);
// atomic increments carry none. Ops tell their traffic classes apart by flow:
// e.g. routing metadata sent from other cores or over another link than the
// token payload.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>

namespace ttnn_moe::emu::fabric {

struct Traffic {
    uint64_t packets = 0;
    uint64_t bytes = 0;
    void add(uint64_t p, uint64_t b) { packets += p, bytes += b; }
};

struct FlowKey {
    uint32_t src_chip;
    uint32_t dst_chip;
    uint32_t link;
    uint32_t core_x;  // logical coordinates of the sending core
    uint32_t core_y;
    uint32_t send_type;  // tt::tt_fabric::NocSendType
    auto tie() const { return std::tie(src_chip, dst_chip, link, core_x, core_y, send_type); }
    bool operator<(const FlowKey& o) const { return tie() < o.tie(); }
};

struct LinkKey {
    uint32_t from_chip;
    uint32_t to_chip;
    uint32_t link;
    auto tie() const { return std::tie(from_chip, to_chip, link); }
    bool operator<(const LinkKey& o) const { return tie() < o.tie(); }
};

struct FabricTraffic {
    std::map<FlowKey, Traffic> flows;
    std::map<LinkKey, Traffic> links;

    void add(const FabricTraffic& other);
    Traffic total() const;
};

const char* send_type_name(uint32_t send_type);

}  // namespace ttnn_moe::emu::fabric
