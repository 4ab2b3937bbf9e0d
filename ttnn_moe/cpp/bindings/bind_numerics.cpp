// ttnn_moe._C.numerics: tilize / untilize of tile pages in every supported format. The
// emulator's tensors encode bfloat8_b pages with them (ttnn_moe/emu/pages.py: the numerics own
// its shared-exponent encoding). Value conventions: numpy_values.hpp. The tests' further access
// to the tile math is the separate test-only module (ttnn_moe/cpp/testing).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "bindings/bindings.hpp"
#include "bindings/numpy_values.hpp"
#include "emu/numerics/numerics.hpp"

namespace py = pybind11;
using ttnn_moe::program::DataFormat;
namespace numerics = ttnn_moe::emu::numerics;

namespace ttnn_moe::bindings {

namespace {

using numpy_values::bytes_of;
using numpy_values::require_supported;
using numpy_values::values_of;

py::array_t<uint8_t> tilize_array(DataFormat format, const py::array& matrix) {
    require_supported(format);
    if (matrix.ndim() != 2)
        throw py::value_error("tilize expects a 2-D (rows, cols) array, got ndim " + std::to_string(matrix.ndim()));
    const auto rows = static_cast<uint32_t>(matrix.shape(0));
    const auto cols = static_cast<uint32_t>(matrix.shape(1));
    if (rows % 32 != 0 || cols % 32 != 0)
        throw py::value_error("tilize: rows and cols must be multiples of 32, got (" + std::to_string(rows) + ", " +
                              std::to_string(cols) + ")");
    const std::vector<float> values = values_of(format, matrix);
    py::array_t<uint8_t> out(size_t(rows / 32) * (cols / 32) * numerics::tile_bytes(format));
    numerics::tilize(format, values.data(), rows, cols, out.mutable_data());
    return out;
}

py::array_t<float> untilize_array(DataFormat format, const py::array& pages, uint32_t rows, uint32_t cols) {
    require_supported(format);
    if (rows % 32 != 0 || cols % 32 != 0)
        throw py::value_error("untilize: rows and cols must be multiples of 32, got (" + std::to_string(rows) + ", " +
                              std::to_string(cols) + ")");
    const auto bytes = bytes_of(pages);
    const size_t want = size_t(rows / 32) * (cols / 32) * numerics::tile_bytes(format);
    if (static_cast<size_t>(bytes.size()) != want)
        throw py::value_error("untilize: " + std::to_string(rows) + "x" + std::to_string(cols) + " in " +
                              numerics::format_name(format) + " needs " + std::to_string(want) + " bytes, got " +
                              std::to_string(bytes.size()));
    py::array_t<float> out({rows, cols});
    numerics::untilize(format, bytes.data(), rows, cols, out.mutable_data());
    return out;
}

}  // namespace

void bind_numerics(py::module_& parent) {
    auto m = parent.def_submodule("numerics", "Host layout conversion of tile pages");
    m.def("tilize", &tilize_array, py::arg("data_format"), py::arg("matrix"),
          "(rows, cols) values -> uint8 tile pages in row-major tile order, packed as ttnn lays them out.");
    m.def("untilize", &untilize_array, py::arg("data_format"), py::arg("pages"), py::arg("rows"), py::arg("cols"),
          "uint8 tile pages -> (rows, cols) float32 values.");
}

}  // namespace ttnn_moe::bindings
