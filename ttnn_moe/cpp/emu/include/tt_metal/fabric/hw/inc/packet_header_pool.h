// PacketHeaderPool (tt-metal 0.81.1 packet_header_pool.h) for the emulator: fabric packet headers taken from
// the pool the device memory map reserves in the core's L1 (dev_mem_map.h), the first half for the DM0 (BRISC)
// kernel, the second for DM1 (NCRISC), each header PACKET_HEADER_MAX_SIZE bytes apart. A route is a group of
// headers allocated together (one per connection of a RoutingPlaneConnectionManager); route ids count from 0 per
// RISC. The allocation state lives in the reserved region before the pool (ttnn_moe_emu/abi.h), not in statics:
// one built kernel serves every core that runs it. Running out of headers or route ids, or naming a route never
// allocated, is an error naming the counts (the device hangs on purpose there).
#pragma once

#include <cstdint>
#include <cstdio>

#include "core_config.h"
#include "dev_mem_map.h"
#include "hostdev/fabric_edm_packet_header.hpp"
#include "ttnn_moe_emu/kernel_common.h"

static_assert(proc_type == static_cast<uint8_t>(TensixProcessorTypes::DM0) ||
                  proc_type == static_cast<uint8_t>(TensixProcessorTypes::DM1),
              "PacketHeaderPool is only supported for TensixProcessorTypes::DM0 or TensixProcessorTypes::DM1");
static_assert(sizeof(PACKET_HEADER_TYPE) <= PACKET_HEADER_MAX_SIZE, "a packet header must fit its pool slot");

class PacketHeaderPool {
    static constexpr uint32_t POOL_SIZE_PER_RISC = MEM_PACKET_HEADER_POOL_SIZE / MaxDMProcessorsPerCoreType;
    static constexpr uint32_t HEADERS_PER_RISC = POOL_SIZE_PER_RISC / PACKET_HEADER_MAX_SIZE;
    static constexpr uint32_t ROUTES_PER_RISC = ttnn_moe_emu::PACKET_HEADER_ROUTES_PER_RISC;

    // This RISC's state words: [0] bytes of its half in use, [1] routes allocated, then per route the L1 offset
    // of its first header and its header count.
    static volatile uint32_t* state() {
        const uint32_t offset = ttnn_moe_emu::L1_PACKET_HEADER_POOL_STATE_BASE +
                                4 * proc_type * ttnn_moe_emu::L1_PACKET_HEADER_POOL_STATE_WORDS_PER_RISC;
        return reinterpret_cast<volatile uint32_t*>(ttnn_moe_emu::local_l1_address(offset));
    }
    static volatile PACKET_HEADER_TYPE* header_at(uint32_t l1_offset) {
        return reinterpret_cast<volatile PACKET_HEADER_TYPE*>(ttnn_moe_emu::local_l1_address(l1_offset));
    }
    template <typename... Values>
    [[noreturn]] static void fail(const char* format, Values... values) {
        char message[160];
        std::snprintf(message, sizeof(message), format, values...);
        ttnn_moe_emu::fail(message);
    }
    static void check_route(uint8_t route_id) {
        if (route_id >= state()[1]) {
            fail("PacketHeaderPool: route id %u was never allocated (%u routes are)", route_id, state()[1]);
        }
    }

public:
    // Forgets every header of this RISC, so a kernel can allocate them afresh.
    static void reset() {
        state()[0] = 0;
        state()[1] = 0;
    }

    static volatile PACKET_HEADER_TYPE* allocate_header(uint8_t num_headers = 1) {
        volatile uint32_t* s = state();
        if (s[0] + PACKET_HEADER_MAX_SIZE * num_headers > POOL_SIZE_PER_RISC) {
            fail("PacketHeaderPool: %u more packet headers do not fit: %u of this RISC's %u are allocated", num_headers,
                 s[0] / PACKET_HEADER_MAX_SIZE, HEADERS_PER_RISC);
        }
        if (s[1] >= ROUTES_PER_RISC) {
            fail("PacketHeaderPool: all %u route ids of this RISC are allocated", ROUTES_PER_RISC);
        }
        const uint32_t offset = MEM_PACKET_HEADER_POOL_BASE + proc_type * POOL_SIZE_PER_RISC + s[0];
        s[0] += PACKET_HEADER_MAX_SIZE * num_headers;
        s[2 + 2 * s[1]] = offset;
        s[3 + 2 * s[1]] = num_headers;
        s[1] += 1;
        return header_at(offset);
    }

    // Allocates a route of num_headers headers; returns its id.
    static uint8_t allocate_header_n(uint8_t num_headers) {
        allocate_header(num_headers);
        return static_cast<uint8_t>(state()[1] - 1);
    }

    // func(header, i) for the route's headers i = 0 .. n - 1.
    template <typename Func>
    static void for_each_header(uint8_t route_id, Func&& func) {
        check_route(route_id);
        const volatile uint32_t* s = state();
        const uint32_t first = s[2 + 2 * route_id];
        const uint32_t count = s[3 + 2 * route_id];
        for (uint32_t i = 0; i < count; ++i) {
            func(header_at(first + i * PACKET_HEADER_MAX_SIZE), static_cast<uint8_t>(i));
        }
    }

    static uint8_t get_num_headers(uint8_t route_id) {
        return route_id < state()[1] ? static_cast<uint8_t>(state()[3 + 2 * route_id]) : 0;
    }
};
