// What the two programs of moe_gate (teams: moe_gate_program_factory.cpp; the resident split:
// moe_gate_resident_program.cpp) build alike: the circular buffers and semaphores, the top-k's
// runtime args and accessors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/moe_gate/moe_gate_device_operation.hpp"

namespace ttnn_moe::ops::moe_gate {

// Every CB and semaphore on every core of `cores`, so each sits at the same L1 address on all of them.
void add_buffers(program::ProgramDescriptor& program, const Dims& d, const Attributes& attributes,
                 const program::CoreRangeSet& cores);

// routing_arg (moe_gate_shared.hpp) for the ranking kernel.
std::vector<uint32_t> routing_args(const Attributes& attributes, const Dims& d,
                                   const std::vector<program::TensorArg>& io);

// The ranking kernel's accessors of bias, topk_indices, topk_weights and gate_status (compile-time args).
void append_topk_accessor_args(const std::vector<program::TensorArg>& io, std::vector<uint32_t>& compile_time_args);

// The output addresses of a ranking kernel's runtime args at `routing_base`, rebound per run.
void add_routing_address_slots(CachedProgram& cached, uint32_t kernel, uint32_t core_index, uint32_t routing_base);

// The score matmul's compute kernel `source` on `cores`: HiFi4, fp32 accumulation (the scores accumulate in fp32).
program::KernelDescriptor scores_compute_kernel(const std::string& source, const program::CoreRangeSet& cores);

// The resident split's program (d.resident()).
CachedProgram create_resident_program(const Attributes& attributes, const Dims& d,
                                      const std::vector<program::TensorArg>& io, const program::DeviceLimits& device);

}  // namespace ttnn_moe::ops::moe_gate
