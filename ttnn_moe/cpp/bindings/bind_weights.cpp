// ttnn_moe._C.weights: synthetic model weights (models/deepseek_v3/weights.py's random layer).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <string>
#include <thread>

#include "bindings/bindings.hpp"
#include "weights/random_normal.hpp"

namespace py = pybind11;

namespace ttnn_moe::bindings {

void bind_weights(py::module_& parent) {
    auto m = parent.def_submodule("weights", "Synthetic model weights");
    m.def(
        "random_normal",
        [](uint64_t seed, size_t count, float scale, const std::string& dtype) -> py::array {
            if (!(scale > 0.0f)) throw py::value_error("scale must be positive, got " + std::to_string(scale));
            const unsigned threads = std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
            if (dtype == "bfloat16") {
                py::array_t<uint16_t> out(count);
                uint16_t* data = out.mutable_data();
                py::gil_scoped_release release;
                weights::random_normal_bfloat16(seed, scale, data, count, threads);
                return out;
            }
            if (dtype == "float32") {
                py::array_t<float> out(count);
                float* data = out.mutable_data();
                py::gil_scoped_release release;
                weights::random_normal_float32(seed, scale, data, count, threads);
                return out;
            }
            throw py::value_error("dtype must be 'bfloat16' or 'float32', got '" + dtype + "'");
        },
        py::arg("seed"), py::arg("count"), py::arg("scale"), py::arg("dtype") = "bfloat16",
        "`count` values scale * N(0, 1), each a function of (seed, index) only (weights/random_normal.hpp): "
        "float32, or for 'bfloat16' their bit patterns (uint16) rounded to nearest even.");
}

}  // namespace ttnn_moe::bindings
