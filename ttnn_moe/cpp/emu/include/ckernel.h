// The part of the LLK's ckernel.h that kernels use from dataflow code:
// load_blocking, a load that completes before the next instruction issues
// (Tenstorrent's helpers use it to drain L1 stores). Memory is coherent on the
// host, so it is a plain volatile load. The mailboxes between a core's RISC-Vs
// (mailbox_write / mailbox_read) are declared so kernels that name them build;
// using one is an error (the three TRISCs run as one context here).
#pragma once

#include <cstdint>

#include "ckernel_defs.h"
#include "ttnn_moe_emu/kernel_common.h"

namespace ckernel {

template <typename T>
inline T load_blocking(volatile T* ptr) {
    static_assert(sizeof(T) == sizeof(std::uint16_t) || sizeof(T) == sizeof(std::uint32_t),
                  "load_blocking: operand must be 16-bit or 32-bit");
    return *ptr;
}

inline void mailbox_write(const std::uint8_t thread, const std::uint32_t data) {
    ttnn_moe_emu::fail("mailbox_write between a core's RISC-Vs is not emulated");
}

[[nodiscard]] inline std::uint32_t mailbox_read(const std::uint8_t thread) {
    ttnn_moe_emu::fail("mailbox_read between a core's RISC-Vs is not emulated");
}

}  // namespace ckernel
