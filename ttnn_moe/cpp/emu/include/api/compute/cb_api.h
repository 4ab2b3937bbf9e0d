// The emulator implements the compute API in one header (see ttnn_moe_emu/compute_api.h).
#pragma once
#include "ttnn_moe_emu/compute_api.h"

namespace ckernel {

// 0.81.1's read_tile_value: the uint32 word `element_offset` of tile `tile_index` at the
// read side of CB `cb_id` (after cb_wait_front). On hardware UNPACK reads it and mails
// it to MATH and PACK; here the three roles are one context, so it is a plain load.
ALWI uint32_t read_tile_value(uint32_t cb_id, uint32_t tile_index, uint32_t element_offset) {
    const auto& services = *ttnn_moe_emu::services;
    const uint32_t page_bytes = services.cb_info(cb_id, ttnn_moe_emu::CbField::PageSize);
    const uint32_t tile_addr = services.cb_read_ptr(cb_id) + tile_index * page_bytes;
    return reinterpret_cast<const volatile uint32_t*>(static_cast<uintptr_t>(tile_addr))[element_offset];
}

}  // namespace ckernel
