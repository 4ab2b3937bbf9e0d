// The part of tt-metal 0.81.1's firmware NOC header (noc_nonblocking_api.h)
// that kernels and fabric helpers use directly: the NOC grid size, the
// NOC 0 <-> NOC 1 coordinate mirror and the fields of a unicast NOC address.
// Both emulated NOCs use the same coordinates (see the emulator README), so
// the mirror is the identity.
#pragma once

#include <cstdint>

#include "ttnn_moe_emu/kernel_common.h"

inline constexpr uint32_t noc_size_x = 1u << ttnn_moe_emu::NOC_NODE_BITS;
inline constexpr uint32_t noc_size_y = 1u << ttnn_moe_emu::NOC_NODE_BITS;

#define NOC_0_X(noc_index, noc_size_x, x) (x)
#define NOC_0_Y(noc_index, noc_size_y, y) (y)
#define NOC_0_X_PHYS_COORD(noc_index, noc_size_x, x) (x)
#define NOC_0_Y_PHYS_COORD(noc_index, noc_size_y, y) (y)

#define NOC_UNICAST_ADDR_X(addr) \
    ((static_cast<uint64_t>(addr) >> ttnn_moe_emu::NOC_LOCAL_BITS) & ((1u << ttnn_moe_emu::NOC_NODE_BITS) - 1))
#define NOC_UNICAST_ADDR_Y(addr)                                                                     \
    ((static_cast<uint64_t>(addr) >> (ttnn_moe_emu::NOC_LOCAL_BITS + ttnn_moe_emu::NOC_NODE_BITS)) & \
     ((1u << ttnn_moe_emu::NOC_NODE_BITS) - 1))
#define NOC_LOCAL_ADDR_OFFSET(addr) (static_cast<uint64_t>(addr) & ((1ull << ttnn_moe_emu::NOC_LOCAL_BITS) - 1))

// A NOC address is (packed y << 6 | x) shifted past the local address bits.
inline constexpr uint32_t NOC_ADDR_COORD_SHIFT = ttnn_moe_emu::NOC_LOCAL_BITS;
#define NOC_XY_ADDR(x, y, addr) ttnn_moe_emu::noc_xy_addr((x), (y), (addr))
#define DYNAMIC_NOC_X(noc, x) NOC_0_X(noc, noc_size_x, (x))
#define DYNAMIC_NOC_Y(noc, y) NOC_0_Y(noc, noc_size_y, (y))
// Wormhole's first virtual Tensix coordinate (noc_parameters.h). Only the sharded address
// generators use it, and sharded tensors are not emulated.
#define VIRTUAL_TENSIX_START_X 18
#define VIRTUAL_TENSIX_START_Y 18
