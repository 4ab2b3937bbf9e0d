#include "ops/common/program_cache.hpp"

namespace ttnn_moe::ops {

ProgramKey& ProgramKey::add(uint64_t value) {
    key_ += std::to_string(value);
    key_ += ',';
    return *this;
}

ProgramKey& ProgramKey::add(const std::string& value) {
    key_ += value;
    key_ += ';';
    return *this;
}

ProgramKey& ProgramKey::add(const program::TensorArg& tensor) {
    key_ += '[';
    for (auto d : tensor.shape) add(d);
    add(static_cast<uint64_t>(tensor.dtype));
    add(static_cast<uint64_t>(tensor.layout));
    add(tensor.page_size);
    add(tensor.is_dram ? 1 : 0);
    add(tensor.alignment);
    key_ += ']';
    return *this;
}

}  // namespace ttnn_moe::ops
