// Poison mode: the emulator as a checker of reads of memory nothing wrote.
//
// When on, fresh L1 (up to a core's CB top) and fresh DRAM buffers are filled with a pattern and
// get a shadow byte per byte (0: never written), set by every write the emulator performs (host
// uploads, NOC and fabric writes, landed NOC reads, the packer, semaphore set-up). A tracked read
// (a NOC read's or write's source, a fabric payload, a tile the compute engine unpacks) of a byte
// whose shadow is clear is reported, unless the kernel itself changed its 4-byte word since the
// fill: kernels store to L1 through plain pointers the emulator cannot see, and such a store
// leaves the pattern behind (README: "Uninitialised reads").
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ttnn_moe::emu::poison {

// NaN as float32 and as each bfloat16 half; not a plausible index or count either.
inline constexpr uint32_t kPattern = 0x7FB17FB1u;

namespace detail {
extern bool g_enabled;
}
// On at start-up when TTNN_MOE_POISON=1; a switch for tests. Memory taken while off is not tracked.
inline bool enabled() {
    return detail::g_enabled;
}
void set_enabled(bool on);

// Fills [data, data + bytes) with the pattern; data is 4-byte aligned.
void fill(uint8_t* data, size_t bytes);
// A shadow of `bytes` bytes, all clear (nothing written), committed only where touched.
uint8_t* map_shadow(size_t bytes);
void unmap_shadow(uint8_t* shadow, size_t bytes);

// Records [.., + bytes) as written; a null shadow is untracked memory.
inline void mark(uint8_t* shadow, size_t bytes) {
    if (shadow && bytes) std::memset(shadow, 1, bytes);
}
// Offset of the first byte of [data, data + bytes) that nothing wrote, or -1. data's 4-byte word is
// readable around it (L1 and DRAM storage are word-aligned and word-sized).
int64_t first_unwritten(const uint8_t* data, const uint8_t* shadow, size_t bytes);

}  // namespace ttnn_moe::emu::poison
