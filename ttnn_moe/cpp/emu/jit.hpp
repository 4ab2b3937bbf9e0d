// Kernel build (JIT): each distinct (source, compile-time args, named args,
// defines, kernel kind, CB formats, compute config) is compiled by the host
// C++ compiler into a shared object, cached on disk under
// $TTNN_MOE_CACHE/emu_kernels (default ~/.cache/ttnn_moe)/<key>/<headers>/:
// <key> hashes what the build is asked to compile, <headers> the contents of
// the headers the compiler read for it (build_dependencies.hpp). Each build is
// loaded once per process.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <optional>

#include "emu/build_dependencies.hpp"
#include "emu/device_params.hpp"
#include "emu/include/ttnn_moe_emu/abi.h"
#include "program/program_descriptor.hpp"

namespace ttnn_moe::emu {

enum class KernelKind : uint8_t { BRISC = 0, NCRISC = 1, COMPUTE = 2 };
const char* kernel_kind_name(KernelKind kind);

// What the kernel sees of one CB at compile time (get_dataformat, get_tile_size, ...).
struct CbCompileInfo {
    program::DataFormat format = program::DataFormat::Invalid;
    uint32_t page_size = 0;
    uint32_t tile_height = 32;
    uint32_t tile_width = 32;
    bool operator==(const CbCompileInfo&) const = default;
};

struct KernelBuildSpec {
    std::string source;  // a path, or the code itself when source_is_code
    bool source_is_code = false;
    KernelKind kind = KernelKind::BRISC;
    uint32_t noc_index = 0;
    std::vector<uint32_t> compile_time_args;
    std::vector<std::pair<std::string, uint32_t>> named_compile_time_args;
    std::vector<std::pair<std::string, std::string>> defines;
    std::array<CbCompileInfo, params::MAX_CIRCULAR_BUFFERS> cbs{};
    program::ComputeConfigDescriptor compute;                   // compute kernels only
    std::optional<program::KernelBindingsDescriptor> bindings;  // Metal 2.0 kernels only
};

using KernelEntry = void (*)(const ttnn_moe_emu::Services*);

struct JitStats {
    uint64_t builds = 0;      // compiler runs
    uint64_t cache_hits = 0;  // found on disk or already loaded
};

class KernelJit {
public:
    static KernelJit& instance();

    // Root of the emulator's device headers (api/...); must be set before the first build.
    void set_include_dir(const std::string& dir);
    bool has_include_dir();
    // Extra include directories for kernels (e.g. a tt-metal source tree); part of the cache key.
    void set_extra_include_dirs(std::vector<std::string> dirs);
    std::vector<std::string> extra_include_dirs();

    // Builds (or finds) every spec, compiling misses in parallel (2 workers).
    // Adds to `stats` what this call needed.
    std::vector<KernelEntry> load(const std::vector<KernelBuildSpec>& specs, JitStats& stats);

    JitStats stats();
    // Kernel builds loaded into this process (one per distinct build hash).
    size_t loaded_count();

private:
    KernelJit() = default;
    std::string cache_dir();
    // The build of a key whose recorded headers still have the contents it was built against, or empty.
    std::filesystem::path find_build(const std::filesystem::path& key_dir, const std::vector<std::string>& later_dirs);
    // Records a finished build's header dependencies and moves it to its place; returns that place.
    std::filesystem::path record_build(const std::filesystem::path& scratch,
                                       const std::vector<std::string>& later_dirs);
    std::string compiler();
    std::string compiler_version();

    std::mutex mutex_;
    std::string include_dir_;
    std::vector<std::string> extra_include_dirs_;
    FileDigests file_digests_;
    std::unordered_map<std::string, std::vector<std::string>> dependencies_;  // by build directory
    std::string compiler_version_;
    std::unordered_map<std::string, KernelEntry> loaded_;  // by kernel.so path
    JitStats stats_;
};

}  // namespace ttnn_moe::emu
