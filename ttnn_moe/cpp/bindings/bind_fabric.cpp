// Python surface of the emulated tt-fabric (ttnn_moe._C.emu): topology and
// delay configuration on Mesh, FabricNodeId, the setup_fabric_connection
// stand-in, and the fabric part of the counters dict.
#include <pybind11/operators.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/bindings.hpp"
#include "emu/device.hpp"
#include "emu/fabric/connection_args.hpp"
#include "emu/fabric/topology.hpp"
#include "emu/fabric/traffic.hpp"
#include "emu/include/ttnn_moe_emu/fabric_abi.h"
#include "program/program_descriptor.hpp"

namespace py = pybind11;
using namespace ttnn_moe::emu;

namespace ttnn_moe::bindings {

namespace {
py::dict traffic_dict(const fabric::Traffic& t) {
    py::dict d;
    d["packets"] = t.packets;
    d["bytes"] = t.bytes;
    return d;
}
}  // namespace

py::dict fabric_traffic_to_dict(const fabric::FabricTraffic& traffic) {
    py::list flows;
    std::map<std::pair<uint32_t, uint32_t>, fabric::Traffic> pairs;
    for (const auto& [k, t] : traffic.flows) {
        py::dict f = traffic_dict(t);
        f["src"] = k.src_chip;
        f["dst"] = k.dst_chip;
        f["link"] = k.link;
        f["core"] = py::make_tuple(k.core_x, k.core_y);
        f["type"] = fabric::send_type_name(k.send_type);
        flows.append(f);
        pairs[{k.src_chip, k.dst_chip}].add(t.packets, t.bytes);
    }
    py::dict pair_dict, link_dict;
    for (const auto& [k, t] : pairs) pair_dict[py::make_tuple(k.first, k.second)] = traffic_dict(t);
    for (const auto& [k, t] : traffic.links)
        link_dict[py::make_tuple(k.from_chip, k.to_chip, k.link)] = traffic_dict(t);
    py::dict d = traffic_dict(traffic.total());
    d["flows"] = flows;
    d["pairs"] = pair_dict;
    d["links"] = link_dict;
    return d;
}

void bind_fabric(py::module_& m) {
    py::enum_<fabric::Topology>(m, "Topology", "tt::tt_fabric::Topology subset the emulated fabric supports")
        .value("Linear", fabric::Topology::Linear)
        .value("Ring", fabric::Topology::Ring)
        .value("Mesh", fabric::Topology::Mesh);

    py::class_<fabric::FabricNodeId>(m, "FabricNodeId")
        .def(py::init([](uint32_t mesh_id, uint32_t chip_id) { return fabric::FabricNodeId{mesh_id, chip_id}; }),
             py::arg("mesh_id"), py::arg("chip_id"))
        .def_readonly("mesh_id", &fabric::FabricNodeId::mesh_id)
        .def_readonly("chip_id", &fabric::FabricNodeId::chip_id)
        .def(py::self == py::self)
        .def("__repr__", [](const fabric::FabricNodeId& n) {
            return "FabricNodeId(mesh_id=" + std::to_string(n.mesh_id) + ", chip_id=" + std::to_string(n.chip_id) + ")";
        });

    auto mesh = py::reinterpret_borrow<py::class_<Mesh, std::shared_ptr<Mesh>>>(m.attr("Mesh"));
    // Mesh(rows, cols, grid, topology=Topology.Ring): the constructor overload that sets the fabric topology.
    mesh.def(py::init([](uint32_t rows, uint32_t cols, std::pair<uint32_t, uint32_t> grid, fabric::Topology t) {
                 auto created = std::make_shared<Mesh>(rows, cols, grid.first, grid.second);
                 created->fabric().set_topology(t);
                 return created;
             }),
             py::arg("rows"), py::arg("cols"), py::arg("grid") = std::pair<uint32_t, uint32_t>{8, 8}, py::kw_only(),
             py::arg("topology"));
    mesh.def_property(
            "fabric_topology", [](Mesh& self) { return self.fabric().topology(); },
            [](Mesh& self, fabric::Topology t) { self.fabric().set_topology(t); },
            "Linear / Ring (1D lines along rows and columns) or Mesh (2D). Kernels are built with the matching "
            "ROUTING_MODE.")
        .def(
            "set_fabric_topology", [](Mesh& self, fabric::Topology t) { self.fabric().set_topology(t); },
            py::arg("topology"))
        .def(
            "set_fabric_seed", [](Mesh& self, uint64_t seed) { self.fabric().set_seed(seed); }, py::arg("seed"),
            "Seed of the fabric's delivery delays (each run starts from it).")
        .def(
            "set_fabric_max_delay", [](Mesh& self, uint32_t passes) { self.fabric().set_max_delay(passes); },
            py::arg("passes"), "Largest delivery delay of a packet, in scheduler passes (0: none).")
        .def(
            "set_fabric_num_links", [](Mesh& self, uint32_t n) { self.fabric().set_num_links(n); }, py::arg("n"))
        .def_property_readonly("fabric_num_links", [](Mesh& self) { return self.fabric().num_links(); })
        .def(
            "get_fabric_node_id",
            [](Mesh& self, const program::MeshCoordinate& c) {
                if (c.row >= self.rows() || c.col >= self.cols()) {
                    throw std::invalid_argument("mesh coordinate (" + std::to_string(c.row) + ", " +
                                                std::to_string(c.col) + ") is outside the mesh");
                }
                return fabric::FabricNodeId{self.fabric().mesh_id(), c.row * self.cols() + c.col};
            },
            py::arg("coord"));

    m.def("setup_fabric_connection", &fabric::setup_fabric_connection, py::arg("src_fabric_node_id"),
          py::arg("dst_fabric_node_id"), py::arg("link_idx"), py::arg("program_descriptor"), py::arg("worker_core"),
          "Stand-in for ttnn.setup_fabric_connection: adds the connection's semaphores on worker_core to the "
          "program and returns the runtime args to append for WorkerToFabricEdmSender::build_from_args.");
    m.def("setup_fabric_mux_connection", &fabric::setup_fabric_mux_connection, py::arg("src_fabric_node_id"),
          py::arg("dst_fabric_node_id"), py::arg("link_idx"), py::arg("program_descriptor"), py::arg("worker_core"),
          "setup_fabric_connection for a fabric mux (V2) client: [channel, teardown semaphore id, flow-control "
          "semaphore id], the channel shared with the mux's other clients.");
    m.attr("fabric_max_payload_size") = ttnn_moe_emu::FABRIC_MAX_PAYLOAD_BYTES;
    m.attr("fabric_buffer_slots") = ttnn_moe_emu::FABRIC_BUFFER_SLOTS;
}

}  // namespace ttnn_moe::bindings
