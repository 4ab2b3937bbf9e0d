// The `sem::name` tokens of kernel_bindings_generated.h: a program semaphore id and the access
// path the host picked for it. Wormhole data-movement bindings are always LOCAL_NONATOMIC.
#pragma once

#include <cstdint>

enum class SemScope : uint8_t {
    LOCAL_NONATOMIC = 0,
    DM_LOCAL_CACHED = 1,
    EXTERNAL = 2,
    COMPUTE_ATOMIC = 3,
};

struct SemaphoreBindingToken {
    std::uint32_t id;
    SemScope scope;
};
