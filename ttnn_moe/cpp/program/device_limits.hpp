// What one device of a target can hold, read from the device by the target (the emulator's
// parameters, or the real runtime's answers), and the check that a program fits it.
// tt-metal makes some of these checks only after the kernel compile, so ttnn_moe makes them
// all before launch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "program/program_descriptor.hpp"

namespace ttnn_moe::program {

struct DeviceLimits {
    CoreCoord grid{8, 8};                  // logical worker cores (compute_with_storage_grid_size)
    uint32_t l1_bytes_per_core = 0;        // L1 free for circular buffers on each worker core
    uint32_t max_cbs_per_core = 0;         // circular buffer indices per core
    uint32_t max_semaphores_per_core = 0;  // semaphore ids per core
    // DRAM page and NOC DRAM-read alignment (Wormhole 32 B, Blackhole 64 B): L1 scratch slots that
    // receive DRAM pages are strided by it, as the kernels' NOC_DRAM_READ_ALIGNMENT_BYTES is.
    uint32_t dram_alignment = 0;
    // NOC coordinates kernels address a worker core by (tt-metal's worker_core_from_logical_core):
    // x of each logical grid column, y of each logical grid row (the mapping is per column and per
    // row on every chip). Empty when the target does not give them; ops that multicast need them.
    std::vector<uint32_t> worker_noc_x;
    std::vector<uint32_t> worker_noc_y;
};

// Throws std::invalid_argument, naming `op`, the kernel / circular buffer / semaphore, the
// value and the device's limit, when `program` places anything outside the worker grid,
// gives a core more circular-buffer bytes or buffers than its L1 holds, or more semaphores
// than it has.
void check_program_fits(const std::string& op, const ProgramDescriptor& program, const DeviceLimits& limits);

}  // namespace ttnn_moe::program
