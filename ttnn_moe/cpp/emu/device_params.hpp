// Parameters of the emulated Wormhole-like device, in one place.
#pragma once

#include <cstdint>

#include "emu/include/ttnn_moe_emu/abi.h"

namespace ttnn_moe::emu::params {

// Per-core L1 (Wormhole: 1464 KiB).
inline constexpr uint32_t L1_SIZE = 1464 * 1024;
// Circular buffers are allocated upward from here (below: firmware, mailboxes,
// kernel text on hardware); semaphores live in a small region just below it.
inline constexpr uint32_t L1_SEMAPHORE_BASE = ttnn_moe_emu::L1_SEMAPHORE_BASE;
inline constexpr uint32_t L1_NUM_SEMAPHORES = ttnn_moe_emu::L1_NUM_SEMAPHORES;
inline constexpr uint32_t L1_SEMAPHORE_STRIDE = ttnn_moe_emu::L1_SEMAPHORE_STRIDE;
inline constexpr uint32_t L1_CB_BASE = 0x19000;
// The fabric packet header pool (and its allocation state) lies between the mailboxes and the CBs.
inline constexpr uint32_t L1_PACKET_HEADER_POOL_STATE_BASE = ttnn_moe_emu::L1_PACKET_HEADER_POOL_STATE_BASE;
inline constexpr uint32_t L1_PACKET_HEADER_POOL_END =
    ttnn_moe_emu::L1_PACKET_HEADER_POOL_BASE + ttnn_moe_emu::L1_PACKET_HEADER_POOL_SIZE;
static_assert(L1_PACKET_HEADER_POOL_END <= L1_CB_BASE, "the packet header pool must stay below the CBs");
inline constexpr uint32_t L1_ALIGNMENT = 16;

// DRAM: 12 banks, buffers interleaved page by page; the same bank address in every bank.
inline constexpr uint32_t NUM_DRAM_BANKS = 12;
inline constexpr uint64_t DRAM_BANK_SIZE = 1ull << 30;
inline constexpr uint32_t DRAM_UNRESERVED_BASE = 0x10000;
inline constexpr uint32_t DRAM_ALIGNMENT = 32;

// NOC addresses: [0, 36) local address, [36, 42) noc x, [42, 48) noc y,
// [48, 60) device id + 1 (0 = the issuing device). tt-metal's Wormhole kernels
// only ever build the low 48 bits, so their addresses always stay on-device; a
// fabric delivers to another device by setting the device field.
inline constexpr uint32_t NOC_ADDR_LOCAL_BITS = 36;
inline constexpr uint32_t NOC_ADDR_NODE_ID_BITS = 6;
inline constexpr uint32_t NOC_ADDR_DEVICE_SHIFT = NOC_ADDR_LOCAL_BITS + 2 * NOC_ADDR_NODE_ID_BITS;
inline constexpr uint64_t NOC_ADDR_LOCAL_MASK = (1ull << NOC_ADDR_LOCAL_BITS) - 1;
inline constexpr uint32_t NOC_COORD_MASK = (1u << NOC_ADDR_NODE_ID_BITS) - 1;

// NOC transfer alignment (Wormhole noc_parameters.h): DRAM reads 32 B, DRAM writes and L1 16 B.
inline constexpr uint32_t NOC_DRAM_ALIGNMENT = 32;
inline constexpr uint32_t NOC_DRAM_WRITE_ALIGNMENT = 16;
inline constexpr uint32_t NOC_L1_ALIGNMENT = 16;

// NOC columns/rows that hold no worker: x = 0 and 5 carry the DRAM endpoints,
// y = 0 and 6 the ethernet/PCIe/ARC row on Wormhole.
inline constexpr uint32_t DRAM_NOC_X[2] = {0, 5};
inline constexpr uint32_t NON_WORKER_NOC_Y[2] = {0, 6};

inline constexpr uint32_t MAX_CIRCULAR_BUFFERS = ttnn_moe_emu::NUM_CIRCULAR_BUFFERS;

}  // namespace ttnn_moe::emu::params
