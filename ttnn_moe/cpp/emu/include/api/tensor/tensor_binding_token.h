// The `tensor::name` tokens of kernel_bindings_generated.h: where a tensor's accessor args start in
// the compile-time args, and the byte offset of its base-address word in the common runtime args
// (the accessor's own common runtime words, if any, follow that word).
#pragma once

#include <cstdint>

#include "api/tensor/tensor_accessor_args.h"

namespace tensor_accessor {

template <uint32_t CTA_OFFSET, uint32_t ADDR_CRTA_OFFSET>
struct TensorBindingToken {
    static_assert(ADDR_CRTA_OFFSET % sizeof(uint32_t) == 0, "a tensor's address word is 4-byte aligned");
    using args_t = TensorAccessorArgs<CTA_OFFSET, ADDR_CRTA_OFFSET / sizeof(uint32_t) + 1>;
    static constexpr uint32_t addr_crta_offset = ADDR_CRTA_OFFSET;
};

}  // namespace tensor_accessor
