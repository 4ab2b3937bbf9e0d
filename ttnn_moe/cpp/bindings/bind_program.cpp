// Python bindings of the program-description types, named as in ttnn.
#include <pybind11/operators.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/bindings.hpp"
#include "program/program_descriptor.hpp"

namespace py = pybind11;
using namespace ttnn_moe::program;

namespace ttnn_moe::bindings {

namespace {
template <typename T>
std::string coord_repr(const char* name, const T& c) {
    return std::string(name) + "(" + std::to_string(c.x) + ", " + std::to_string(c.y) + ")";
}
}  // namespace

void bind_program(py::module_& parent) {
    auto m = parent.def_submodule("program", "Backend-neutral program descriptions (mirror ttnn.ProgramDescriptor)");

    py::enum_<DataFormat>(m, "DataFormat")
        .value("Float32", DataFormat::Float32)
        .value("Float16", DataFormat::Float16)
        .value("Bfp8", DataFormat::Bfp8)
        .value("Bfp4", DataFormat::Bfp4)
        .value("Tf32", DataFormat::Tf32)
        .value("Float16_b", DataFormat::Float16_b)
        .value("Bfp8_b", DataFormat::Bfp8_b)
        .value("Bfp4_b", DataFormat::Bfp4_b)
        .value("Int32", DataFormat::Int32)
        .value("UInt16", DataFormat::UInt16)
        .value("Int8", DataFormat::Int8)
        .value("UInt32", DataFormat::UInt32)
        .value("UInt8", DataFormat::UInt8)
        .value("Invalid", DataFormat::Invalid);
    py::enum_<MathFidelity>(m, "MathFidelity")
        .value("LoFi", MathFidelity::LoFi)
        .value("HiFi2", MathFidelity::HiFi2)
        .value("HiFi3", MathFidelity::HiFi3)
        .value("HiFi4", MathFidelity::HiFi4);
    py::enum_<UnpackToDestMode>(m, "UnpackToDestMode")
        .value("Default", UnpackToDestMode::Default)
        .value("UnpackToDestFp32", UnpackToDestMode::UnpackToDestFp32);
    py::enum_<CoreType>(m, "CoreType").value("WORKER", CoreType::WORKER).value("ETH", CoreType::ETH);
    py::enum_<DataMovementProcessor>(m, "DataMovementProcessor")
        .value("RISCV_0", DataMovementProcessor::RISCV_0)
        .value("RISCV_1", DataMovementProcessor::RISCV_1);
    // NOC_0 / NOC_1 share these values, so pybind can name each value once.
    py::enum_<NOC>(m, "NOC")
        .value("RISCV_0_default", NOC::RISCV_0_default)
        .value("RISCV_1_default", NOC::RISCV_1_default);

    py::class_<CoreCoord>(m, "CoreCoord")
        .def(py::init<>())
        .def(py::init<uint32_t, uint32_t>(), py::arg("x"), py::arg("y"))
        .def_readwrite("x", &CoreCoord::x)
        .def_readwrite("y", &CoreCoord::y)
        .def(py::self == py::self)
        .def("__repr__", [](const CoreCoord& c) { return coord_repr("CoreCoord", c); });

    py::class_<CoreRange>(m, "CoreRange")
        .def(py::init<>())
        .def(py::init<CoreCoord, CoreCoord>(), py::arg("start"), py::arg("end"))
        .def_readwrite("start", &CoreRange::start)
        .def_readwrite("end", &CoreRange::end)
        .def("contains", &CoreRange::contains)
        .def("num_cores", &CoreRange::num_cores)
        .def(py::self == py::self)
        .def("__repr__", [](const CoreRange& r) {
            return "CoreRange(" + coord_repr("CoreCoord", r.start) + ", " + coord_repr("CoreCoord", r.end) + ")";
        });

    py::class_<CoreRangeSet>(m, "CoreRangeSet")
        .def(py::init<>())
        .def(py::init([](std::vector<CoreRange> ranges) { return CoreRangeSet{std::move(ranges)}; }), py::arg("ranges"))
        .def_readwrite("ranges", &CoreRangeSet::ranges)
        .def("contains", &CoreRangeSet::contains)
        .def("num_cores", &CoreRangeSet::num_cores)
        .def("cores", &CoreRangeSet::cores)
        .def(py::self == py::self);

    py::class_<TileDescriptor>(m, "TileDescriptor")
        .def(py::init<>())
        .def(py::init<uint32_t, uint32_t, bool>(), py::arg("height"), py::arg("width"), py::arg("transpose") = false)
        .def_readwrite("height", &TileDescriptor::height)
        .def_readwrite("width", &TileDescriptor::width)
        .def_readwrite("transpose", &TileDescriptor::transpose)
        .def(py::self == py::self);

    py::class_<CBFormatDescriptor>(m, "CBFormatDescriptor")
        .def(py::init([](uint8_t buffer_index, DataFormat data_format, uint32_t page_size,
                         std::optional<TileDescriptor> tile) {
                 return CBFormatDescriptor{buffer_index, data_format, page_size, tile};
             }),
             py::arg("buffer_index"), py::arg("data_format"), py::arg("page_size"), py::arg("tile") = py::none())
        .def_readwrite("buffer_index", &CBFormatDescriptor::buffer_index)
        .def_readwrite("data_format", &CBFormatDescriptor::data_format)
        .def_readwrite("page_size", &CBFormatDescriptor::page_size)
        .def_readwrite("tile", &CBFormatDescriptor::tile)
        .def(py::self == py::self);

    py::class_<CBDescriptor>(m, "CBDescriptor")
        .def(py::init([](uint32_t total_size, CoreRangeSet core_ranges, std::vector<CBFormatDescriptor> formats) {
                 return CBDescriptor{total_size, std::move(core_ranges), std::move(formats)};
             }),
             py::arg("total_size"), py::arg("core_ranges"), py::arg("format_descriptors"))
        .def_readwrite("total_size", &CBDescriptor::total_size)
        .def_readwrite("core_ranges", &CBDescriptor::core_ranges)
        .def_readwrite("format_descriptors", &CBDescriptor::format_descriptors)
        // The L1 shard a CB aliases on one core (set_globally_allocated_address over an L1-sharded tensor).
        .def(
            "add_shard",
            [](CBDescriptor& cb, const CoreCoord& core, const py::bytes& data) {
                const std::string_view view = data;
                cb.shard_contents.push_back({core, std::vector<uint8_t>(view.begin(), view.end())});
            },
            py::arg("core"), py::arg("data"))
        .def_property_readonly("shard_cores",
                               [](const CBDescriptor& cb) {
                                   std::vector<CoreCoord> cores;
                                   for (const auto& s : cb.shard_contents) cores.push_back(s.core);
                                   return cores;
                               })
        .def(py::self == py::self);

    py::class_<SemaphoreDescriptor>(m, "SemaphoreDescriptor")
        .def(py::init([](uint32_t id, CoreType core_type, CoreRangeSet core_ranges, uint32_t initial_value) {
                 return SemaphoreDescriptor{id, core_type, std::move(core_ranges), initial_value};
             }),
             py::arg("id"), py::arg("core_type") = CoreType::WORKER, py::arg("core_ranges"),
             py::arg("initial_value") = 0)
        .def_readwrite("id", &SemaphoreDescriptor::id)
        .def_readwrite("core_type", &SemaphoreDescriptor::core_type)
        .def_readwrite("core_ranges", &SemaphoreDescriptor::core_ranges)
        .def_readwrite("initial_value", &SemaphoreDescriptor::initial_value)
        .def(py::self == py::self);

    py::class_<TensorBindingDescriptor>(m, "TensorBindingDescriptor")
        .def(py::init([](std::string name, uint32_t accessor_cta_offset, uint32_t address_crta_index) {
                 return TensorBindingDescriptor{std::move(name), accessor_cta_offset, address_crta_index};
             }),
             py::arg("name"), py::arg("accessor_cta_offset"), py::arg("address_crta_index"))
        .def_readwrite("name", &TensorBindingDescriptor::name)
        .def_readwrite("accessor_cta_offset", &TensorBindingDescriptor::accessor_cta_offset)
        .def_readwrite("address_crta_index", &TensorBindingDescriptor::address_crta_index)
        .def(py::self == py::self);

    using NamedValues = std::vector<std::pair<std::string, uint32_t>>;
    py::class_<KernelBindingsDescriptor>(m, "KernelBindingsDescriptor")
        .def(py::init([](std::vector<std::string> runtime_args, std::vector<std::string> common_runtime_args,
                         NamedValues compile_time_values, NamedValues dataflow_buffers, NamedValues semaphores,
                         std::vector<TensorBindingDescriptor> tensors) {
                 return KernelBindingsDescriptor{std::move(runtime_args),        std::move(common_runtime_args),
                                                 std::move(compile_time_values), std::move(dataflow_buffers),
                                                 std::move(semaphores),          std::move(tensors)};
             }),
             py::arg("runtime_args") = std::vector<std::string>{},
             py::arg("common_runtime_args") = std::vector<std::string>{},
             py::arg("compile_time_values") = NamedValues{}, py::arg("dataflow_buffers") = NamedValues{},
             py::arg("semaphores") = NamedValues{}, py::arg("tensors") = std::vector<TensorBindingDescriptor>{})
        .def_readwrite("runtime_args", &KernelBindingsDescriptor::runtime_args)
        .def_readwrite("common_runtime_args", &KernelBindingsDescriptor::common_runtime_args)
        .def_readwrite("compile_time_values", &KernelBindingsDescriptor::compile_time_values)
        .def_readwrite("dataflow_buffers", &KernelBindingsDescriptor::dataflow_buffers)
        .def_readwrite("semaphores", &KernelBindingsDescriptor::semaphores)
        .def_readwrite("tensors", &KernelBindingsDescriptor::tensors)
        .def(py::self == py::self);

    py::class_<ReaderConfigDescriptor>(m, "ReaderConfigDescriptor").def(py::init<>());
    py::class_<WriterConfigDescriptor>(m, "WriterConfigDescriptor").def(py::init<>());
    py::class_<DataMovementConfigDescriptor>(m, "DataMovementConfigDescriptor")
        .def(py::init(
                 [](DataMovementProcessor processor, NOC noc) { return DataMovementConfigDescriptor{processor, noc}; }),
             py::arg("processor") = DataMovementProcessor::RISCV_0, py::arg("noc") = NOC::RISCV_0_default)
        .def_readwrite("processor", &DataMovementConfigDescriptor::processor)
        .def_readwrite("noc", &DataMovementConfigDescriptor::noc);
    py::class_<ComputeConfigDescriptor>(m, "ComputeConfigDescriptor")
        .def(py::init([](MathFidelity math_fidelity, bool fp32_dest_acc_en, bool dst_full_sync_en,
                         std::vector<UnpackToDestMode> unpack_to_dest_mode, bool bfp8_pack_precise,
                         bool math_approx_mode) {
                 return ComputeConfigDescriptor{math_fidelity,       fp32_dest_acc_en,  dst_full_sync_en,
                                                unpack_to_dest_mode, bfp8_pack_precise, math_approx_mode};
             }),
             py::arg("math_fidelity") = MathFidelity::HiFi4, py::arg("fp32_dest_acc_en") = false,
             py::arg("dst_full_sync_en") = false, py::arg("unpack_to_dest_mode") = std::vector<UnpackToDestMode>{},
             py::arg("bfp8_pack_precise") = false, py::arg("math_approx_mode") = false)
        .def_readwrite("math_fidelity", &ComputeConfigDescriptor::math_fidelity)
        .def_readwrite("fp32_dest_acc_en", &ComputeConfigDescriptor::fp32_dest_acc_en)
        .def_readwrite("dst_full_sync_en", &ComputeConfigDescriptor::dst_full_sync_en)
        .def_readwrite("unpack_to_dest_mode", &ComputeConfigDescriptor::unpack_to_dest_mode)
        .def_readwrite("bfp8_pack_precise", &ComputeConfigDescriptor::bfp8_pack_precise)
        .def_readwrite("math_approx_mode", &ComputeConfigDescriptor::math_approx_mode);

    py::class_<KernelDescriptor> kd(m, "KernelDescriptor");
    py::enum_<KernelDescriptor::SourceType>(kd, "SourceType")
        .value("FILE_PATH", KernelDescriptor::SourceType::FILE_PATH)
        .value("SOURCE_CODE", KernelDescriptor::SourceType::SOURCE_CODE);
    kd.def(py::init([](std::string kernel_source, KernelDescriptor::SourceType source_type, CoreRangeSet core_ranges,
                       std::vector<uint32_t> compile_time_args,
                       std::vector<std::pair<std::string, uint32_t>> named_compile_time_args,
                       std::vector<std::pair<std::string, std::string>> defines,
                       std::vector<std::pair<CoreCoord, std::vector<uint32_t>>> runtime_args,
                       std::vector<uint32_t> common_runtime_args, KernelDescriptor::ConfigDescriptor config,
                       std::optional<KernelBindingsDescriptor> bindings) {
               KernelDescriptor k;
               k.kernel_source = std::move(kernel_source);
               k.source_type = source_type;
               k.core_ranges = std::move(core_ranges);
               k.compile_time_args = std::move(compile_time_args);
               k.named_compile_time_args = std::move(named_compile_time_args);
               k.defines = std::move(defines);
               k.runtime_args = std::move(runtime_args);
               k.common_runtime_args = std::move(common_runtime_args);
               k.config = std::move(config);
               k.bindings = std::move(bindings);
               return k;
           }),
           py::arg("kernel_source"), py::arg("source_type") = KernelDescriptor::SourceType::FILE_PATH,
           py::arg("core_ranges"), py::arg("compile_time_args") = std::vector<uint32_t>{},
           py::arg("named_compile_time_args") = std::vector<std::pair<std::string, uint32_t>>{},
           py::arg("defines") = std::vector<std::pair<std::string, std::string>>{},
           py::arg("runtime_args") = std::vector<std::pair<CoreCoord, std::vector<uint32_t>>>{},
           py::arg("common_runtime_args") = std::vector<uint32_t>{},
           py::arg("config") = KernelDescriptor::ConfigDescriptor{ReaderConfigDescriptor{}},
           py::arg("bindings") = py::none())
        .def_readwrite("kernel_source", &KernelDescriptor::kernel_source)
        .def_readwrite("source_type", &KernelDescriptor::source_type)
        .def_readwrite("core_ranges", &KernelDescriptor::core_ranges)
        .def_readwrite("compile_time_args", &KernelDescriptor::compile_time_args)
        .def_readwrite("named_compile_time_args", &KernelDescriptor::named_compile_time_args)
        .def_readwrite("defines", &KernelDescriptor::defines)
        .def_readwrite("runtime_args", &KernelDescriptor::runtime_args)
        .def_readwrite("common_runtime_args", &KernelDescriptor::common_runtime_args)
        .def_readwrite("config", &KernelDescriptor::config)
        .def_readwrite("bindings", &KernelDescriptor::bindings)
        .def("is_compute", &KernelDescriptor::is_compute)
        .def(py::self == py::self);

    py::class_<ProgramDescriptor>(m, "ProgramDescriptor")
        .def(py::init([](std::vector<KernelDescriptor> kernels, std::vector<SemaphoreDescriptor> semaphores,
                         std::vector<CBDescriptor> cbs, std::optional<uint64_t> custom_program_hash) {
                 return ProgramDescriptor{std::move(kernels), std::move(semaphores), std::move(cbs),
                                          custom_program_hash};
             }),
             py::arg("kernels") = std::vector<KernelDescriptor>{},
             py::arg("semaphores") = std::vector<SemaphoreDescriptor>{}, py::arg("cbs") = std::vector<CBDescriptor>{},
             py::arg("custom_program_hash") = py::none())
        .def_readwrite("kernels", &ProgramDescriptor::kernels)
        .def_readwrite("semaphores", &ProgramDescriptor::semaphores)
        .def_readwrite("cbs", &ProgramDescriptor::cbs)
        .def_readwrite("custom_program_hash", &ProgramDescriptor::custom_program_hash)
        .def("structural_hash", &structural_hash)
        .def(py::self == py::self);

    py::class_<MeshCoordinate>(m, "MeshCoordinate")
        .def(py::init<uint32_t, uint32_t>(), py::arg("row"), py::arg("col"))
        .def_readwrite("row", &MeshCoordinate::row)
        .def_readwrite("col", &MeshCoordinate::col)
        .def(py::self == py::self)
        .def("__repr__", [](const MeshCoordinate& c) {
            return "MeshCoordinate(" + std::to_string(c.row) + ", " + std::to_string(c.col) + ")";
        });
    py::class_<MeshCoordinateRange>(m, "MeshCoordinateRange")
        .def(py::init<MeshCoordinate, MeshCoordinate>(), py::arg("start"), py::arg("end"))
        .def_readwrite("start", &MeshCoordinateRange::start)
        .def_readwrite("end", &MeshCoordinateRange::end)
        .def("contains", &MeshCoordinateRange::contains)
        .def(py::self == py::self);
    py::class_<MeshProgramDescriptor>(m, "MeshProgramDescriptor")
        .def(py::init([](std::vector<std::pair<MeshCoordinateRange, ProgramDescriptor>> mesh_programs) {
                 return MeshProgramDescriptor{std::move(mesh_programs)};
             }),
             py::arg("mesh_programs") = std::vector<std::pair<MeshCoordinateRange, ProgramDescriptor>>{})
        .def_readwrite("mesh_programs", &MeshProgramDescriptor::mesh_programs)
        .def(py::self == py::self);

    m.def("tile_size_bytes", &tile_size_bytes, py::arg("data_format"),
          "Bytes of one 32x32 tile in a data format (bfloat8_b: 1088).");
}

}  // namespace ttnn_moe::bindings
