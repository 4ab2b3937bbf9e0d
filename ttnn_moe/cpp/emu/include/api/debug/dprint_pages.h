// tt-metal 0.81.1's page-printing debug helpers (api/debug/dprint_pages.h).
// DPRINT is a no-op on the emulator, so these print nothing.
#pragma once

#include <cstdint>

#include "api/debug/dprint.h"

inline void print_cb_details(uint32_t) {}

namespace tt::data_movement::common {
inline void print_bf16_pages(uint32_t, uint32_t, uint32_t, uint32_t = 0) {}
inline void print_f32_pages(uint32_t, uint32_t, uint32_t, uint32_t = 0) {}
inline void print_u8_pages(uint32_t, uint32_t, uint32_t, uint32_t = 0) {}
inline void print_u16_pages(uint32_t, uint32_t, uint32_t, uint32_t = 0) {}
inline void print_u32_pages(uint32_t, uint32_t, uint32_t, uint32_t = 0) {}
}  // namespace tt::data_movement::common

namespace tt::compute::common {
inline void print_tile_rows(uint32_t, uint32_t, bool = false, uint16_t = 0, uint16_t = 32, uint8_t = 0, uint8_t = 32) {}
inline void print_full_tile(uint32_t, uint32_t = 0, bool = false) {}
}  // namespace tt::compute::common
