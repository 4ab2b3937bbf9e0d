// tt-metal 0.81.1's api/alignment.h: rounding an address or size up to an alignment.
#pragma once

#include <cstdint>

__attribute__((always_inline)) constexpr uint32_t align(uint32_t addr, uint32_t alignment) {
    return ((addr + alignment - 1) / alignment) * alignment;
}

__attribute__((always_inline)) constexpr bool is_power_of_2(uint32_t n) {
    return (n != 0) && (n & (n - 1)) == 0;
}
