#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "bindings/bindings.hpp"
#include "ops/common/device_operation.hpp"
#include "ops/common/op_registry.hpp"
#include "program/device_limits.hpp"
#include "program/tensor_accessor_args.hpp"
#include "program/tensor_arg.hpp"

namespace py = pybind11;

namespace ttnn_moe::bindings {

void bind_ops(py::module_& parent) {
    auto m = parent.def_submodule("ops", "MoE op program factories (validation, output specs, programs)");

    using program::Layout;
    using program::TensorArg;
    py::module_ pm = parent.attr("program");
    py::enum_<Layout>(pm, "Layout").value("ROW_MAJOR", Layout::ROW_MAJOR).value("TILE", Layout::TILE);
    py::class_<TensorArg>(pm, "TensorArg", "What a program factory sees of a device tensor")
        .def(py::init([](std::vector<uint32_t> shape, program::DataFormat dtype, Layout layout, uint32_t address,
                         uint32_t page_size, uint32_t num_pages, bool is_dram, uint32_t alignment) {
                 return TensorArg{std::move(shape), dtype, layout, address, page_size, num_pages, is_dram, alignment};
             }),
             py::arg("shape"), py::arg("dtype"), py::arg("layout"), py::arg("address"), py::arg("page_size"),
             py::arg("num_pages"), py::arg("is_dram") = true, py::arg("alignment") = 0)
        .def_readwrite("shape", &TensorArg::shape)
        .def_readwrite("dtype", &TensorArg::dtype)
        .def_readwrite("layout", &TensorArg::layout)
        .def_readwrite("address", &TensorArg::address)
        .def_readwrite("page_size", &TensorArg::page_size)
        .def_readwrite("num_pages", &TensorArg::num_pages)
        .def_readwrite("is_dram", &TensorArg::is_dram)
        .def_readwrite("alignment", &TensorArg::alignment);

    using ops::FabricTopology;
    py::enum_<FabricTopology>(m, "FabricTopology", "ttnn.Topology values the fabric ops route for")
        .value("Linear", FabricTopology::Linear)
        .value("Ring", FabricTopology::Ring)
        .value("Mesh", FabricTopology::Mesh);
    using program::DeviceLimits;
    py::class_<DeviceLimits>(pm, "DeviceLimits", R"doc(What one device holds, as its target reads it from the device:
the logical worker grid, the L1 bytes free for circular buffers on each worker core, the
circular buffers and semaphores a core has, the DRAM alignment the ops stride their L1 scratch
by, and the NOC coordinates of the grid's columns and rows (worker_core_from_logical_core), which
multicasting kernels address other cores by (empty when not given). Every program is checked
against it before launch.)doc")
        .def(py::init([](program::CoreCoord grid, uint32_t l1_bytes_per_core, uint32_t max_cbs_per_core,
                         uint32_t max_semaphores_per_core, uint32_t dram_alignment,
                         std::vector<program::CoreCoord> worker_noc_cores) {
                 if (dram_alignment == 0 || (dram_alignment & (dram_alignment - 1)) != 0) {
                     throw std::invalid_argument("DeviceLimits.dram_alignment must be a power of two, got " +
                                                 std::to_string(dram_alignment));
                 }
                 if (!worker_noc_cores.empty() && worker_noc_cores.size() != size_t{grid.x} * grid.y) {
                     throw std::invalid_argument("DeviceLimits.worker_noc_cores must list the " +
                                                 std::to_string(grid.x * grid.y) + " cores of the grid, got " +
                                                 std::to_string(worker_noc_cores.size()));
                 }
                 return DeviceLimits{
                     grid,           l1_bytes_per_core,          max_cbs_per_core, max_semaphores_per_core,
                     dram_alignment, std::move(worker_noc_cores)};
             }),
             py::kw_only(), py::arg("grid"), py::arg("l1_bytes_per_core"), py::arg("max_cbs_per_core"),
             py::arg("max_semaphores_per_core"), py::arg("dram_alignment"),
             py::arg("worker_noc_cores") = std::vector<program::CoreCoord>{},
             "worker_noc_cores: NOC coordinates of the logical worker cores, row-major (y * grid.x + x); "
             "ops that spread over cores need them")
        .def_readonly("grid", &DeviceLimits::grid)
        .def_readonly("l1_bytes_per_core", &DeviceLimits::l1_bytes_per_core)
        .def_readonly("max_cbs_per_core", &DeviceLimits::max_cbs_per_core)
        .def_readonly("max_semaphores_per_core", &DeviceLimits::max_semaphores_per_core)
        .def_readonly("dram_alignment", &DeviceLimits::dram_alignment)
        .def_readonly("worker_noc_cores", &DeviceLimits::worker_noc_cores);
    pm.def(
        "tensor_accessor_args",
        [](const TensorArg& tensor) {
            std::vector<uint32_t> args;
            program::append_tensor_accessor_args(tensor, args);
            return args;
        },
        py::arg("tensor"),
        "The compile-time args TensorAccessorArgs(buffer).append_to gives for this interleaved tensor.");
    pm.def("check_program_fits", &program::check_program_fits, py::arg("op"), py::arg("program"), py::arg("device"),
           "Raises ValueError naming what of `program` does not fit the device (grid, L1, CBs, semaphores).");
    using ops::MeshContext;
    py::class_<MeshContext>(m, "MeshContext", R"doc(Where an op runs, as the launcher sees its tensors' mesh.

A single device is a 1x1 mesh. Fabric ops also need the topology, the packet payload, the
fabric node id of every device and connect_fabric(src, dst, link, program, core) -> [runtime
args], the target's setup_fabric_connection; it runs only when a program is built.)doc")
        .def(py::init([](std::string kernels_root, program::DeviceLimits device, uint32_t rows, uint32_t cols,
                         FabricTopology topology, uint32_t max_packet_payload,
                         std::vector<std::pair<uint32_t, uint32_t>> fabric_node_ids,
                         ops::FabricConnector connect_fabric) {
                 return MeshContext{std::move(kernels_root),
                                    device,
                                    rows,
                                    cols,
                                    topology,
                                    max_packet_payload,
                                    std::move(fabric_node_ids),
                                    std::move(connect_fabric)};
             }),
             py::kw_only(), py::arg("kernels_root"), py::arg("device"), py::arg("rows") = 1, py::arg("cols") = 1,
             py::arg("topology") = FabricTopology::Linear, py::arg("max_packet_payload") = 0,
             py::arg("fabric_node_ids") = std::vector<std::pair<uint32_t, uint32_t>>{},
             py::arg("connect_fabric") = ops::FabricConnector{})
        .def_readonly("kernels_root", &MeshContext::kernels_root)
        .def_readonly("device", &MeshContext::device)
        .def_readonly("rows", &MeshContext::rows)
        .def_readonly("cols", &MeshContext::cols)
        .def_readonly("topology", &MeshContext::topology);

    for (auto binder : ops::registered_op_binders()) binder(m);
}

}  // namespace ttnn_moe::bindings
