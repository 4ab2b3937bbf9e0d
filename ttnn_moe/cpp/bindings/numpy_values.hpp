// numpy arrays <-> the emulator's float storage, shared by the runtime numerics bindings and
// the test-only numerics extension.
//
// Arrays of values are float32. For the integer formats (UInt32, Int32, UInt16) the float32
// storage carries the raw bit pattern, as in the emulator; inputs may also be given with the
// matching integer dtype (uint32 / int32 / uint16), and outputs can be read back with
// `.view(np.uint32)` (`.view(np.int32)`; UInt16 values are zero-extended).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstring>
#include <string>
#include <vector>

#include "emu/numerics/numerics.hpp"

namespace ttnn_moe::bindings::numpy_values {

namespace py = pybind11;
using ttnn_moe::program::DataFormat;
namespace numerics = ttnn_moe::emu::numerics;

inline void require_supported(DataFormat format) {
    if (!numerics::is_supported_format(format))
        throw py::value_error(std::string("unsupported data format ") + numerics::format_name(format));
}

// The values of `array` in the emulator's float storage convention (see the file comment).
inline std::vector<float> values_of(DataFormat format, const py::array& array) {
    const py::dtype dtype = array.dtype();
    const size_t n = static_cast<size_t>(array.size());
    std::vector<float> out(n);
    auto copy_as = [&](auto tag) {
        using T = decltype(tag);
        const auto typed = py::array_t<T, py::array::c_style>::ensure(array);
        const T* src = typed.data();
        for (size_t i = 0; i < n; ++i) {
            const uint32_t bits = static_cast<uint32_t>(src[i]);
            std::memcpy(&out[i], &bits, 4);
        }
    };
    if (dtype.is(py::dtype::of<float>())) {
        const auto typed = py::array_t<float, py::array::c_style>::ensure(array);
        std::memcpy(out.data(), typed.data(), n * sizeof(float));
    } else if (format == DataFormat::UInt32 && dtype.is(py::dtype::of<uint32_t>())) {
        copy_as(uint32_t{});
    } else if (format == DataFormat::Int32 && dtype.is(py::dtype::of<int32_t>())) {
        copy_as(int32_t{});
    } else if (format == DataFormat::UInt16 && dtype.is(py::dtype::of<uint16_t>())) {
        copy_as(uint16_t{});
    } else {
        throw py::type_error("values for " + std::string(numerics::format_name(format)) + " must be a float32 array" +
                             (numerics::is_integer_format(format) ? " or the matching integer dtype" : "") +
                             ", got dtype " + std::string(py::str(dtype)));
    }
    return out;
}

inline py::array_t<uint8_t> bytes_of(const py::array& array) {
    const py::dtype dtype = array.dtype();
    if (!dtype.is(py::dtype::of<uint8_t>()))
        throw py::type_error("expected a uint8 array of packed bytes, got dtype " + std::string(py::str(dtype)));
    return py::array_t<uint8_t, py::array::c_style>::ensure(array);
}

}  // namespace ttnn_moe::bindings::numpy_values
