// The Python face of a device operation: the same four functions for every op, in the
// op's submodule `ttnn_moe._C.ops.<op>` (next to its bound `Attributes`):
//   output_specs(attributes, inputs, context) -> [TensorArg]   validation + output specs
//   program(attributes, io_tensors, context) -> MeshProgramDescriptor (cached)
//   program_cache_info() -> {hits, misses, entries};  program_cache_clear()
#pragma once

#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "ops/common/device_operation.hpp"

namespace ttnn_moe::ops {

template <class Op>
void bind_device_operation(pybind11::module_& m) {
    namespace py = pybind11;
    m.attr("name") = Op::name;
    m.attr("uses_fabric") = uses_fabric<Op>;
    m.def("output_specs", &output_specs<Op>, py::arg("attributes"), py::arg("inputs"), py::arg("context"),
          "Validates the inputs (ValueError naming the offending value) and returns the output specs (address 0).");
    m.def("program", &mesh_program<Op>, py::arg("attributes"), py::arg("io_tensors"), py::arg("context"),
          "The mesh program for io_tensors = inputs then outputs, from the op's program cache (a hit only "
          "rewrites buffer addresses).");
    m.def(
        "program_cache_info",
        [] {
            auto& cache = program_cache<Op>();
            return py::dict(py::arg("hits") = cache.hits(), py::arg("misses") = cache.misses(),
                            py::arg("entries") = cache.size());
        },
        "Hits, misses and entries of the op's program cache.");
    m.def("program_cache_clear", [] { program_cache<Op>().clear(); }, "Empties the op's program cache.");
}

}  // namespace ttnn_moe::ops
