#include "emu/timing/arch_params.hpp"

#include <stdexcept>

namespace ttnn_moe::emu::timing {

const ArchParams& arch_params(const std::string& name) {
    if (name == "wormhole_b0") return wormhole_b0_params();
    if (name == "blackhole") return blackhole_params();
    throw std::invalid_argument("timing architecture must be 'wormhole_b0' or 'blackhole', got '" + name + "'");
}

std::vector<std::string> arch_names() {
    return {"wormhole_b0", "blackhole"};
}

}  // namespace ttnn_moe::emu::timing
