#include "ops/common/device_operation.hpp"

#include <stdexcept>

namespace ttnn_moe::ops {

namespace {
void write_addresses(CachedProgram& cached, const std::vector<program::TensorArg>& io) {
    for (const auto& slot : cached.address_slots) {
        if (slot.tensor_index >= io.size()) {
            throw std::logic_error("program cache: address slot names io tensor " + std::to_string(slot.tensor_index) +
                                   " but only " + std::to_string(io.size()) + " were given");
        }
        auto& kernel = cached.program.kernels.at(slot.kernel_index);
        auto& args = slot.runtime_args_index == AddressSlot::kCommonArgs
                         ? kernel.common_runtime_args
                         : kernel.runtime_args.at(slot.runtime_args_index).second;
        args.at(slot.arg_index) = io[slot.tensor_index].address;
    }
}
}  // namespace

program::MeshProgramDescriptor MeshProgramCache::get(const ProgramKey& key, const std::vector<program::TensorArg>& io,
                                                     const std::function<CachedMeshProgram()>& build) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key.str());
    if (it == entries_.end()) {
        ++misses_;
        it = entries_.emplace(key.str(), build()).first;
    } else {
        ++hits_;
    }
    program::MeshProgramDescriptor mesh;
    auto& cached = it->second;
    for (size_t i = 0; i < cached.programs.size(); ++i) {
        write_addresses(cached.programs[i], io);
        mesh.mesh_programs.emplace_back(cached.ranges[i], cached.programs[i].program);
    }
    return mesh;
}

void MeshProgramCache::clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.clear();
    hits_ = misses_ = 0;
}

namespace detail {

void connect_fabric_worker(program::ProgramDescriptor& program, const FabricWorker& worker,
                           program::MeshCoordinate device, const MeshContext& context) {
    if (!context.connect_fabric) {
        throw std::invalid_argument("this op sends over tt-fabric but its mesh context has no fabric connector");
    }
    const auto neighbors = fabric_neighbors(worker.line, dispatch_line(worker.line, device));
    std::vector<uint32_t> block;
    for (const auto& neighbor : {neighbors.forward, neighbors.backward}) {
        block.push_back(neighbor ? 1 : 0);
        if (!neighbor) continue;
        for (uint32_t link = worker.first_link; link < worker.first_link + worker.num_links; ++link) {
            // Adds the connection's semaphores to `program` and returns its runtime args.
            const auto args = context.connect_fabric(device, *neighbor, link, &program, worker.core);
            block.insert(block.end(), args.begin(), args.end());
        }
    }
    auto& kernel = program.kernels.at(worker.kernel_index);
    for (auto& [core, args] : kernel.runtime_args) {
        if (core == worker.core) args.insert(args.end(), block.begin(), block.end());
    }
}

}  // namespace detail
}  // namespace ttnn_moe::ops
