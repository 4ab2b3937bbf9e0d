// ttnn_moe_numerics_testing: a test-only extension (built when TTNN_MOE_TESTING is on, never in
// the wheel) exposing the emulator's tile math to the numerics tests and benchmarks: tile sizes,
// element packing, the tile matmul micro-benchmarks and a harness around the ComputeEngine.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bindings/numpy_values.hpp"
#include "emu/compute/compute_engine.hpp"
#include "emu/error.hpp"
#include "emu/numerics/matmul_operand.hpp"
#include "emu/numerics/numerics.hpp"

namespace py = pybind11;
using ttnn_moe::program::DataFormat;
namespace numerics = ttnn_moe::emu::numerics;

namespace ttnn_moe::bindings {
namespace {

using numpy_values::bytes_of;
using numpy_values::require_supported;
using numpy_values::values_of;

py::array_t<uint8_t> pack_elements_array(DataFormat format, const py::array& values) {
    require_supported(format);
    if (numerics::is_block_format(format))
        throw py::value_error(std::string("pack_elements: ") + numerics::format_name(format) +
                              " is a tile-only block format");
    const std::vector<float> in = values_of(format, values);
    py::array_t<uint8_t> out(in.size() * numerics::element_bytes(format));
    numerics::pack_elements(format, in.data(), out.mutable_data(), in.size());
    return out;
}

py::array_t<float> unpack_elements_array(DataFormat format, const py::array& packed) {
    require_supported(format);
    if (numerics::is_block_format(format))
        throw py::value_error(std::string("unpack_elements: ") + numerics::format_name(format) +
                              " is a tile-only block format");
    const auto bytes = bytes_of(packed);
    const uint32_t element = numerics::element_bytes(format);
    if (bytes.size() % element != 0)
        throw py::value_error("unpack_elements: " + std::to_string(bytes.size()) + " bytes is not a whole number of " +
                              numerics::format_name(format) + " elements");
    py::array_t<float> out(bytes.size() / element);
    numerics::unpack_elements(format, bytes.data(), out.mutable_data(), out.size());
    return out;
}

// Tile matmuls per second of numerics::matmul_tile_accumulate on random tiles.
double matmul_tile_benchmark(uint32_t iterations) {
    if (iterations == 0) throw py::value_error("matmul_tile_benchmark: iterations must be positive, got 0");
    std::vector<float> a(numerics::TILE_ELEMENTS), b(numerics::TILE_ELEMENTS), c(numerics::TILE_ELEMENTS, 0.0f);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (auto* t : {&a, &b})
        for (float& v : *t) v = dist(rng);
    const auto start = std::chrono::steady_clock::now();
    for (uint32_t i = 0; i < iterations; ++i) numerics::matmul_tile_accumulate(a.data(), b.data(), c.data());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    volatile float sink = c[0];  // keep the work observable
    (void)sink;
    return iterations / seconds;
}

// Tile matmuls per second through prepared operands on random bf16 tiles (the bf16 pair kernel on
// hosts with AVX512_BF16, else the generic kernel); the DST check included.
double matmul_prepared_benchmark(uint32_t iterations) {
    if (iterations == 0) throw py::value_error("matmul_prepared_benchmark: iterations must be positive, got 0");
    auto operands = std::make_unique<numerics::MatmulOperand[]>(2);
    std::vector<float> c(numerics::TILE_ELEMENTS, 0.0f);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (uint32_t t = 0; t < 2; ++t)
        for (float& v : operands[t].values) v = numerics::bf16_bits_to_float(numerics::float_to_bf16_bits(dist(rng)));
    numerics::prepare_matmul_a(operands[0]);
    numerics::prepare_matmul_b(operands[1]);
    const auto start = std::chrono::steady_clock::now();
    for (uint32_t i = 0; i < iterations; ++i) numerics::matmul_tile_accumulate(operands[0], operands[1], c.data());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    volatile float sink = c[0];  // keep the work observable
    (void)sink;
    return iterations / seconds;
}

// c + a @ b for 32x32 float32 tiles through the prepared-operand matmul, and whether it took the
// bf16 pair kernel.
py::tuple matmul_prepared_tiles(const py::array_t<float, py::array::c_style>& a,
                                const py::array_t<float, py::array::c_style>& b,
                                const py::array_t<float, py::array::c_style>& c) {
    for (const auto* t : {&a, &b, &c})
        if (t->size() != numerics::TILE_ELEMENTS)
            throw py::value_error("matmul_prepared_tiles: tiles are 32x32 (1024 values), got " +
                                  std::to_string(t->size()));
    auto operands = std::make_unique<numerics::MatmulOperand[]>(2);
    std::memcpy(operands[0].values, a.data(), sizeof operands[0].values);
    std::memcpy(operands[1].values, b.data(), sizeof operands[1].values);
    numerics::prepare_matmul_a(operands[0]);
    numerics::prepare_matmul_b(operands[1]);
    py::array_t<float> out({numerics::TILE_DIM, numerics::TILE_DIM});
    std::memcpy(out.mutable_data(), c.data(), numerics::TILE_ELEMENTS * sizeof(float));
    const bool paired = numerics::matmul_tile_accumulate(operands[0], operands[1], out.mutable_data());
    return py::make_tuple(out, paired);
}

// ---- ComputeEngine test harness ---------------------------------------------------

// CBs as plain page arrays. Page i of a CB sits at ring slot (start + i) % pages,
// for both front and back, so a test can place a block across the end of the ring.
class PageStore : public emu::CbTileAccess {
public:
    struct Cb {
        DataFormat format;
        uint32_t page_size;
        uint32_t pages;
        uint32_t start = 0;
        std::vector<uint8_t> bytes;
    };

    void add(uint32_t id, DataFormat format, uint32_t pages, uint32_t page_size) {
        cbs_[id] = Cb{format, page_size, pages, 0, std::vector<uint8_t>(size_t(pages) * page_size)};
    }
    Cb& cb(uint32_t id) {
        auto it = cbs_.find(id);
        if (it == cbs_.end()) throw emu::EmuError("harness: CB " + std::to_string(id) + " is not configured");
        return it->second;
    }

    const uint8_t* front_tile(uint32_t id, uint32_t index) override { return page(id, index); }
    uint8_t* back_tile(uint32_t id, uint32_t index) override { return page(id, index); }
    DataFormat format(uint32_t id) override { return cb(id).format; }
    uint32_t tile_size(uint32_t id) override { return cb(id).page_size; }

private:
    uint8_t* page(uint32_t id, uint32_t index) {
        Cb& c = cb(id);
        if (index >= c.pages)
            throw emu::EmuError("harness: CB " + std::to_string(id) + " page " + std::to_string(index) +
                                " is past its " + std::to_string(c.pages) + " pages");
        return c.bytes.data() + size_t((c.start + index) % c.pages) * c.page_size;
    }
    std::map<uint32_t, Cb> cbs_;
};

class EngineHarness {
public:
    // cbs: {cb id: (format, pages)} with one-tile pages, or (format, pages, page_size).
    EngineHarness(const program::ComputeConfigDescriptor& config, const py::dict& cbs) : engine_(store_, config) {
        for (const auto& [key, spec] : cbs) {
            const auto id = key.cast<uint32_t>();
            const auto fields = spec.cast<py::tuple>();
            const auto format = fields[0].cast<DataFormat>();
            const auto pages = fields[1].cast<uint32_t>();
            const uint32_t page_size =
                fields.size() > 2 ? fields[2].cast<uint32_t>() : program::tile_size_bytes(format);
            store_.add(id, format, pages, page_size);
        }
    }

    // Writes `data` (uint8) starting at page 0, and places page 0 at ring slot `start`.
    void load(uint32_t cb, const py::array& data, uint32_t start) {
        auto bytes = bytes_of(data);
        PageStore::Cb& c = store_.cb(cb);
        if (static_cast<size_t>(bytes.size()) > c.bytes.size())
            throw py::value_error("load: " + std::to_string(bytes.size()) + " bytes do not fit CB " +
                                  std::to_string(cb) + " (" + std::to_string(c.bytes.size()) + " bytes)");
        c.start = start % c.pages;
        for (size_t i = 0; i < static_cast<size_t>(bytes.size()); ++i) {
            const size_t page = i / c.page_size;
            const size_t slot = (c.start + page) % c.pages;
            c.bytes[slot * c.page_size + i % c.page_size] = bytes.data()[i];
        }
    }

    // The CB's bytes in page order (page 0 first).
    py::array_t<uint8_t> read(uint32_t cb) {
        PageStore::Cb& c = store_.cb(cb);
        py::array_t<uint8_t> out(c.bytes.size());
        for (uint32_t p = 0; p < c.pages; ++p)
            std::memcpy(out.mutable_data() + size_t(p) * c.page_size, store_.front_tile(cb, p), c.page_size);
        return out;
    }

    emu::ComputeEngine& engine() { return engine_; }

private:
    PageStore store_;
    emu::ComputeEngine engine_;
};

// Tile matmuls per second through the whole ComputeEngine path as a matmul
// kernel drives it: bf16 CBs, 4 output tiles in DST, k_tiles accumulation
// steps per acquire, then 4 packs.
double engine_matmul_benchmark(uint32_t iterations, uint32_t k_tiles, bool fp32_dest_acc_en) {
    if (iterations == 0 || k_tiles == 0)
        throw py::value_error("engine_matmul_benchmark: iterations and k_tiles must be positive, got " +
                              std::to_string(iterations) + ", " + std::to_string(k_tiles));
    constexpr uint32_t out_tiles = 4;  // fits DST in every mode
    PageStore store;
    const uint32_t page = program::tile_size_bytes(DataFormat::Float16_b);
    store.add(0, DataFormat::Float16_b, k_tiles, page);
    store.add(1, DataFormat::Float16_b, k_tiles * out_tiles, page);
    store.add(2, DataFormat::Float16_b, out_tiles, page);
    // Normal-range operands (N(0, 1) in bf16): subnormal products would measure the host's slow path.
    std::mt19937 rng(11);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (uint32_t cb : {0u, 1u}) {
        auto& bytes = store.cb(cb).bytes;
        for (size_t i = 0; i + 1 < bytes.size(); i += 2) {
            const uint16_t value = numerics::float_to_bf16_bits(dist(rng));
            std::memcpy(bytes.data() + i, &value, 2);
        }
    }
    program::ComputeConfigDescriptor config;
    config.fp32_dest_acc_en = fp32_dest_acc_en;
    emu::ComputeEngine engine(store, config);
    const auto start = std::chrono::steady_clock::now();
    for (uint32_t it = 0; it < iterations; ++it) {
        engine.tile_regs_acquire();
        for (uint32_t k = 0; k < k_tiles; ++k)
            for (uint32_t n = 0; n < out_tiles; ++n) engine.matmul_tiles(0, 1, k, k * out_tiles + n, n, false);
        engine.tile_regs_commit();
        engine.tile_regs_wait();
        for (uint32_t n = 0; n < out_tiles; ++n) engine.pack_tile(n, 2, std::nullopt);
        engine.tile_regs_release();
        engine.on_push_back(2);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return double(engine.tile_matmuls()) / seconds;
}

void bind_engine_harness(py::module_& m) {
    // EmuError is left to the emulator's module to register; unregistered, it reaches Python as RuntimeError.
    py::enum_<numerics::BinaryOp>(m, "BinaryOp")
        .value("Add", numerics::BinaryOp::Add)
        .value("Sub", numerics::BinaryOp::Sub)
        .value("Mul", numerics::BinaryOp::Mul);
    py::enum_<numerics::Broadcast>(m, "Broadcast")
        .value("NONE", numerics::Broadcast::None)  // named like tt-metal's BroadcastType
        .value("ROW", numerics::Broadcast::Row)
        .value("COL", numerics::Broadcast::Col)
        .value("SCALAR", numerics::Broadcast::Scalar);
    py::enum_<numerics::UnaryOp>(m, "UnaryOp")
        .value("Silu", numerics::UnaryOp::Silu)
        .value("Sigmoid", numerics::UnaryOp::Sigmoid)
        .value("Exp", numerics::UnaryOp::Exp)
        .value("Relu", numerics::UnaryOp::Relu)
        .value("Recip", numerics::UnaryOp::Recip)
        .value("Neg", numerics::UnaryOp::Neg);

    using E = EngineHarness;
    py::class_<E>(m, "_EngineHarness",
                  "Test harness: a ComputeEngine over in-memory CBs {id: (format, pages[, page_size])}.")
        .def(py::init<const program::ComputeConfigDescriptor&, const py::dict&>(), py::arg("config"), py::arg("cbs"))
        .def("load", &E::load, py::arg("cb"), py::arg("data"), py::arg("start") = 0)
        .def("read", &E::read, py::arg("cb"))
        .def("tile_regs_acquire", [](E& h) { h.engine().tile_regs_acquire(); })
        .def("tile_regs_commit", [](E& h) { h.engine().tile_regs_commit(); })
        .def("tile_regs_wait", [](E& h) { h.engine().tile_regs_wait(); })
        .def("tile_regs_release", [](E& h) { h.engine().tile_regs_release(); })
        .def("copy_tile", [](E& h, uint32_t cb, uint32_t i, uint32_t dst) { h.engine().copy_tile(cb, i, dst); })
        .def(
            "matmul_tiles",
            [](E& h, uint32_t a, uint32_t b, uint32_t ia, uint32_t ib, uint32_t dst, bool transpose) {
                h.engine().matmul_tiles(a, b, ia, ib, dst, transpose);
            },
            py::arg("cb_a"), py::arg("cb_b"), py::arg("ia"), py::arg("ib"), py::arg("dst"),
            py::arg("transpose_b") = false)
        .def(
            "matmul_block",
            [](E& h, uint32_t a, uint32_t b, uint32_t ia, uint32_t ib, uint32_t dst, bool transpose, uint32_t ct,
               uint32_t rt, uint32_t kt) { h.engine().matmul_block(a, b, ia, ib, dst, transpose, ct, rt, kt); },
            py::arg("cb_a"), py::arg("cb_b"), py::arg("ia"), py::arg("ib"), py::arg("dst"), py::arg("transpose"),
            py::arg("ct_dim"), py::arg("rt_dim"), py::arg("kt_dim"))
        .def("binary_tiles",
             [](E& h, numerics::BinaryOp op, numerics::Broadcast bcast, uint32_t a, uint32_t b, uint32_t ia,
                uint32_t ib, uint32_t dst) { h.engine().binary_tiles(op, bcast, a, b, ia, ib, dst); })
        .def("unary_tile", [](E& h, numerics::UnaryOp op, uint32_t dst) { h.engine().unary_tile(op, dst); })
        .def("binary_dst_tiles", [](E& h, numerics::BinaryOp op, uint32_t idst0, uint32_t idst1,
                                    uint32_t odst) { h.engine().binary_dst_tiles(op, idst0, idst1, odst); })
        .def(
            "pack_tile",
            [](E& h, uint32_t dst, uint32_t cb, std::optional<uint32_t> index) {
                h.engine().pack_tile(dst, cb, index);
            },
            py::arg("dst"), py::arg("cb"), py::arg("out_tile_index") = py::none())
        .def("on_push_back", [](E& h, uint32_t cb) { h.engine().on_push_back(cb); })
        .def("tilize_block", [](E& h, uint32_t in, uint32_t n, uint32_t out) { h.engine().tilize_block(in, n, out); })
        .def("untilize_block",
             [](E& h, uint32_t in, uint32_t n, uint32_t out) { h.engine().untilize_block(in, n, out); })
        .def_property_readonly("tile_matmuls", [](E& h) { return h.engine().tile_matmuls(); })
        .def_property_readonly("tiles_packed", [](E& h) { return h.engine().tiles_packed(); })
        .def_property_readonly("dst_capacity", [](E& h) { return h.engine().dst_capacity(); });
}

}  // namespace
}  // namespace ttnn_moe::bindings

PYBIND11_MODULE(ttnn_moe_numerics_testing, m) {
    using namespace ttnn_moe::bindings;
    m.doc() = "Test-only access to the emulator's tile math";
    m.def(
        "tile_bytes",
        [](DataFormat format) {
            require_supported(format);
            return numerics::tile_bytes(format);
        },
        py::arg("data_format"), "Bytes of one 32x32 tile as ttnn_moe._C.numerics.tilize packs it.");
    m.def("pack_elements", &pack_elements_array, py::arg("data_format"), py::arg("values"),
          "Values -> uint8 bytes of a ROW_MAJOR page (element formats only).");
    m.def("unpack_elements", &unpack_elements_array, py::arg("data_format"), py::arg("packed"),
          "uint8 bytes of a ROW_MAJOR page -> float32 values.");
    m.def("matmul_tile_benchmark", &matmul_tile_benchmark, py::arg("iterations"),
          "Tile matmuls (32x32x32, fp32) per second, single-threaded.");
    m.def("matmul_prepared_benchmark", &matmul_prepared_benchmark, py::arg("iterations"),
          "Tile matmuls (32x32x32) per second through prepared bf16 operands, single-threaded.");
    m.def("bf16_pair_matmul_supported", &numerics::bf16_pair_matmul_supported,
          "Whether the host has AVX512_BF16, so that the tile matmul can run on bf16 pairs.");
    m.def("matmul_prepared_tiles", &matmul_prepared_tiles, py::arg("a"), py::arg("b"), py::arg("c"),
          "(c + a @ b, whether the bf16 pair kernel ran) for 32x32 float32 tiles, through prepared operands.");
    m.def("engine_matmul_benchmark", &engine_matmul_benchmark, py::arg("iterations"), py::arg("k_tiles") = 8,
          py::arg("fp32_dest_acc_en") = false,
          "Tile matmuls per second through the ComputeEngine (unpack bf16, matmul, DST rounding, pack).");
    bind_engine_harness(m);
}
