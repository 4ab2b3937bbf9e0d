// Executes program descriptions on emulated devices.
//
// Every (kernel, core) pair becomes a fiber; all fibers of a run share one OS
// thread and are resumed round-robin in a fixed order, so runs are
// deterministic. A blocking API call (cb_wait_front, cb_reserve_back,
// semaphore waits) parks its fiber with the condition it waits for; the
// scheduler resumes it only once the condition holds. A pass in which no fiber
// can run is a deadlock and raises EmuError listing every blocked kernel.
#pragma once

#include <vector>

#include "emu/counters.hpp"
#include "emu/device.hpp"
#include "program/program_descriptor.hpp"

namespace ttnn_moe::emu {

struct DeviceProgram {
    Device* device = nullptr;
    const program::ProgramDescriptor* program = nullptr;
};

// Runs the programs together (one per device; they may address each other's
// cores through the NOC device field). Returns the counters of each program
// and adds them to each device's cumulative counters.
std::vector<Counters> run_programs(const std::vector<DeviceProgram>& programs);

Counters run_program(Device& device, const program::ProgramDescriptor& program);

// One program per device of the mesh, as the descriptor's ranges assign them.
// Programs run together when the L1 pool holds all their cores, else device by
// device (programs that do not talk to each other give the same results).
// Returns the counters per device id.
std::vector<std::pair<uint32_t, Counters>> run_mesh_program(Mesh& mesh, const program::MeshProgramDescriptor& program);

}  // namespace ttnn_moe::emu
