// Circular buffers used as L1 scratch: the program factory gives them 32-byte pages and as
// many pages as the scratch needs; the kernel reserves all of them once and uses the block.
#pragma once

#include <cstdint>

#include "../../../cpp/ops/common/common_shared.hpp"
#include "api/dataflow/dataflow_api.h"

namespace moe_scratch {

constexpr uint32_t kPageBytes = ttnn_moe::common_shared::kScratchPageBytes;

inline uint32_t pages_for(uint32_t bytes) {
    return (bytes + kPageBytes - 1) / kPageBytes;
}

// Reserves the `bytes` of scratch CB `cb`; returns its L1 address.
inline uint32_t reserve(uint32_t cb, uint32_t bytes) {
    cb_reserve_back(cb, pages_for(bytes));
    return get_write_ptr(cb);
}

}  // namespace moe_scratch
