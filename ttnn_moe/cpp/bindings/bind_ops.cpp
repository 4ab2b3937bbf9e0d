#include <pybind11/stl.h>

#include "bindings/bindings.hpp"
#include "ops/common/op_registry.hpp"
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
                         uint32_t page_size, uint32_t num_pages, bool is_dram) {
                 return TensorArg{std::move(shape), dtype, layout, address, page_size, num_pages, is_dram};
             }),
             py::arg("shape"), py::arg("dtype"), py::arg("layout"), py::arg("address"), py::arg("page_size"),
             py::arg("num_pages"), py::arg("is_dram") = true)
        .def_readwrite("shape", &TensorArg::shape)
        .def_readwrite("dtype", &TensorArg::dtype)
        .def_readwrite("layout", &TensorArg::layout)
        .def_readwrite("address", &TensorArg::address)
        .def_readwrite("page_size", &TensorArg::page_size)
        .def_readwrite("num_pages", &TensorArg::num_pages)
        .def_readwrite("is_dram", &TensorArg::is_dram);

    for (auto binder : ops::registered_op_binders()) binder(m);
}

}  // namespace ttnn_moe::bindings
