// tt-metal 0.81.1's fabric NOC address helpers for the emulator: a NOC
// address from coordinates that may be logical NOC coordinates (translated
// like the real helper, an identity here) and the split of a unicast NOC
// address into its (x, y) and local address.
#pragma once

#include <cstdint>
#include <utility>

#include "api/dataflow/dataflow_api.h"
#include "noc_nonblocking_api.h"
#include "tt-metalium/experimental/fabric/fabric_edm_types.hpp"

FORCE_INLINE bool is_using_noc_coords(uint16_t, uint16_t) {
    return true;
}

FORCE_INLINE uint64_t safe_get_noc_addr(uint8_t dest_noc_x, uint8_t dest_noc_y, uint32_t dest_bank_addr,
                                        uint8_t noc_id = noc_index) {
    return get_noc_addr(NOC_0_X_PHYS_COORD(noc_id, noc_size_x, dest_noc_x),
                        NOC_0_Y_PHYS_COORD(noc_id, noc_size_y, dest_noc_y), dest_bank_addr, noc_id);
}

FORCE_INLINE std::pair<tt::tt_fabric::WorkerXY, uint32_t> get_noc_address_components(uint64_t noc_addr) {
    return {tt::tt_fabric::WorkerXY(static_cast<uint16_t>(NOC_UNICAST_ADDR_X(noc_addr)),
                                    static_cast<uint16_t>(NOC_UNICAST_ADDR_Y(noc_addr))),
            static_cast<uint32_t>(noc_addr & 0xFFFFFFFFu)};
}
