#include "program/device_limits.hpp"

#include <map>
#include <stdexcept>
#include <utility>

namespace ttnn_moe::program {
namespace {

std::string core_str(const CoreCoord& core) {
    return "(" + std::to_string(core.x) + ", " + std::to_string(core.y) + ")";
}

std::string kernel_name(const KernelDescriptor& kernel) {
    if (kernel.source_type != KernelDescriptor::SourceType::FILE_PATH) return "kernel (inline source)";
    const auto slash = kernel.kernel_source.find_last_of('/');
    return "kernel " + kernel.kernel_source.substr(slash == std::string::npos ? 0 : slash + 1);
}

void check_in_grid(const std::string& op, const std::string& what, const CoreRangeSet& cores,
                   const DeviceLimits& limits) {
    for (const auto& range : cores.ranges) {
        if (range.end.x >= limits.grid.x || range.end.y >= limits.grid.y) {
            throw std::invalid_argument(op + ": " + what + " is placed on core " + core_str(range.end) +
                                        ", outside the device's " + std::to_string(limits.grid.x) + "x" +
                                        std::to_string(limits.grid.y) + " worker grid");
        }
    }
}

}  // namespace

CoreCoord DeviceLimits::noc_core(const std::string& op, CoreCoord core) const {
    if (core.x >= grid.x || core.y >= grid.y) {
        throw std::invalid_argument(op + ": core " + core_str(core) + " is outside the device's " +
                                    std::to_string(grid.x) + "x" + std::to_string(grid.y) + " worker grid");
    }
    if (worker_noc_cores.size() != size_t{grid.x} * grid.y) {
        throw std::invalid_argument(op + ": the target gave no NOC coordinates of the worker cores (" +
                                    std::to_string(worker_noc_cores.size()) + " for a " + std::to_string(grid.x) + "x" +
                                    std::to_string(grid.y) + " grid); a program spread over cores needs them");
    }
    return worker_noc_cores[size_t{core.y} * grid.x + core.x];
}

void check_program_fits(const std::string& op, const ProgramDescriptor& program, const DeviceLimits& limits) {
    for (const auto& kernel : program.kernels) {
        const std::string name = kernel_name(kernel);
        check_in_grid(op, name, kernel.core_ranges, limits);
        for (const auto& [core, args] : kernel.runtime_args) {
            check_in_grid(op, name + " runtime args", CoreRangeSet{{CoreRange{core, core}}}, limits);
        }
    }
    // A buffer index below the device's count bounds the buffers of a core; their bytes add up per core.
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> cb_bytes;
    for (const auto& cb : program.cbs) {
        const uint32_t first_index = cb.format_descriptors.empty() ? 0 : cb.format_descriptors[0].buffer_index;
        const std::string name = "circular buffer " + std::to_string(first_index);
        check_in_grid(op, name, cb.core_ranges, limits);
        for (const auto& format : cb.format_descriptors) {
            if (format.buffer_index >= limits.max_cbs_per_core) {
                throw std::invalid_argument(op + ": circular buffer index " + std::to_string(format.buffer_index) +
                                            " is past the device's " + std::to_string(limits.max_cbs_per_core) +
                                            " circular buffers per core");
            }
        }
        for (const auto& core : cb.core_ranges.cores()) cb_bytes[{core.x, core.y}] += cb.total_size;
    }
    for (const auto& [core, bytes] : cb_bytes) {
        if (bytes > limits.l1_bytes_per_core) {
            throw std::invalid_argument(op + ": circular buffers of " + std::to_string(bytes) + " B on core " +
                                        core_str({core.first, core.second}) + " exceed the " +
                                        std::to_string(limits.l1_bytes_per_core) + " B of L1 free on each core");
        }
    }
    for (const auto& semaphore : program.semaphores) {
        check_in_grid(op, "semaphore " + std::to_string(semaphore.id), semaphore.core_ranges, limits);
        if (semaphore.id >= limits.max_semaphores_per_core) {
            throw std::invalid_argument(op + ": semaphore id " + std::to_string(semaphore.id) +
                                        " is past the device's " + std::to_string(limits.max_semaphores_per_core) +
                                        " semaphores per core");
        }
    }
}

}  // namespace ttnn_moe::program
