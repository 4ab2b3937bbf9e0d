// Python face of a mesh op's program: one cached program per device plus the
// fabric connections its kernel expects at the end of its runtime args. The
// caller (ttnn_moe.ops._mesh_launch) appends the connection block with the
// target's setup_fabric_connection, exactly as ttnn programs do on hardware:
// [has_forward][forward args of links 0..num_links-1][has_backward][backward args ...].
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>

#include "ops/common/dispatch_line.hpp"
#include "ops/common/program_cache.hpp"

namespace ttnn_moe::ops {

// Kernel and core whose runtime args end with the fabric connection block, and the
// links per direction it connects.
struct FabricWorker {
    uint32_t kernel_index = 0;
    program::CoreCoord core{0, 0};
    uint32_t num_links = 1;
};

inline pybind11::list mesh_program_entries(
    ProgramCache& cache, const ProgramKey& base_key, const std::vector<program::TensorArg>& io,
    const MeshGeometry& mesh, const FabricWorker& worker,
    const std::function<CachedProgram(program::MeshCoordinate)>& factory) {
    namespace py = pybind11;
    py::list entries;
    for (uint32_t row = 0; row < mesh.rows; ++row) {
        for (uint32_t col = 0; col < mesh.cols; ++col) {
            const program::MeshCoordinate device{row, col};
            ProgramKey key = base_key;
            key.add(row).add(col);
            auto program = cache.get(key, io, [&] { return factory(device); });
            const auto neighbors = fabric_neighbors(mesh, dispatch_line(mesh, device));
            py::dict entry;
            entry["coord"] = device;
            entry["program"] = std::move(program);
            entry["kernel_index"] = worker.kernel_index;
            entry["core"] = worker.core;
            entry["num_links"] = worker.num_links;
            entry["forward"] = neighbors.forward ? py::cast(*neighbors.forward) : py::none();
            entry["backward"] = neighbors.backward ? py::cast(*neighbors.backward) : py::none();
            entries.append(entry);
        }
    }
    return entries;
}

}  // namespace ttnn_moe::ops
