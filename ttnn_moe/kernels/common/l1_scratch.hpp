// L1 scratch helpers shared by the dataflow kernels of the MoE ops.
//
// Kernels include it with a path relative to their own file
// ("../../common/l1_scratch.hpp"); the emulator's build cache and the conformance
// check both hash the headers a kernel includes with quotes.
#pragma once

#include <cstdint>

#include "../../cpp/ops/common/common_shared.hpp"
#include "api/dataflow/dataflow_api.h"

namespace moe_kernel {

// L1 scratch slots that receive DRAM pages are strided by the device's DRAM read alignment
// (Wormhole 32 B, Blackhole 64 B, from its noc_parameters.h), so every NOC read lands on an
// aligned address. The host sizes the scratch CBs by the same value (DeviceLimits::dram_alignment).
constexpr uint32_t kDramAlign = NOC_DRAM_READ_ALIGNMENT_BYTES;
constexpr uint32_t align_up(uint32_t bytes) {
    return (bytes + kDramAlign - 1) / kDramAlign * kDramAlign;
}

// Word (uint32) and half-word (uint16: bf16 bits) views of an L1 address.
inline volatile uint32_t* words(uint32_t l1_addr) {
    return reinterpret_cast<volatile uint32_t*>(l1_addr);
}
inline volatile uint16_t* halves(uint32_t l1_addr) {
    return reinterpret_cast<volatile uint16_t*>(l1_addr);
}

inline void fill_words(uint32_t l1_addr, uint32_t count, uint32_t value) {
    volatile uint32_t* w = words(l1_addr);
    for (uint32_t i = 0; i < count; ++i) w[i] = value;
}

inline void fill_halves(uint32_t l1_addr, uint32_t count, uint16_t value) {
    volatile uint16_t* h = halves(l1_addr);
    for (uint32_t i = 0; i < count; ++i) h[i] = value;
}

// A row chunk of `bytes` read into a page the compute kernel processes as a whole tile of
// `page_bytes`: the tail is zeroed rather than left as whatever L1 held (a NaN there would only
// reach lanes the writer drops, but the unpacker reads it).
inline void zero_page_tail(uint32_t page_l1, uint32_t bytes, uint32_t page_bytes) {
    if (bytes < page_bytes) fill_halves(page_l1 + bytes, (page_bytes - bytes) / 2, 0);
}

// Starts reading entries [0, count) of a (count, 1) uint32 ROW_MAJOR table (one
// 4-byte page per entry, e.g. num_routed_tokens or expert_offsets) into L1: entry l
// lands at l1_addr + l * slot_bytes. The caller issues the read barrier.
template <typename Accessor>
void read_column_async(const Accessor& table, uint32_t l1_addr, uint32_t count, uint32_t slot_bytes) {
    for (uint32_t l = 0; l < count; ++l) {
        noc_async_read(table.get_noc_addr(l), l1_addr + l * slot_bytes, sizeof(uint32_t));
    }
}

// Entry l of a column read by read_column_async.
inline uint32_t column_entry(uint32_t l1_addr, uint32_t l, uint32_t slot_bytes) {
    return words(l1_addr + l * slot_bytes)[0];
}

}  // namespace moe_kernel
