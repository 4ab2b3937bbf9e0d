// Python bindings of the emulator: ttnn_moe._C.emu. The ttnn-shaped Python
// API (ttnn_moe.emu) is built on exactly this surface; keep it stable.
#include <algorithm>
#include <array>
#include <optional>
#include <string_view>
#include <unordered_map>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/bindings.hpp"
#include "emu/binding_headers.hpp"
#include "emu/compute/matmul_worker.hpp"
#include "emu/device.hpp"
#include "emu/device_params.hpp"
#include "emu/dram_storage.hpp"
#include "emu/error.hpp"
#include "emu/include/ttnn_moe_emu/fabric_abi.h"
#include "emu/jit.hpp"
#include "emu/l1_pool.hpp"
#include "emu/poison.hpp"
#include "emu/runtime.hpp"
#include "emu/timing/time_model.hpp"
#include "program/device_limits.hpp"
#include "program/program_descriptor.hpp"
#include "program/tensor_accessor_args.hpp"

namespace py = pybind11;
using namespace ttnn_moe::emu;

namespace ttnn_moe::bindings {

namespace {

using GridArg = std::pair<uint32_t, uint32_t>;

// Python strings that every RISC record repeats, made once: its keys and the wait kinds' names
// (a mesh run has tens of thousands of records; building and hashing each key anew was a good
// part of turning a run's counters into Python objects). Never freed: the module keeps them.
struct RiscRecordStrings {
    py::str core = intern("core"), risc = intern("risc"), kernel = intern("kernel"), start = intern("start"),
            end = intern("end"), wait_cycles = intern("wait_cycles"), waits = intern("waits"),
            waits_not_listed = intern("waits_not_listed");
    std::array<py::str, timing::kWaitKinds> wait_kinds;
    RiscRecordStrings() {
        for (size_t k = 0; k < wait_kinds.size(); ++k)
            wait_kinds[k] = intern(timing::wait_kind_name(static_cast<timing::WaitKind>(k)));
    }
    static py::str intern(const char* text) { return py::reinterpret_steal<py::str>(PyUnicode_InternFromString(text)); }
};

const RiscRecordStrings& risc_record_strings() {
    static const RiscRecordStrings* strings = new RiscRecordStrings();
    return *strings;
}

// The modeled device time of a run (emu/timing/device_timing.hpp); cycles of the arch's AI clock.
py::dict device_timing_to_dict(const timing::DeviceTiming& t) {
    const RiscRecordStrings& keys = risc_record_strings();
    // A run's records name a few kernels and RISCs many times over: one Python string each.
    std::unordered_map<std::string_view, py::str> names;
    const auto name = [&names](const std::string& text) -> const py::str& {
        auto it = names.find(text);
        if (it == names.end()) it = names.emplace(text, py::str(text)).first;
        return it->second;
    };
    py::dict d;
    d["arch"] = t.arch;
    d["clock_ghz"] = t.clock_ghz;
    d["duration_cycles"] = t.duration_cycles;
    d["total_cycles"] = t.total_cycles;
    py::list riscs(t.riscs.size());
    for (size_t i = 0; i < t.riscs.size(); ++i) {
        const auto& r = t.riscs[i];
        py::dict s;
        s[keys.core] = py::make_tuple(r.core_x, r.core_y);
        s[keys.risc] = name(r.risc);
        s[keys.kernel] = name(r.kernel);
        s[keys.start] = r.start;
        s[keys.end] = r.end;
        py::dict waits_by_kind;
        for (size_t k = 0; k < keys.wait_kinds.size(); ++k) {
            if (r.wait_cycles[k] > 0) waits_by_kind[keys.wait_kinds[k]] = r.wait_cycles[k];
        }
        s[keys.wait_cycles] = waits_by_kind;
        py::list waits(r.waits.size());
        for (size_t w = 0; w < r.waits.size(); ++w) {
            const auto& span = r.waits[w];
            waits[w] = py::make_tuple(span.start, span.end, keys.wait_kinds[static_cast<size_t>(span.kind)]);
        }
        s[keys.waits] = waits;
        s[keys.waits_not_listed] = r.waits_not_listed;
        riscs[i] = s;
    }
    d["riscs"] = riscs;
    py::list links;
    for (const auto& l : t.links) {
        py::dict s;
        s["from_chip"] = l.from_chip;
        s["to_chip"] = l.to_chip;
        s["link"] = l.link;
        s["packets"] = l.packets;
        s["wire_bytes"] = l.wire_bytes;
        s["busy_cycles"] = l.busy_cycles;
        s["first_start"] = l.first_start;
        s["last_end"] = l.last_end;
        s["last_arrival"] = l.last_arrival;
        links.append(s);
    }
    d["links"] = links;
    return d;
}

py::dict arch_params_to_dict(const timing::ArchParams& a) {
    py::dict d;
    d["name"] = a.name;
    d["clock_ghz"] = a.clock_ghz;
    d["matmul_tile_cycles"] =
        py::dict(py::arg("LoFi") = a.matmul_tile_cycles[0], py::arg("HiFi2") = a.matmul_tile_cycles[2],
                 py::arg("HiFi3") = a.matmul_tile_cycles[3], py::arg("HiFi4") = a.matmul_tile_cycles[4]);
    d["eltwise_tile_cycles"] = a.eltwise_tile_cycles;
    d["datacopy_tile_cycles"] = a.datacopy_tile_cycles;
    const char* const unary[] = {"silu", "sigmoid", "exp", "relu", "recip", "neg"};
    py::dict sfpu;
    for (size_t i = 0; i < a.sfpu_tile_cycles.size(); ++i) sfpu[unary[i]] = a.sfpu_tile_cycles[i];
    d["sfpu_tile_cycles"] = sfpu;
    d["sfpu_binary_tile_cycles"] = a.sfpu_binary_tile_cycles;
    d["sfpu_fill_tile_cycles"] = a.sfpu_fill_tile_cycles;
    d["unpack_bytes_per_cycle"] = a.unpack_bytes_per_cycle;
    d["pack_bytes_per_cycle"] = a.pack_bytes_per_cycle;
    d["compute_call_cycles"] = a.compute_call_cycles;
    d["dataflow_call_cycles"] = a.dataflow_call_cycles;
    d["noc_issue_cycles"] = a.noc_issue_cycles;
    d["noc_port_bytes_per_cycle"] = a.noc_port_bytes_per_cycle;
    d["noc_read_latency_cycles"] = py::make_tuple(a.noc_read_latency_cycles[0], a.noc_read_latency_cycles[1],
                                                  a.noc_read_latency_cycles[2], a.noc_read_latency_cycles[3]);
    d["noc_write_latency_base_cycles"] = a.noc_write_latency_base_cycles;
    d["noc_write_latency_per_hop_cycles"] = a.noc_write_latency_per_hop_cycles;
    d["dram_bytes_per_cycle"] = a.dram_bytes_per_cycle;
    d["dram_extra_latency_cycles"] = a.dram_extra_latency_cycles;
    d["num_dram_banks"] = params::NUM_DRAM_BANKS;
    d["eth_bytes_per_cycle"] = a.eth_bytes_per_cycle;
    d["eth_packet_overhead_bytes"] = a.eth_packet_overhead_bytes;
    d["eth_frame_bytes"] = a.eth_frame_bytes;
    d["fabric_hop_latency_1d_cycles"] = a.fabric_hop_latency_1d_cycles;
    d["fabric_hop_latency_2d_cycles"] = a.fabric_hop_latency_2d_cycles;
    d["fabric_header_bytes_1d"] = a.fabric_header_bytes_1d;
    d["fabric_header_bytes_2d"] = a.fabric_header_bytes_2d;
    d["fabric_buffer_slots"] = ttnn_moe_emu::FABRIC_BUFFER_SLOTS;
    d["dispatch_ns_cache_hit"] = a.dispatch_ns_cache_hit;
    d["dispatch_ns_cache_miss"] = a.dispatch_ns_cache_miss;
    d["dispatch_ns_traced"] = a.dispatch_ns_traced;
    d["worker_cores"] = a.worker_cores;
    d["dram_peak_gb_per_s"] = a.dram_peak_gb_per_s;
    return d;
}

// Python's cyclic garbage collector paused while a run's counters become Python objects. A 64-core
// matmul's counters are some 3,000 dicts, lists and tuples (its timing records), a mesh run's that
// times its devices; each 700 new containers would start a collection, every tenth of those a
// deeper one, and now and then one over everything the process holds (torch's modules included).
// Paused, the new objects are looked at once, by the next collection.
class GcPause {
public:
    GcPause() : was_enabled_(PyGC_Disable() != 0) {}
    ~GcPause() {
        if (was_enabled_) PyGC_Enable();
    }
    GcPause(const GcPause&) = delete;
    GcPause& operator=(const GcPause&) = delete;

private:
    bool was_enabled_;
};

py::dict counters_to_dict(const Counters& c) {
    py::dict d;
    d["tile_matmuls"] = c.tile_matmuls;
    d["tiles_packed"] = c.tiles_packed;
    d["noc_bytes_read_dram"] = c.noc_bytes_read_dram;
    d["noc_bytes_read_l1"] = c.noc_bytes_read_l1;
    d["noc_bytes_written_dram"] = c.noc_bytes_written_dram;
    d["noc_bytes_written_l1"] = c.noc_bytes_written_l1;
    d["kernel_builds"] = c.kernel_builds;
    d["kernel_cache_hits"] = c.kernel_cache_hits;
    py::dict buffers;
    for (const auto& [addr, t] : c.dram_buffers) {
        py::dict b;
        b["unique_pages_read"] = t.unique_pages_read();
        b["page_reads"] = t.page_reads;
        b["bytes_read"] = t.bytes_read;
        b["page_writes"] = t.page_writes;
        b["bytes_written"] = t.bytes_written;
        buffers[py::int_(addr)] = b;
    }
    d["dram_buffers"] = buffers;
    py::dict busy;
    for (const auto& [core, n] : c.core_busy) busy[py::make_tuple(core.first, core.second)] = n;
    d["core_busy"] = busy;
    d["fabric"] = fabric_traffic_to_dict(c.fabric);
    d["timing"] = device_timing_to_dict(c.timing);
    return d;
}

py::array_t<uint8_t> read_buffer(Device& dev, uint32_t address, uint32_t page_size, size_t nbytes) {
    py::array_t<uint8_t> out(static_cast<py::ssize_t>(nbytes));
    dev.dram().read_pages(address, page_size, out.mutable_data(), nbytes);
    return out;
}

void write_buffer(Device& dev, uint32_t address, uint32_t page_size,
                  py::array_t<uint8_t, py::array::c_style | py::array::forcecast> data) {
    dev.dram().write_pages(address, page_size, data.data(), static_cast<size_t>(data.size()));
}

// The JIT needs the emulator's device headers; ttnn_moe.paths knows where they are.
void ensure_include_dir() {
    auto& jit = KernelJit::instance();
    if (!jit.has_include_dir()) {
        auto dir = py::module_::import("ttnn_moe.paths").attr("emulator_include_dir")();
        jit.set_include_dir(py::str(dir).cast<std::string>());
    }
}

py::dict run_on_device(Device& device, const program::ProgramDescriptor& program) {
    ensure_include_dir();
    Counters c;
    {
        py::gil_scoped_release release;
        c = run_program(device, program);
    }
    const GcPause pause;
    return counters_to_dict(c);
}

// Totals over the devices, plus "devices": {device id: counters}.
py::dict run_on_mesh(Mesh& mesh, const program::MeshProgramDescriptor& program) {
    ensure_include_dir();
    std::vector<std::pair<uint32_t, Counters>> per_device;
    {
        py::gil_scoped_release release;
        per_device = run_mesh_program(mesh, program);
    }
    const GcPause pause;
    Counters total;
    py::dict devices;
    for (const auto& [id, c] : per_device) {
        total.add(c);
        devices[py::int_(id)] = counters_to_dict(c);
    }
    py::dict d = counters_to_dict(total);
    d["devices"] = devices;
    // The devices run at once: the mesh takes as long as its slowest device.
    uint64_t duration = 0;
    for (const auto& [id, c] : per_device) duration = std::max(duration, c.timing.duration_cycles);
    d["timing"]["duration_cycles"] = duration;
    return d;
}

}  // namespace

void bind_emu(py::module_& parent) {
    auto m = parent.def_submodule("emu", "The Tensix emulator");
    py::register_exception<EmuError>(m, "EmulatorError", PyExc_RuntimeError);

    py::class_<Device, std::shared_ptr<Device>>(m, "Device")
        .def_property_readonly("id", &Device::id)
        .def_property_readonly("grid_size", [](const Device& d) { return py::make_tuple(d.grid_x(), d.grid_y()); })
        .def_property_readonly("num_dram_banks", [](const Device&) { return params::NUM_DRAM_BANKS; })
        .def_property_readonly("l1_size", [](const Device&) { return params::L1_SIZE; })
        .def_property_readonly("dram_alignment", [](const Device&) { return params::DRAM_ALIGNMENT; })
        .def_property_readonly("l1_alignment", [](const Device&) { return params::L1_ALIGNMENT; })
        .def_property_readonly(
            "dram_buffers", [](Device& d) { return d.dram().num_buffers(); }, "Live DRAM buffers (device tensors).")
        .def_property_readonly(
            "dram_occupied_bytes", [](Device& d) { return d.dram().occupied_bytes(); },
            "Bytes the live DRAM buffers occupy over all banks.")
        .def_property_readonly(
            "limits",
            [](const Device& d) {
                std::vector<program::CoreCoord> noc_cores;
                for (uint32_t y = 0; y < d.grid_y(); ++y) {
                    for (uint32_t x = 0; x < d.grid_x(); ++x) {
                        const NocCoord c = d.worker_core_from_logical_core(x, y);
                        noc_cores.push_back({c.x, c.y});
                    }
                }
                return program::DeviceLimits{{d.grid_x(), d.grid_y()},     params::L1_SIZE - params::L1_CB_BASE,
                                             params::MAX_CIRCULAR_BUFFERS, params::L1_NUM_SEMAPHORES,
                                             params::DRAM_ALIGNMENT,       std::move(noc_cores)};
            },
            "What a program may use of this device (checked before every launch).")
        .def(
            "allocate", [](Device& d, uint64_t size, uint32_t page) { return d.dram().allocate(size, page); },
            py::arg("size_bytes"), py::arg("page_size"), "Allocates an interleaved DRAM buffer; returns its address.")
        .def(
            "deallocate", [](Device& d, uint32_t address) { d.deallocate(address); }, py::arg("address"))
        .def(
            "allocate_l1",
            [](Device& d, uint32_t num_pages, uint32_t page_size, std::optional<std::pair<uint32_t, uint32_t>> core) {
                return core ? d.l1_buffers().allocate_on_core(num_pages, page_size, core->first, core->second)
                            : d.l1_buffers().allocate_interleaved(num_pages, page_size);
            },
            py::arg("num_pages"), py::arg("page_size"), py::arg("core") = py::none(),
            "Allocates an L1 buffer, interleaved over the worker cores or (core=(x, y)) every page on that core; "
            "returns its address.")
        .def(
            "deallocate_l1", [](Device& d, uint32_t address) { d.l1_buffers().deallocate(address); },
            py::arg("address"))
        .def(
            "write_l1",
            [](Device& d, uint32_t address, py::array_t<uint8_t, py::array::c_style | py::array::forcecast> data) {
                d.l1_buffers().write_pages(address, data.data(), static_cast<size_t>(data.size()));
            },
            py::arg("address"), py::arg("data"), "Writes every page (in page order) of an L1 buffer.")
        .def(
            "read_l1",
            [](Device& d, uint32_t address, size_t nbytes) {
                py::array_t<uint8_t> out(static_cast<py::ssize_t>(nbytes));
                d.l1_buffers().read_pages(address, out.mutable_data(), nbytes);
                return out;
            },
            py::arg("address"), py::arg("nbytes"), "Reads every page (in page order) of an L1 buffer.")
        .def("write", &write_buffer, py::arg("address"), py::arg("page_size"), py::arg("data"),
             "Writes pages (in page order) into an interleaved DRAM buffer.")
        .def("read", &read_buffer, py::arg("address"), py::arg("page_size"), py::arg("nbytes"),
             "Reads nbytes of pages (in page order) from an interleaved DRAM buffer.")
        .def(
            "worker_core_from_logical_core",
            [](const Device& d, uint32_t x, uint32_t y) {
                NocCoord c = d.worker_core_from_logical_core(x, y);
                return py::make_tuple(c.x, c.y);
            },
            py::arg("x"), py::arg("y"))
        .def(
            "counters", [](Device& d) { return counters_to_dict(d.counters()); }, "Cumulative counters.")
        .def("reset_counters", &Device::reset_counters)
        .def("__repr__", [](const Device& d) {
            return "emu.Device(id=" + std::to_string(d.id()) + ", grid=" + std::to_string(d.grid_x()) + "x" +
                   std::to_string(d.grid_y()) + ")";
        });

    py::class_<Mesh, std::shared_ptr<Mesh>>(m, "Mesh")
        .def(py::init([](uint32_t rows, uint32_t cols, GridArg grid) {
                 return std::make_shared<Mesh>(rows, cols, grid.first, grid.second);
             }),
             py::arg("rows"), py::arg("cols"), py::arg("grid") = GridArg{8, 8})
        .def_property_readonly("shape", [](const Mesh& mesh) { return py::make_tuple(mesh.rows(), mesh.cols()); })
        .def_property_readonly("num_devices", &Mesh::num_devices)
        .def("device", &Mesh::device, py::arg("row"), py::arg("col"))
        .def("devices", &Mesh::devices);

    m.def(
        "open_device",
        [](uint32_t device_id, GridArg grid) { return std::make_shared<Device>(device_id, grid.first, grid.second); },
        py::arg("device_id") = 0, py::arg("grid") = GridArg{8, 8});

    m.def("run_program", &run_on_device, py::arg("device"), py::arg("program"),
          "Runs a program on one device; returns the counters of this run.");
    m.def("run_mesh_program", &run_on_mesh, py::arg("mesh"), py::arg("program"),
          "Runs one program per device of the mesh; returns total counters and per-device counters.");
    m.def(
        "jit_stats",
        []() {
            const JitStats s = KernelJit::instance().stats();
            py::dict d;
            d["builds"] = s.builds;
            d["cache_hits"] = s.cache_hits;
            return d;
        },
        "Kernel builds (compiler runs) and cache hits of this process.");
    m.def(
        "runtime_state",
        []() {
            py::dict d;
            d["kernels_loaded"] = KernelJit::instance().loaded_count();
            d["l1_slots"] = L1Pool::instance().num_slots();
            d["l1_slots_free"] = L1Pool::instance().num_free();
            return d;
        },
        "What the emulator keeps between runs: loaded kernel builds and the L1 pool's slots (all free between "
        "runs).");
    m.def(
        "set_kernel_include_dirs",
        [](std::vector<std::string> dirs) { KernelJit::instance().set_extra_include_dirs(std::move(dirs)); },
        py::arg("dirs"), "Extra include directories for kernel builds (part of the build cache key).");
    m.def(
        "kernel_binding_headers",
        [](const program::KernelBindingsDescriptor& bindings) {
            return std::make_pair(kernel_args_header(bindings), kernel_bindings_header(bindings));
        },
        py::arg("bindings"),
        "The kernel_args_generated.h and kernel_bindings_generated.h the JIT writes for a Metal 2.0 kernel.");
    m.def(
        "tensor_accessor_args",
        [](uint32_t page_size, bool is_dram) {
            program::TensorArg t;
            t.page_size = page_size;
            t.is_dram = is_dram;
            t.alignment = is_dram ? params::DRAM_ALIGNMENT : params::L1_ALIGNMENT;
            std::vector<uint32_t> args;
            program::append_tensor_accessor_args(t, args);
            return args;
        },
        py::arg("page_size"), py::arg("is_dram") = true,
        "Compile-time args of an interleaved tensor's TensorAccessorArgs (as tt-metal's append_to).");
    m.def(
        "set_timing_arch", [](const std::string& name) { timing::set_arch(name); }, py::arg("name"),
        "Architecture the device-time model uses for the next runs: 'wormhole_b0' (default) or 'blackhole'.");
    m.def("timing_arch", []() { return timing::current_arch().name; }, "Architecture of the device-time model.");
    m.def(
        "timing_params",
        [](const std::string& name) {
            return arch_params_to_dict(name.empty() ? timing::current_arch() : timing::arch_params(name));
        },
        py::arg("name") = "", "The device-time model's parameters of an architecture (default: the current one).");
    m.def("kernel_include_dirs", []() { return KernelJit::instance().extra_include_dirs(); });
    m.def(
        "set_poison", [](bool on) { poison::set_enabled(on); }, py::arg("on"),
        "Poison mode (TTNN_MOE_POISON=1 at start-up): L1 and DRAM taken from now on hold a fill pattern, and a "
        "kernel's read of bytes nothing wrote raises EmulatorError naming the kernel, core, address and buffer.");
    m.def("poison", []() { return poison::enabled(); }, "Whether poison mode is on.");
    m.def(
        "set_matmul_thread", [](bool on) { MatmulWorker::set_enabled(on); }, py::arg("on"),
        "Tile matmuls on a second host thread (on by default, off with TTNN_MOE_EMU_MATMUL_THREAD=0 at "
        "start-up), for programs started from now on. Results, counters and "
        "modeled time are the same either way.");
    m.def("matmul_thread", []() { return MatmulWorker::enabled(); }, "Whether tile matmuls run on a second thread.");
    m.def(
        "set_dram_files",
        [](std::optional<bool> enabled, std::optional<uint64_t> threshold_bytes,
           std::optional<uint64_t> resident_budget_bytes, std::optional<std::string> directory,
           std::optional<uint64_t> disk_budget_bytes) {
            DramFileSettings s = dram_file_settings();
            if (enabled) s.enabled = *enabled;
            if (threshold_bytes) s.threshold_bytes = *threshold_bytes;
            if (resident_budget_bytes) s.resident_budget_bytes = *resident_budget_bytes;
            if (directory) s.directory = *directory;
            if (disk_budget_bytes) s.disk_budget_bytes = *disk_budget_bytes;
            set_dram_file_settings(s);
        },
        py::arg("enabled") = py::none(), py::arg("threshold_bytes") = py::none(),
        py::arg("resident_budget_bytes") = py::none(), py::arg("directory") = py::none(),
        py::arg("disk_budget_bytes") = py::none(),
        "File-backed DRAM (TTNN_MOE_DRAM_FILES=0 / 1, TTNN_MOE_DRAM_DIR and TTNN_MOE_DRAM_DISK_BUDGET at start-up; "
        "None keeps a setting): buffers allocated from now on of at least threshold_bytes are memory-mapped "
        "unnamed files in directory, their disk blocks reserved a chunk at a time as they are first written (at "
        "most disk_budget_bytes reserved at once over all files, 0: no budget), and their resident pages are "
        "dropped whenever resident_budget_bytes have been accessed since the last drop.");
    m.def(
        "dram_files",
        []() {
            const DramFileSettings s = dram_file_settings();
            const DramFileStats stats = dram_file_stats();
            py::dict d;
            d["enabled"] = s.enabled;
            d["threshold_bytes"] = s.threshold_bytes;
            d["resident_budget_bytes"] = s.resident_budget_bytes;
            d["directory"] = s.directory;
            d["disk_budget_bytes"] = s.disk_budget_bytes;
            d["reserved_bytes"] = stats.reserved_bytes;
            d["buffers"] = stats.buffers;
            d["bytes"] = stats.bytes;
            d["releases"] = stats.releases;
            return d;
        },
        "File-backed DRAM settings, the live file-backed buffers and bytes, and how often their resident pages "
        "were dropped.");
    m.def("release_dram_files", &release_dram_files, "Drops the resident pages of every file-backed DRAM buffer now.");
    m.def(
        "semaphore_l1_address",
        [](uint32_t id) {
            if (id >= params::L1_NUM_SEMAPHORES) {
                throw py::value_error("semaphore id " + std::to_string(id) + " is out of range (0.." +
                                      std::to_string(params::L1_NUM_SEMAPHORES - 1) + ")");
            }
            return ttnn_moe_emu::L1_SEMAPHORE_BASE + id * ttnn_moe_emu::L1_SEMAPHORE_STRIDE;
        },
        py::arg("id"),
        "L1 offset of program semaphore `id`: the same on every core and device that declares it, so a kernel "
        "can use it where tt-metal passes a global semaphore address.");
    m.def(
        "cb_l1_addresses",
        [](const std::vector<uint32_t>& total_sizes) {
            std::vector<uint32_t> addresses;
            uint32_t next = params::L1_CB_BASE;
            for (uint32_t size : total_sizes) {
                next = (next + params::DRAM_ALIGNMENT - 1) / params::DRAM_ALIGNMENT * params::DRAM_ALIGNMENT;
                addresses.push_back(next);
                next += size;
            }
            return addresses;
        },
        py::arg("total_sizes"),
        "L1 offsets of CBs of these total sizes, the only CBs of their cores, placed in this order as a run "
        "places them: what a program passes where tt-metal passes the address of a tensor a CB aliases.");
    bind_fabric(m);
}

}  // namespace ttnn_moe::bindings
