// ttnn_moe._C.numerics: tilize / untilize of tile pages in every supported format. The
// emulator's tensors encode bfloat8_b pages with them (ttnn_moe/emu/pages.py: the numerics own
// its shared-exponent encoding). Value conventions: numpy_values.hpp. The tests' further access
// to the tile math is the separate test-only module (ttnn_moe/cpp/testing).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bindings/bindings.hpp"
#include "bindings/numpy_values.hpp"
#include "emu/numerics/numerics.hpp"
#include "emu/numerics/strided_tilize.hpp"

namespace py = pybind11;
using ttnn_moe::program::DataFormat;
namespace numerics = ttnn_moe::emu::numerics;

namespace ttnn_moe::bindings {

namespace {

using numpy_values::bytes_of;
using numpy_values::require_supported;
using numpy_values::values_of;

// Float formats read the array in place (any strides, 2-D or 3-D, float32 or bf16 bits) on both
// cores; integer formats take their values through values_of.
py::array_t<uint8_t> tilize_array(DataFormat format, const py::array& matrix, bool bfloat16_bits) {
    require_supported(format);
    if (matrix.ndim() != 2 && matrix.ndim() != 3)
        throw py::value_error("tilize expects a 2-D (rows, cols) or 3-D (batch, rows, cols) array, got ndim " +
                              std::to_string(matrix.ndim()));
    const bool batched = matrix.ndim() == 3;
    const size_t batch = batched ? static_cast<size_t>(matrix.shape(0)) : 1;
    const auto rows = static_cast<size_t>(matrix.shape(batched ? 1 : 0));
    const auto cols = static_cast<size_t>(matrix.shape(batched ? 2 : 1));
    if (rows % 32 != 0 || cols % 32 != 0)
        throw py::value_error("tilize: rows and cols must be multiples of 32, got (" + std::to_string(rows) + ", " +
                              std::to_string(cols) + ")");
    py::array_t<uint8_t> out(batch * (rows / 32) * (cols / 32) * numerics::tile_bytes(format));
    if (numerics::is_integer_format(format)) {
        if (bfloat16_bits) throw py::value_error("tilize: bfloat16_bits needs a float format");
        const std::vector<float> values = values_of(format, matrix);
        numerics::tilize(format, values.data(), static_cast<uint32_t>(batch * rows), static_cast<uint32_t>(cols),
                         out.mutable_data());
        return out;
    }
    const py::dtype dtype = matrix.dtype();
    numerics::StridedMatrices source;
    if (bfloat16_bits) {
        if (!dtype.is(py::dtype::of<int16_t>()) && !dtype.is(py::dtype::of<uint16_t>()))
            throw py::type_error("tilize: bfloat16_bits needs an int16 or uint16 array, got dtype " +
                                 std::string(py::str(dtype)));
        source.element = numerics::StridedMatrices::Element::Bfloat16Bits;
    } else if (!dtype.is(py::dtype::of<float>())) {
        throw py::type_error("values for " + std::string(numerics::format_name(format)) +
                             " must be a float32 array (or bfloat16 bits with bfloat16_bits=True), got dtype " +
                             std::string(py::str(dtype)));
    }
    const auto itemsize = static_cast<ptrdiff_t>(matrix.itemsize());
    auto stride = [&](int axis) {
        const auto bytes = static_cast<ptrdiff_t>(matrix.strides(axis));
        if (bytes % itemsize != 0) throw py::value_error("tilize: array strides must be whole elements");
        return bytes / itemsize;
    };
    source.data = matrix.data();
    source.batch = batch;
    source.rows = rows;
    source.cols = cols;
    source.batch_stride = batched ? stride(0) : 0;
    source.row_stride = stride(batched ? 1 : 0);
    source.col_stride = stride(batched ? 2 : 1);
    uint8_t* dst = out.mutable_data();
    const unsigned threads = std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
    py::gil_scoped_release release;
    numerics::tilize_strided(format, source, dst, threads);
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
    m.def("tilize", &tilize_array, py::arg("data_format"), py::arg("matrix"), py::arg("bfloat16_bits") = false,
          "(rows, cols) or (batch, rows, cols) values -> uint8 tile pages in row-major tile order (batch after "
          "batch), packed as ttnn lays them out. bfloat16_bits: the int16/uint16 array holds bfloat16 bit patterns.");
    m.def("untilize", &untilize_array, py::arg("data_format"), py::arg("pages"), py::arg("rows"), py::arg("cols"),
          "uint8 tile pages -> (rows, cols) float32 values.");
}

}  // namespace ttnn_moe::bindings
