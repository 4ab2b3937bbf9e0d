// Program cache of an op: keyed by the op's attributes and the input specs
// (shapes, dtypes, layouts; not addresses). A hit reuses the description and
// only rewrites the runtime args that hold buffer addresses, so a repeated
// call neither rebuilds the description nor recompiles a kernel.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "program/program_descriptor.hpp"
#include "program/tensor_arg.hpp"

namespace ttnn_moe::ops {

// A runtime arg that holds the address of io tensor `tensor_index`.
struct AddressSlot {
    static constexpr uint32_t kCommonArgs = std::numeric_limits<uint32_t>::max();
    uint32_t kernel_index = 0;
    uint32_t runtime_args_index = kCommonArgs;  // index into KernelDescriptor::runtime_args, or kCommonArgs
    uint32_t arg_index = 0;
    uint32_t tensor_index = 0;
};

struct CachedProgram {
    program::ProgramDescriptor program;
    std::vector<AddressSlot> address_slots;
};

// Builds the cache key from the parts that shape a program.
class ProgramKey {
public:
    ProgramKey& add(uint64_t value);
    ProgramKey& add(const std::string& value);
    ProgramKey& add(const program::TensorArg& tensor);  // shape, dtype, layout, page size, memory
    std::string str() const { return key_; }

private:
    std::string key_;
};

class ProgramCache {
public:
    // Returns the program for `key`, creating it with `factory` on a miss, with
    // every address slot rewritten from `io_tensors`.
    program::ProgramDescriptor get(const ProgramKey& key, const std::vector<program::TensorArg>& io_tensors,
                                   const std::function<CachedProgram()>& factory);
    uint64_t hits() const { return hits_; }
    uint64_t misses() const { return misses_; }
    size_t size() const { return entries_.size(); }
    void clear();

private:
    std::mutex mutex_;
    std::unordered_map<std::string, CachedProgram> entries_;
    uint64_t hits_ = 0;
    uint64_t misses_ = 0;
};

}  // namespace ttnn_moe::ops
