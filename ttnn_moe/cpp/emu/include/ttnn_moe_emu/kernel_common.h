// Common ground of the emulator's device headers: the services table, the
// running kernel's environment, attribute macros, DataFormat and the NOC
// address layout. Every api/... header of the emulator includes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hostdevcommon/kernel_structs.h"
#include "ttnn_moe_emu/abi.h"

#ifndef FORCE_INLINE
#define FORCE_INLINE inline __attribute__((always_inline))
#endif
#ifndef ALWI
#define ALWI inline __attribute__((always_inline))
#endif
#define tt_l1_ptr
#define tt_reg_ptr
#define tt_uint64_t uint64_t

#ifndef NOC_INDEX
#define NOC_INDEX 0
#endif

namespace ttnn_moe_emu {

// Set by the kernel entry point before kernel_main() runs.
inline const Services* services = nullptr;
inline KernelEnv& env() {
    return **services->current;
}

// NOC address layout (see the runtime's device_params.hpp): [0, 36) local
// address, [36, 42) x, [42, 48) y.
inline constexpr uint32_t NOC_LOCAL_BITS = 36;
inline constexpr uint32_t NOC_NODE_BITS = 6;
inline constexpr uint32_t NUM_DRAM_BANKS = 12;

// DRAM bank b sits at NOC x = 0 (banks 0-5) or 5 (banks 6-11), y = 1 + 2 * (b % 6).
constexpr uint32_t dram_bank_x(uint32_t bank) {
    return bank < 6 ? 0u : 5u;
}
constexpr uint32_t dram_bank_y(uint32_t bank) {
    return 1u + 2u * (bank % 6u);
}

constexpr uint64_t noc_xy_addr(uint32_t x, uint32_t y, uint64_t addr) {
    return (static_cast<uint64_t>(y) << (NOC_LOCAL_BITS + NOC_NODE_BITS)) |
           (static_cast<uint64_t>(x) << NOC_LOCAL_BITS) | addr;
}

[[noreturn]] inline void fail(const char* message) {
    services->fail(message);
    __builtin_unreachable();
}

// The NOC address of `addr` on L1 bank `bank` of this device (an interleaved L1 tensor's page home).
inline uint64_t l1_bank_noc_addr(uint32_t bank, uint64_t addr) {
    const uint32_t xy = services->l1_bank_noc_xy(bank);
    return noc_xy_addr(xy & 0xff, xy >> 8, addr);
}

// Host code hands kernels bare L1 offsets (a global semaphore's address), which kernels built for the hardware
// use as pointers. The emulated core's L1 starts at env().l1_base, so an address below the L1 size is such an
// offset; anything else is already a host address inside the core's L1.
inline uintptr_t local_l1_address(uintptr_t addr) {
    return addr < L1_SIZE_BYTES ? env().l1_base + addr : addr;
}
template <typename T>
inline volatile T* local_l1_pointer(volatile T* ptr) {
    return reinterpret_cast<volatile T*>(local_l1_address(reinterpret_cast<uintptr_t>(ptr)));
}

// Zeroes size bytes of this core's L1 at addr (an L1 offset or a host address).
inline void zero_local_l1(uintptr_t addr, uint32_t size) {
    std::memset(reinterpret_cast<void*>(local_l1_address(addr)), 0, size);
}

}  // namespace ttnn_moe_emu

// tt::DataFormat values (0.81.1 tensix_types.h).
enum class DataFormat : uint8_t {
    Float32 = 0,
    Float16 = 1,
    Bfp8 = 2,
    Bfp4 = 3,
    Tf32 = 4,
    Float16_b = 5,
    Bfp8_b = 6,
    Bfp4_b = 7,
    Int32 = 8,
    UInt16 = 9,
    Lf8 = 10,
    Bfp2 = 11,
    Int8 = 14,
    Bfp2_b = 15,
    UInt32 = 24,
    RawUInt8 = 0xf0,
    RawUInt16 = 0xf1,
    RawUInt32 = 0xf2,
    UInt8 = 30,
    Invalid = 0xff,
};

enum ProgrammableCoreType { TENSIX = 0, ACTIVE_ETH = 1, IDLE_ETH = 2, DRAM = 3, COUNT = 4 };

constexpr uint8_t noc_index = NOC_INDEX;
inline constexpr uint32_t NOC_UNICAST_WRITE_VC = 1;
inline constexpr uint32_t NOC_MULTICAST_WRITE_VC = 4;
inline constexpr uint32_t NOC_MAX_BURST_SIZE = 8192;
inline constexpr uint32_t NUM_DRAM_BANKS = ttnn_moe_emu::NUM_DRAM_BANKS;
inline constexpr uint32_t L1_ALIGNMENT = 16;
inline constexpr uint32_t DRAM_ALIGNMENT = 32;
// noc_parameters.h's alignment of NOC reads from DRAM (the emulated device is a Wormhole B0).
#define NOC_DRAM_READ_ALIGNMENT_BYTES 32
inline constexpr uint32_t NUM_CIRCULAR_BUFFERS = ttnn_moe_emu::NUM_CIRCULAR_BUFFERS;
inline constexpr uint32_t NOC_ADDR_LOCAL_BITS = ttnn_moe_emu::NOC_LOCAL_BITS;
inline constexpr uint32_t NOC_ADDR_NODE_ID_BITS = ttnn_moe_emu::NOC_NODE_BITS;

// my_x[noc] / my_y[noc]: this core's NOC coordinates.
#define my_x (ttnn_moe_emu::env().noc_x)
#define my_y (ttnn_moe_emu::env().noc_y)

// Packed (y << 6 | x) NOC coordinates of DRAM bank b, per NOC, as in tt-metal's firmware tables.
struct EmuDramBankTable {
    uint16_t operator[](uint32_t bank) const {
        return static_cast<uint16_t>((ttnn_moe_emu::dram_bank_y(bank) << NOC_ADDR_NODE_ID_BITS) |
                                     ttnn_moe_emu::dram_bank_x(bank));
    }
};
inline constexpr EmuDramBankTable dram_bank_to_noc_xy[2] = {};
inline constexpr int32_t bank_to_dram_offset[NUM_DRAM_BANKS] = {};

FORCE_INLINE void invalidate_l1_cache() {
    ttnn_moe_emu::services->yield();
}

template <typename T>
constexpr T align_power_of_2(T value, T alignment) {
    return (value + alignment - 1) & ~(alignment - 1);
}
