#include <pybind11/stl.h>

#include "ops/all_to_all_dispatch_dense/all_to_all_dispatch_dense_device_operation.hpp"
#include "ops/common/mesh_program_binding.hpp"
#include "ops/common/op_registry.hpp"

namespace py = pybind11;

namespace ttnn_moe::ops::dispatch_dense {
namespace {

using NodeIds = std::vector<std::pair<uint32_t, uint32_t>>;

Attributes attributes(std::pair<uint32_t, uint32_t> mesh_shape, uint32_t cluster_axis, uint32_t topology,
                      uint32_t capacity, uint32_t num_links, uint32_t max_packet_payload) {
    return {{mesh_shape.first, mesh_shape.second, cluster_axis, static_cast<FabricTopology>(topology)},
            capacity, num_links, max_packet_payload};
}

void bind(py::module_& m) {
    m.def(
        "all_to_all_dispatch_dense_output_specs",
        [](const std::vector<program::TensorArg>& inputs, std::pair<uint32_t, uint32_t> mesh_shape,
           uint32_t cluster_axis, uint32_t topology, uint32_t capacity, uint32_t num_links,
           uint32_t max_packet_payload) {
            return output_specs(inputs, attributes(mesh_shape, cluster_axis, topology, capacity, num_links,
                                                   max_packet_payload));
        },
        py::arg("inputs"), py::arg("mesh_shape"), py::arg("cluster_axis"), py::arg("topology"), py::arg("capacity"),
        py::arg("num_links"), py::arg("max_packet_payload"),
        R"doc(Validates the inputs and returns the per-device output specs of all_to_all_dispatch_dense.

inputs: [x (B, S, H) bfloat16, topk_indices (B, S, K) uint32, topk_weights (B, S, K) bfloat16,
         expert_mapping (1, 1, E, num_devices) uint16/uint32/int32], ROW_MAJOR, DRAM interleaved.
capacity: rows per device (multiple of 32), 0 for the worst case. topology: 0 Linear, 1 Ring, 2 Mesh.
outputs: tokens (capacity, H) bfloat16, num_routed_tokens (E_l, 1) uint32, expert_offsets (E_l, 1) uint32,
         token_idx_map (capacity,) uint32, routed_token_weights (capacity,) bfloat16,
         slot_source (capacity, 2) uint32, num_slots (1,) uint32, dispatch_status (1, 8) uint32,
         routing_counts (D, E) and routing_lists (D, 2*T*K) uint32 (scratch).
Raises ValueError naming the offending value.)doc");
    m.def(
        "all_to_all_dispatch_dense_program",
        [](const std::vector<program::TensorArg>& io, const std::string& kernels_root,
           std::pair<uint32_t, uint32_t> grid, std::pair<uint32_t, uint32_t> mesh_shape, uint32_t cluster_axis,
           uint32_t topology, uint32_t capacity, uint32_t num_links, uint32_t max_packet_payload,
           const NodeIds& fabric_node_ids) {
            const Attributes attrs =
                attributes(mesh_shape, cluster_axis, topology, capacity, num_links, max_packet_payload);
            ProgramKey key;
            key.add(kernels_root).add(grid.first).add(grid.second).add(mesh_shape.first).add(mesh_shape.second);
            key.add(cluster_axis).add(topology).add(capacity).add(num_links).add(max_packet_payload);
            for (const auto& [mesh_id, chip_id] : fabric_node_ids) key.add(mesh_id).add(chip_id);
            for (const auto& t : io) key.add(t);
            return mesh_program_entries(program_cache(), key, io, attrs.mesh, FabricWorker{0, {0, 0}, num_links}, [&](auto device) {
                return create_program(io, kernels_root, {grid.first, grid.second}, attrs, device, fabric_node_ids);
            });
        },
        py::arg("io_tensors"), py::arg("kernels_root"), py::arg("grid"), py::arg("mesh_shape"),
        py::arg("cluster_axis"), py::arg("topology"), py::arg("capacity"), py::arg("num_links"),
        py::arg("max_packet_payload"), py::arg("fabric_node_ids"),
        R"doc(Per-device programs of all_to_all_dispatch_dense (cached by attributes, io specs and device).

Returns one dict per device in row-major order: coord, program, kernel_index and core of the
fabric-using kernel, and the forward/backward neighbor coordinates it connects to (or None).
fabric_node_ids: (mesh id, chip id) of every device in row-major order.)doc");
    m.def("all_to_all_dispatch_dense_default_capacity", &default_capacity, py::arg("tokens_per_device"),
          py::arg("top_k"), py::arg("line_size"), py::arg("local_experts"),
          "Rows per device that always suffice when a token's experts are distinct (SPEC section 4).");
    m.def(
        "all_to_all_dispatch_dense_cache_stats",
        [] {
            auto& c = program_cache();
            return py::dict(py::arg("hits") = c.hits(), py::arg("misses") = c.misses(), py::arg("size") = c.size());
        },
        "Program cache counters of all_to_all_dispatch_dense: hits, misses, size.");
}

const OpBindingRegistration registration(&bind);

}  // namespace
}  // namespace ttnn_moe::ops::dispatch_dense
