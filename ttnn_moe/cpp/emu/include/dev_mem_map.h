// The part of the device memory map (tt-metal 0.81.1's dev_mem_map.h) kernels address directly: the fabric
// packet header pool. Its offsets are the emulator's L1 layout (ttnn_moe_emu/abi.h), not Wormhole's firmware
// layout, which the emulator does not have; its sizes are Wormhole's.
#pragma once

#include "core_config.h"
#include "ttnn_moe_emu/abi.h"

#define MEM_L1_SIZE (ttnn_moe_emu::L1_SIZE_BYTES)
#define PACKET_HEADER_MAX_SIZE (ttnn_moe_emu::PACKET_HEADER_MAX_BYTES)
#define NUM_PACKET_HEADERS (ttnn_moe_emu::NUM_PACKET_HEADERS)
#define MEM_PACKET_HEADER_POOL_BASE (ttnn_moe_emu::L1_PACKET_HEADER_POOL_BASE)
#define MEM_PACKET_HEADER_POOL_SIZE (ttnn_moe_emu::L1_PACKET_HEADER_POOL_SIZE)
