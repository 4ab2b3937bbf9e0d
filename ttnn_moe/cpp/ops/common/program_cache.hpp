// What a program factory returns (the program and which runtime args hold buffer
// addresses) and the key builder of the op's program cache (device_operation.hpp).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
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

}  // namespace ttnn_moe::ops
