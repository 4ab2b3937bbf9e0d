#include "emu/fabric/traffic.hpp"

namespace ttnn_moe::emu::fabric {

void FabricTraffic::add(const FabricTraffic& other) {
    for (const auto& [k, t] : other.flows) flows[k].add(t.packets, t.bytes);
    for (const auto& [k, t] : other.links) links[k].add(t.packets, t.bytes);
}

Traffic FabricTraffic::total() const {
    Traffic sum;
    for (const auto& [k, t] : flows) sum.add(t.packets, t.bytes);
    return sum;
}

const char* send_type_name(uint32_t send_type) {
    switch (send_type) {
        case 0:
            return "write";
        case 1:
            return "inline_write";
        case 2:
            return "atomic_inc";
        case 3:
            return "fused_write_atomic_inc";
        case 4:
            return "scatter_write";
    }
    return "unknown";
}

}  // namespace ttnn_moe::emu::fabric
