// Backend-neutral description of a device program.
//
// Field for field like tt-metal's ProgramDescriptor / KernelDescriptor /
// CBDescriptor / SemaphoreDescriptor / MeshProgramDescriptor (0.81.1), so the
// same description runs in the emulator and can be handed to ttnn.generic_op
// on hardware. Program factories produce these; nothing here executes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace ttnn_moe::program {

// Values match tt::DataFormat in the 0.81.1 device headers.
enum class DataFormat : uint8_t {
    Float32 = 0,
    Float16 = 1,
    Bfp8 = 2,
    Bfp4 = 3,
    Tf32 = 4,
    Float16_b = 5,
    Bfp8_b = 6,
    Bfp4_b = 7,
    Int32 = 8,
    UInt16 = 9,
    Int8 = 14,
    UInt32 = 24,
    UInt8 = 30,
    Invalid = 0xff,
};

enum class MathFidelity : uint8_t { LoFi = 0, HiFi2 = 2, HiFi3 = 3, HiFi4 = 4 };
enum class UnpackToDestMode : uint8_t { Default = 0, UnpackToDestFp32 = 1 };
enum class CoreType : uint8_t { WORKER = 0, ETH = 1 };
enum class DataMovementProcessor : uint8_t { RISCV_0 = 0, RISCV_1 = 1 };
enum class NOC : uint8_t { RISCV_0_default = 0, RISCV_1_default = 1, NOC_0 = 0, NOC_1 = 1 };

struct CoreCoord {
    uint32_t x = 0;
    uint32_t y = 0;
    bool operator==(const CoreCoord&) const = default;
};

// Inclusive rectangle of logical worker cores, as in tt-metal.
struct CoreRange {
    CoreCoord start;
    CoreCoord end;
    bool contains(const CoreCoord& c) const { return c.x >= start.x && c.x <= end.x && c.y >= start.y && c.y <= end.y; }
    uint32_t num_cores() const { return (end.x - start.x + 1) * (end.y - start.y + 1); }
    bool operator==(const CoreRange&) const = default;
};

struct CoreRangeSet {
    std::vector<CoreRange> ranges;
    bool contains(const CoreCoord& c) const;
    uint32_t num_cores() const;
    // Cores in row-major order (y outer, x inner) within each range.
    std::vector<CoreCoord> cores() const;
    bool operator==(const CoreRangeSet&) const = default;
};

struct TileDescriptor {
    uint32_t height = 32;
    uint32_t width = 32;
    bool transpose = false;
    bool operator==(const TileDescriptor&) const = default;
};

struct CBFormatDescriptor {
    uint8_t buffer_index = 0;
    DataFormat data_format = DataFormat::Float32;
    uint32_t page_size = 0;
    std::optional<TileDescriptor> tile;
    bool operator==(const CBFormatDescriptor&) const = default;
};

// What one core's L1 holds at a CB's base when the program starts: the shard of an L1-sharded
// tensor whose buffer the CB aliases (tt-metal's CircularBufferConfig::set_globally_allocated_address).
// The emulator keeps no L1 between programs, so the shard's bytes travel with the program.
struct CBShardContents {
    CoreCoord core;
    std::vector<uint8_t> bytes;
    bool operator==(const CBShardContents&) const = default;
};

struct CBDescriptor {
    uint32_t total_size = 0;
    CoreRangeSet core_ranges;
    std::vector<CBFormatDescriptor> format_descriptors;
    std::vector<CBShardContents> shard_contents;
    bool operator==(const CBDescriptor&) const = default;
};

struct SemaphoreDescriptor {
    uint32_t id = 0;
    CoreType core_type = CoreType::WORKER;
    CoreRangeSet core_ranges;
    uint32_t initial_value = 0;
    bool operator==(const SemaphoreDescriptor&) const = default;
};

struct ReaderConfigDescriptor {
    bool operator==(const ReaderConfigDescriptor&) const = default;
};
struct WriterConfigDescriptor {
    bool operator==(const WriterConfigDescriptor&) const = default;
};
struct DataMovementConfigDescriptor {
    DataMovementProcessor processor = DataMovementProcessor::RISCV_0;
    NOC noc = NOC::RISCV_0_default;
    bool operator==(const DataMovementConfigDescriptor&) const = default;
};
struct ComputeConfigDescriptor {
    MathFidelity math_fidelity = MathFidelity::HiFi4;
    bool fp32_dest_acc_en = false;
    bool dst_full_sync_en = false;
    std::vector<UnpackToDestMode> unpack_to_dest_mode;
    bool bfp8_pack_precise = false;
    bool math_approx_mode = false;
    bool operator==(const ComputeConfigDescriptor&) const = default;
};

// A tensor a Metal 2.0 kernel binds as `tensor::name`: its accessor args start at compile-time arg
// `accessor_cta_offset`; its base address is common runtime arg `address_crta_index` (any accessor
// common runtime words follow it).
struct TensorBindingDescriptor {
    std::string name;
    uint32_t accessor_cta_offset = 0;
    uint32_t address_crta_index = 0;
    bool operator==(const TensorBindingDescriptor&) const = default;
};

// The named interface of a Metal 2.0 kernel (the `*_metal2` kernels of tt-metal 0.81.1). Named runtime
// args take the first runtime arg words in this order (positional varargs follow them), named common
// runtime args the first common words; compile-time values are constants of the build. The JIT turns
// this into the kernel's kernel_args_generated.h (`args::`) and kernel_bindings_generated.h (`dfb::`,
// `sem::`, `tensor::`).
struct KernelBindingsDescriptor {
    std::vector<std::string> runtime_args;
    std::vector<std::string> common_runtime_args;
    std::vector<std::pair<std::string, uint32_t>> compile_time_values;
    std::vector<std::pair<std::string, uint32_t>> dataflow_buffers;  // name -> CB id
    std::vector<std::pair<std::string, uint32_t>> semaphores;        // name -> semaphore id
    std::vector<TensorBindingDescriptor> tensors;
    bool operator==(const KernelBindingsDescriptor&) const = default;
};

struct KernelDescriptor {
    enum class SourceType : uint8_t { FILE_PATH = 0, SOURCE_CODE = 1 };
    using CoreRuntimeArgs = std::vector<uint32_t>;
    using ConfigDescriptor = std::variant<ReaderConfigDescriptor, WriterConfigDescriptor, DataMovementConfigDescriptor,
                                          ComputeConfigDescriptor>;

    std::string kernel_source;
    SourceType source_type = SourceType::FILE_PATH;
    CoreRangeSet core_ranges;
    std::vector<uint32_t> compile_time_args;
    std::vector<std::pair<std::string, uint32_t>> named_compile_time_args;
    std::vector<std::pair<std::string, std::string>> defines;
    std::vector<std::pair<CoreCoord, CoreRuntimeArgs>> runtime_args;
    CoreRuntimeArgs common_runtime_args;
    ConfigDescriptor config;
    std::optional<KernelBindingsDescriptor> bindings;  // Metal 2.0 kernels only

    bool is_compute() const { return std::holds_alternative<ComputeConfigDescriptor>(config); }
    // Runtime args of one core, or nullptr when the core has none.
    const CoreRuntimeArgs* runtime_args_of(const CoreCoord& core) const;
    bool operator==(const KernelDescriptor&) const = default;
};

struct ProgramDescriptor {
    std::vector<KernelDescriptor> kernels;
    std::vector<SemaphoreDescriptor> semaphores;
    std::vector<CBDescriptor> cbs;
    std::optional<uint64_t> custom_program_hash;
    bool operator==(const ProgramDescriptor&) const = default;
};

struct MeshCoordinate {
    uint32_t row = 0;
    uint32_t col = 0;
    bool operator==(const MeshCoordinate&) const = default;
};

// Inclusive rectangle of devices in a mesh.
struct MeshCoordinateRange {
    MeshCoordinate start;
    MeshCoordinate end;
    bool contains(const MeshCoordinate& c) const {
        return c.row >= start.row && c.row <= end.row && c.col >= start.col && c.col <= end.col;
    }
    bool operator==(const MeshCoordinateRange&) const = default;
};

struct MeshProgramDescriptor {
    std::vector<std::pair<MeshCoordinateRange, ProgramDescriptor>> mesh_programs;
    bool operator==(const MeshProgramDescriptor&) const = default;
};

// Structural hash: everything but runtime-arg values (like tt-metal's), so a
// program cache can key on it.
uint64_t structural_hash(const ProgramDescriptor& program);

// Bytes per 32x32 tile in a format (bfloat8_b: 1024 mantissas + 64 exponents).
uint32_t tile_size_bytes(DataFormat format);

}  // namespace ttnn_moe::program
