// The device's RISC-V cores are ILP32: `unsigned long` is 32 bits there and is
// the type behind uint32_t. Kernel code can rely on that where the LP64 host
// differs. tt-metal's CCL helper find_if (moe_utils.hpp) returns
// std::make_tuple(true, i) for a uint32_t i and std::make_tuple(false, 0ul)
// from one function with a deduced return type: one type on the device, two on
// the host. This overload gives (bool, unsigned long) the device's tuple type;
// the exact-match non-template wins over std::make_tuple for exactly that pair.
#pragma once

#include <cstdint>
#include <tuple>

namespace std {
inline tuple<bool, uint32_t> make_tuple(bool flag, unsigned long value) {
    return tuple<bool, uint32_t>(flag, static_cast<uint32_t>(value));
}
}  // namespace std
