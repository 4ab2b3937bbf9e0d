// The one shape of every MoE op, and the one way its program is built and cached.
//
// An op is a struct (its "device operation") with:
//   static constexpr const char* name;                 // "moe_bmm"
//   using Attributes = ...;                            // everything but the tensors that shapes the program;
//                                                      // `fields()` returns a tuple of every member
//   static constexpr Placement placement;              // one program everywhere, or one per device
//   static Attributes with_context(Attributes, const MeshContext&);  // fills what the mesh decides
//   static std::vector<TensorArg> output_specs(const Attributes&, const std::vector<TensorArg>& inputs);
//   static CachedProgram create_program(const Attributes&, const std::vector<TensorArg>& io,
//                                       const MeshContext&, program::MeshCoordinate device);
//   static std::vector<FabricWorker> fabric_workers(const Attributes&, const DeviceLimits&);  // fabric ops only
//
// `mesh_program<Op>` returns the whole MeshProgramDescriptor (every device's program, with
// the fabric connections of line ops appended) from the op's cache. The cache key is
// derived in one place, `program_key`: the op's name, its attributes' fields, the io
// tensor specs and the mesh context. A hit rewrites buffer addresses only; nothing is
// rebuilt and no fabric connection is set up again. A single device is a 1x1 mesh.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ops/common/dispatch_line.hpp"
#include "ops/common/program_cache.hpp"
#include "program/device_limits.hpp"
#include "program/program_descriptor.hpp"
#include "program/tensor_arg.hpp"

namespace ttnn_moe::ops {

// Sets up one fabric connection from `src` to its neighbor `dst` on `link` for the worker
// `core` of `program` (adding what the connection needs, e.g. semaphores, to the program)
// and returns the runtime args the worker's sender is built from. The target supplies it:
// the emulator's or ttnn's setup_fabric_connection. The program is passed by pointer so a
// Python connector edits this program, not a copy of it.
using FabricConnector =
    std::function<std::vector<uint32_t>(program::MeshCoordinate src, program::MeshCoordinate dst, uint32_t link,
                                        program::ProgramDescriptor* program, program::CoreCoord core)>;

// Where an op runs, as the launcher sees the tensors' mesh (a single device: 1x1).
struct MeshContext {
    std::string kernels_root;      // directory holding the op kernels
    program::DeviceLimits device;  // worker grid and per-core L1, CB and semaphore limits of every device
    uint32_t rows = 1;
    uint32_t cols = 1;
    FabricTopology topology = FabricTopology::Linear;            // routes of fabric ops
    uint32_t max_packet_payload = 0;                             // fabric packet payload bytes (fabric ops)
    std::vector<std::pair<uint32_t, uint32_t>> fabric_node_ids;  // (mesh id, chip id), row-major (fabric ops)
    FabricConnector connect_fabric;                              // not part of the cache key: it only runs on a miss

    auto fields() const {
        return std::tie(kernels_root, device.grid.x, device.grid.y, device.l1_bytes_per_core, device.max_cbs_per_core,
                        device.max_semaphores_per_core, device.dram_alignment, device.worker_noc_cores, rows, cols,
                        topology, max_packet_payload, fabric_node_ids);
    }
};

// with_context of the ops whose attributes carry the worker grid and the kernels' directory, both
// decided by where the op runs.
template <class Attributes>
Attributes with_grid_and_kernels(Attributes attributes, const MeshContext& context) {
    attributes.grid = context.device.grid;
    attributes.kernels_dir = context.kernels_root;
    return attributes;
}

enum class Placement {
    kSameProgramEverywhere,  // one program for every device (addresses and counts live in device memory)
    kPerDevice,              // one program per device (its position on a dispatch line)
};

// A kernel and core whose runtime args end with the fabric connection block
// [has_forward][forward args of links first_link..first_link+num_links-1][has_backward][backward args ...].
// An op may spread its fabric traffic over several such workers (each core has few semaphores, and
// every connection takes some).
struct FabricWorker {
    uint32_t kernel_index = 0;
    program::CoreCoord core{0, 0};
    uint32_t first_link = 0;
    uint32_t num_links = 1;
    MeshGeometry line;  // the dispatch line whose neighbors the worker connects to
};

// The device operation of a fabric line op (dispatch, combine): one program per device, whose
// fabric workers (FabricWorkers(attributes)) connect to their line neighbors over tt-fabric. The
// op's Attributes hold `mesh` (MeshGeometry; its shape and topology come from the mesh context),
// `max_packet_payload` (from the context) and `num_links`; the op derives from this and names itself:
//   struct Operation : LineOperation<Attributes, &output_specs, &create_program, &workers> { name = ...; };
template <class AttributesT, auto OutputSpecs, auto CreateProgram, auto FabricWorkers>
struct LineOperation {
    static constexpr Placement placement = Placement::kPerDevice;
    using Attributes = AttributesT;
    static Attributes with_context(Attributes attributes, const MeshContext& context) {
        attributes.mesh.rows = context.rows;
        attributes.mesh.cols = context.cols;
        attributes.mesh.topology = context.topology;
        attributes.max_packet_payload = context.max_packet_payload;
        return attributes;
    }
    static std::vector<program::TensorArg> output_specs(const Attributes& attributes,
                                                        const std::vector<program::TensorArg>& inputs) {
        return OutputSpecs(inputs, attributes);
    }
    static CachedProgram create_program(const Attributes& attributes, const std::vector<program::TensorArg>& io,
                                        const MeshContext& context, program::MeshCoordinate device) {
        return CreateProgram(io, context.kernels_root, context.device, attributes, device, context.fabric_node_ids);
    }
    static std::vector<FabricWorker> fabric_workers(const Attributes& attributes, const program::DeviceLimits& limits) {
        return FabricWorkers(attributes, limits);
    }
};

// A cached mesh program: each device range's program with its address slots.
struct CachedMeshProgram {
    std::vector<program::MeshCoordinateRange> ranges;
    std::vector<CachedProgram> programs;
};

class MeshProgramCache {
public:
    program::MeshProgramDescriptor get(const ProgramKey& key, const std::vector<program::TensorArg>& io,
                                       const std::function<CachedMeshProgram()>& build);
    uint64_t hits() const { return hits_; }
    uint64_t misses() const { return misses_; }
    size_t size() const { return entries_.size(); }
    void clear();

private:
    std::mutex mutex_;
    std::unordered_map<std::string, CachedMeshProgram> entries_;
    uint64_t hits_ = 0;
    uint64_t misses_ = 0;
};

namespace detail {

inline void add_field(ProgramKey& key, const std::string& value) {
    key.add(value);
}
inline void add_field(ProgramKey& key, const program::TensorArg& value) {
    key.add(value);
}
inline void add_field(ProgramKey& key, const std::vector<uint32_t>& values) {
    key.add(values.size());
    for (const uint32_t v : values) key.add(v);
}
inline void add_field(ProgramKey& key, const std::vector<std::pair<uint32_t, uint32_t>>& pairs) {
    key.add(pairs.size());
    for (const auto& [a, b] : pairs) key.add(a).add(b);
}
inline void add_field(ProgramKey& key, const std::vector<program::CoreCoord>& cores) {
    key.add(cores.size());
    for (const auto& core : cores) key.add(core.x).add(core.y);
}
template <class T>
    requires std::is_integral_v<T> || std::is_enum_v<T>
void add_field(ProgramKey& key, T value) {
    key.add(static_cast<uint64_t>(value));
}
template <class Tuple>
void add_fields(ProgramKey& key, const Tuple& fields) {
    std::apply([&](const auto&... field) { (add_field(key, field), ...); }, fields);
}

// Appends the fabric connection block of `worker` on `device` to its kernel's runtime args.
void connect_fabric_worker(program::ProgramDescriptor& program, const FabricWorker& worker,
                           program::MeshCoordinate device, const MeshContext& context);

}  // namespace detail

// The cache key of a program: the one definition every op uses.
template <class Op>
ProgramKey program_key(const typename Op::Attributes& attributes, const std::vector<program::TensorArg>& io,
                       const MeshContext& context) {
    ProgramKey key;
    key.add(std::string(Op::name));
    detail::add_fields(key, attributes.fields());
    for (const auto& tensor : io) key.add(tensor);
    detail::add_fields(key, context.fields());
    return key;
}

// An op sends over tt-fabric when it names the kernels that do (fabric_workers).
template <class Op>
constexpr bool uses_fabric = requires(const typename Op::Attributes& attributes, const program::DeviceLimits& limits) {
    Op::fabric_workers(attributes, limits);
};

template <class Op>
MeshProgramCache& program_cache() {
    static MeshProgramCache cache;
    return cache;
}

template <class Op>
std::vector<program::TensorArg> output_specs(const typename Op::Attributes& requested,
                                             const std::vector<program::TensorArg>& inputs,
                                             const MeshContext& context) {
    return Op::output_specs(Op::with_context(requested, context), inputs);
}

// The op's whole mesh program for io = inputs then outputs (allocated from output_specs).
template <class Op>
program::MeshProgramDescriptor mesh_program(const typename Op::Attributes& requested,
                                            const std::vector<program::TensorArg>& io, const MeshContext& context) {
    const auto attributes = Op::with_context(requested, context);
    const auto build = [&] {
        CachedMeshProgram mesh;
        if constexpr (Op::placement == Placement::kSameProgramEverywhere) {
            mesh.ranges.push_back({{0, 0}, {context.rows - 1, context.cols - 1}});
            mesh.programs.push_back(Op::create_program(attributes, io, context, {0, 0}));
            program::check_program_fits(std::string(Op::name), mesh.programs.back().program, context.device);
        } else {
            std::vector<FabricWorker> workers;
            if constexpr (uses_fabric<Op>) workers = Op::fabric_workers(attributes, context.device);
            for (uint32_t row = 0; row < context.rows; ++row) {
                for (uint32_t col = 0; col < context.cols; ++col) {
                    const program::MeshCoordinate device{row, col};
                    CachedProgram program = Op::create_program(attributes, io, context, device);
                    for (const auto& worker : workers) {
                        detail::connect_fabric_worker(program.program, worker, device, context);
                    }
                    program::check_program_fits(std::string(Op::name), program.program, context.device);
                    mesh.ranges.push_back({device, device});
                    mesh.programs.push_back(std::move(program));
                }
            }
        }
        return mesh;
    };
    return program_cache<Op>().get(program_key<Op>(attributes, io, context), io, build);
}

}  // namespace ttnn_moe::ops
