// Named kernel arguments of Metal 2.0 kernels: `get_arg(args::name)` reads a runtime arg, a common
// runtime arg or a compile-time value, whichever the program declared. The `args::` accessors
// themselves come from the per-kernel kernel_args_generated.h the JIT writes from the program
// description (see jit.cpp).
#pragma once

#include <cstdint>

#include "ttnn_moe_emu/kernel_args.h"

// Marks a kernel entry taking named args; only the inline hint matters here.
#define TT_KERNEL static FORCE_INLINE

namespace experimental {

// Byte offsets count from the first named runtime (or common runtime) arg word.
template <typename T>
struct RtaArg {
    uint32_t byte_offset;
};

template <typename T>
struct CrtaArg {
    uint32_t byte_offset;
};

template <typename T>
struct CtaVal {
    T value;
};

template <typename T>
FORCE_INLINE T get_arg(RtaArg<T> arg) {
    static_assert(sizeof(T) == 4, "named args are 32-bit words");
    return get_arg_val<T>(static_cast<int>(arg.byte_offset / sizeof(uint32_t)));
}

template <typename T>
FORCE_INLINE T get_arg(CrtaArg<T> arg) {
    static_assert(sizeof(T) == 4, "named args are 32-bit words");
    return get_common_arg_val<T>(static_cast<int>(arg.byte_offset / sizeof(uint32_t)));
}

// Compile-time values stay constant expressions: `constexpr auto n = get_arg(args::n);`.
template <typename T>
FORCE_INLINE constexpr T get_arg(CtaVal<T> arg) {
    return arg.value;
}

}  // namespace experimental
