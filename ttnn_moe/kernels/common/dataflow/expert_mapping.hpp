// Reading the (1, 1, E, D) one-hot expert_mapping on a device: row e holds a 1 in the
// column of the device that owns expert e and 0 elsewhere; elements are 2 or 4 bytes.
#pragma once

#include <cstdint>

namespace moe_mapping {

constexpr uint32_t kNotOneHot = 0xFFFFFFFFu;

// The owning device of one mapping row in L1, or kNotOneHot unless the row is exactly
// one 1 and 0s.
inline uint32_t owner_of_row(uint32_t row_l1, uint32_t num_devices, uint32_t element_bytes) {
    uint32_t owner = kNotOneHot, ones = 0;
    for (uint32_t d = 0; d < num_devices; ++d) {
        const uint32_t v = element_bytes == 2 ? reinterpret_cast<volatile uint16_t*>(row_l1)[d]
                                              : reinterpret_cast<volatile uint32_t*>(row_l1)[d];
        if (v == 1) {
            owner = d;
            ++ones;
        } else if (v != 0) {
            return kNotOneHot;
        }
    }
    return ones == 1 ? owner : kNotOneHot;
}

}  // namespace moe_mapping
