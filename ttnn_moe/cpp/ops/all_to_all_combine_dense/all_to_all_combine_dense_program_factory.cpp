// Program of all_to_all_combine_dense on one device, on core (0, 0): a data-movement
// kernel sends every used slot row to (source position, token) of the partials
// buffer on its source device, tells each peer which tokens it sent (one presence
// page per peer), and after every peer's increment feeds the received partials in
// ascending source position to a compute kernel that sums them with fp32
// accumulation; the data-movement kernel writes the sums back.
#include "ops/all_to_all_combine_dense/all_to_all_combine_dense_device_operation.hpp"
#include "ops/common/tensor_checks.hpp"

namespace ttnn_moe::ops::combine_dense {

using namespace program;

namespace {
enum Io : uint32_t { kReduced, kSlotSource, kNumSlots, kOutput, kPartials, kPresence, kStatus, kNumIo };
enum Cb : uint8_t { kCbRow, kCbPartial, kCbOut, kCbPresence, kCbStage, kCbHeaders, kCbAcc, kCbCount };
constexpr uint32_t kTileElements = 1024;
constexpr uint32_t kStageBytes = 64;
constexpr uint32_t kHeaderSlotBytes = 128;
enum Semaphore : uint32_t { kSemInit = 0, kSemPartials = 1 };

}  // namespace

CachedProgram create_program(const std::vector<TensorArg>& io, const std::string& kernels_root, CoreCoord grid,
                             const Attributes& attrs, MeshCoordinate device,
                             const std::vector<std::pair<uint32_t, uint32_t>>& fabric_node_ids) {
    validate_line_program_inputs(kOpName, io.size(), kNumIo, grid);
    const Shapes s = validate({io.begin(), io.begin() + 3}, attrs);
    const MeshGeometry& mesh = attrs.mesh;
    const DispatchLine line = dispatch_line(mesh, device);
    const uint32_t line_size = mesh.line_size();
    const uint32_t tokens = attrs.batch * attrs.seq;
    const uint32_t presence_stride = round_up(tokens * 4, kAlignment);

    const CoreCoord core{0, 0};
    const CoreRangeSet cores{{CoreRange{core, core}}};
    ProgramDescriptor program;
    program.cbs = {
        scratch_cb(cores, kCbRow, DataFormat::Float16_b, s.hidden * 2),
        // partial row chunks fed to the compute kernel (double-buffered), its fp32
        // accumulator and its output chunk
        CBDescriptor{2 * kTileElements * 2, cores, {CBFormatDescriptor{kCbPartial, DataFormat::Float16_b,
                                                                       kTileElements * 2, std::nullopt}}},
        CBDescriptor{kTileElements * 4, cores,
                     {CBFormatDescriptor{kCbAcc, DataFormat::Float32, kTileElements * 4, std::nullopt}}},
        CBDescriptor{kTileElements * element_bytes(attrs.output_dtype), cores,
                     {CBFormatDescriptor{kCbOut, attrs.output_dtype, kTileElements * element_bytes(attrs.output_dtype),
                                         std::nullopt}}},
        scratch_cb(cores, kCbPresence, DataFormat::UInt32, line_size * presence_stride),
        scratch_cb(cores, kCbStage, DataFormat::UInt32, kStageBytes),
        scratch_cb(cores, kCbHeaders, DataFormat::UInt32, kHeaderSlotBytes),
        // partials per chunk of the next token, read by the compute kernel (read_tile_value)
        scratch_cb(cores, kCbCount, DataFormat::UInt32, kAlignment),
    };
    uint32_t l1_bytes = 0;
    for (const auto& cb : program.cbs) l1_bytes += cb.total_size;
    check_l1_budget(kOpName, l1_bytes, "T=" + std::to_string(tokens) + ", H=" + std::to_string(s.hidden) +
                                           ", D=" + std::to_string(line_size));
    for (uint32_t id : {kSemInit, kSemPartials}) {
        program.semaphores.push_back(SemaphoreDescriptor{id, CoreType::WORKER, cores, 0});
    }

    KernelDescriptor kernel;
    kernel.kernel_source = kernels_root + "/all_to_all_combine_dense/dataflow/combine_dense.cpp";
    kernel.core_ranges = cores;
    for (uint32_t i = 0; i < kNumIo; ++i) append_runtime_page_size_accessor_args(io[i], kernel.compile_time_args);
    kernel.named_compile_time_args = {
        {"cb_row", kCbRow},     {"cb_partial", kCbPartial}, {"cb_out", kCbOut},     {"cb_count", kCbCount},
        {"cb_presence", kCbPresence},
        {"cb_stage", kCbStage}, {"cb_headers", kCbHeaders}, {"sem_init", kSemInit}, {"sem_partials", kSemPartials},
    };
    kernel.config = WriterConfigDescriptor{};

    KernelDescriptor sum;
    sum.kernel_source = kernels_root + "/all_to_all_combine_dense/compute/sum_partials.cpp";
    sum.core_ranges = cores;
    sum.named_compile_time_args = {
        {"cb_partial", kCbPartial}, {"cb_acc", kCbAcc}, {"cb_out", kCbOut}, {"cb_count", kCbCount}};
    ComputeConfigDescriptor sum_config;
    sum_config.math_fidelity = MathFidelity::HiFi4;
    sum_config.fp32_dest_acc_en = true;
    sum.config = sum_config;
    sum.runtime_args.emplace_back(
        core, std::vector<uint32_t>{tokens, (s.hidden + kTileElements - 1) / kTileElements});

    CachedProgram cached;
    std::vector<uint32_t> args;
    for (uint32_t i = 0; i < kNumIo; ++i) {
        cached.address_slots.push_back({0, 0, static_cast<uint32_t>(args.size()), i});
        args.push_back(io[i].address);
    }
    args.insert(args.end(), {tokens, s.hidden, line_size, line.position, s.capacity, attrs.max_packet_payload,
                             attrs.output_dtype == DataFormat::Float32 ? 1u : 0u, attrs.return_partials ? 1u : 0u,
                             presence_stride, attrs.num_links});
    append_route_args(mesh, line, fabric_node_ids, args);
    kernel.runtime_args.emplace_back(core, std::move(args));
    program.kernels.push_back(std::move(kernel));
    program.kernels.push_back(std::move(sum));
    cached.program = std::move(program);
    return cached;
}

}  // namespace ttnn_moe::ops::combine_dense
