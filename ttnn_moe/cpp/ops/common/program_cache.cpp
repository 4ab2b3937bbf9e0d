#include "ops/common/program_cache.hpp"

#include <stdexcept>

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
    key_ += ']';
    return *this;
}

namespace {
void write_addresses(CachedProgram& cached, const std::vector<program::TensorArg>& io_tensors) {
    for (const auto& slot : cached.address_slots) {
        if (slot.tensor_index >= io_tensors.size()) {
            throw std::logic_error("program cache: address slot names io tensor " + std::to_string(slot.tensor_index) +
                                   " but only " + std::to_string(io_tensors.size()) + " were given");
        }
        auto& kernel = cached.program.kernels.at(slot.kernel_index);
        auto& args = slot.runtime_args_index == AddressSlot::kCommonArgs
                         ? kernel.common_runtime_args
                         : kernel.runtime_args.at(slot.runtime_args_index).second;
        args.at(slot.arg_index) = io_tensors[slot.tensor_index].address;
    }
}
}  // namespace

program::ProgramDescriptor ProgramCache::get(const ProgramKey& key, const std::vector<program::TensorArg>& io_tensors,
                                             const std::function<CachedProgram()>& factory) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key.str());
    if (it == entries_.end()) {
        ++misses_;
        it = entries_.emplace(key.str(), factory()).first;
    } else {
        ++hits_;
    }
    write_addresses(it->second, io_tensors);
    return it->second.program;
}

void ProgramCache::clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.clear();
    hits_ = misses_ = 0;
}

}  // namespace ttnn_moe::ops
