// The part of the LLK's ckernel.h that kernels use from dataflow code:
// load_blocking, a load that completes before the next instruction issues
// (Tenstorrent's helpers use it to drain L1 stores). Memory is coherent on the
// host, so it is a plain volatile load.
#pragma once

#include <cstdint>

namespace ckernel {

template <typename T>
inline T load_blocking(volatile T* ptr) {
    static_assert(sizeof(T) == sizeof(std::uint16_t) || sizeof(T) == sizeof(std::uint32_t),
                  "load_blocking: operand must be 16-bit or 32-bit");
    return *ptr;
}

}  // namespace ckernel
