// The emulator implements the compute API in one header (see ttnn_moe_emu/compute_api.h).
#pragma once
#include "ttnn_moe_emu/compute_api.h"

namespace ckernel {

// 0.81.1's get_tile_address: the L1 byte address of tile `tile_index` at the read side of CB `cb_id`
// (UNPACK reads it and mails it to MATH and PACK on hardware; here the three roles are one context).
ALWI uint32_t get_tile_address(uint32_t cb_id, uint32_t tile_index) {
    const auto& services = *ttnn_moe_emu::services;
    return services.cb_read_ptr(cb_id) + tile_index * services.cb_info(cb_id, ttnn_moe_emu::CbField::PageSize);
}

// 0.81.1's read_tile_value: the uint32 word `element_offset` of tile `tile_index` at the
// read side of CB `cb_id` (after cb_wait_front). On hardware UNPACK reads it and mails
// it to MATH and PACK; here the three roles are one context, so it is a plain load.
ALWI uint32_t read_tile_value(uint32_t cb_id, uint32_t tile_index, uint32_t element_offset) {
    const uint32_t tile_addr = get_tile_address(cb_id, tile_index);
    return reinterpret_cast<const volatile uint32_t*>(static_cast<uintptr_t>(tile_addr))[element_offset];
}

}  // namespace ckernel
