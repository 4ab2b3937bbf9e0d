// Program of all_to_all_dispatch_dense on one device: one data-movement kernel on
// core (0, 0) that exchanges per-expert assignment counts over the fabric, derives
// the line's packing plan from them (identical on every member), sends each token
// row once per remote destination device plus the list of its assignments there,
// fans received rows out to the token's other expert blocks and writes the
// metadata tensors. CBs serve as the kernel's L1 scratch.
#include "ops/all_to_all_dispatch_dense/all_to_all_dispatch_dense_device_operation.hpp"
#include "ops/common/tensor_checks.hpp"

namespace ttnn_moe::ops::dispatch_dense {

using namespace program;
using namespace shared;

namespace {
// CB ids of the kernel's L1 scratch (named compile-time args).
enum Cb : uint8_t {
    kCbRow,
    kCbOwn,
    kCbCounts,
    kCbList,
    kCbMapping,
    kCbTables,
    kCbIdxImage,
    kCbWeightImage,
    kCbStage,
    kCbHeaders,
    kCbZeroRow
};
// Semaphore ids on the kernel's core.
enum Semaphore : uint32_t { kSemInit = 0, kSemCounts = 1, kSemLists = 2, kSemPayload = 3 };

}  // namespace

CachedProgram create_program(const std::vector<TensorArg>& io, const std::string& kernels_root,
                             const program::DeviceLimits& limits, const Attributes& attrs, MeshCoordinate device,
                             const std::vector<std::pair<uint32_t, uint32_t>>& fabric_node_ids) {
    validate_line_program_inputs(kOpName, io.size(), kNumIo, limits.grid);
    const Shapes s = validate({io.begin(), io.begin() + 4}, attrs);
    const MeshGeometry& mesh = attrs.mesh;
    const DispatchLine line = dispatch_line(mesh, device);
    const uint32_t line_size = mesh.line_size();
    const uint32_t assignments = s.tokens() * s.top_k;

    const CoreCoord core{0, 0};
    const CoreRangeSet cores{{CoreRange{core, core}}};
    ProgramDescriptor program;
    program.cbs = {
        // two token rows: one is read while the other is sent
        scratch_cb(cores, kCbRow, DataFormat::Float16_b, 2 * round_up(s.hidden * 2, limits.dram_alignment)),
        scratch_cb(cores, kCbOwn, DataFormat::UInt32, assignments * kOwnEntryBytes),
        scratch_cb(cores, kCbCounts, DataFormat::UInt32,
                   line_size * round_up(s.num_experts * 4, limits.dram_alignment)),
        scratch_cb(cores, kCbList, DataFormat::UInt32, assignments * kListEntryBytes),
        scratch_cb(cores, kCbMapping, DataFormat::UInt32,
                   kMappingBatchRows * round_up(mesh.num_devices() * s.mapping_element_bytes, limits.dram_alignment)),
        scratch_cb(cores, kCbTables, DataFormat::UInt32, kPlanTables * s.num_experts * 4),
        scratch_cb(cores, kCbIdxImage, DataFormat::UInt32, s.capacity * 4),
        scratch_cb(cores, kCbWeightImage, DataFormat::Float16_b, s.capacity * 2),
        scratch_cb(cores, kCbStage, DataFormat::UInt32, kStageSlots * kStageBytes),
        scratch_cb(cores, kCbHeaders, DataFormat::UInt32, kHeaderSlotBytes),
        // the padding writer's zero row
        scratch_cb(cores, kCbZeroRow, DataFormat::Float16_b, round_up(s.hidden * 2, limits.dram_alignment)),
    };
    uint32_t l1_bytes = 0;
    for (const auto& cb : program.cbs) l1_bytes += cb.total_size;
    check_l1_budget(kOpName, l1_bytes,
                    "capacity=" + std::to_string(s.capacity) + ", T=" + std::to_string(s.tokens()) +
                        ", K=" + std::to_string(s.top_k) + ", H=" + std::to_string(s.hidden) +
                        ", D=" + std::to_string(line_size));
    for (uint32_t id : {kSemInit, kSemCounts, kSemLists, kSemPayload}) {
        program.semaphores.push_back(SemaphoreDescriptor{id, CoreType::WORKER, cores, 0});
    }

    KernelDescriptor kernel;
    kernel.kernel_source = kernels_root + "/all_to_all_dispatch_dense/dataflow/dispatch_dense.cpp";
    kernel.core_ranges = cores;
    for (uint32_t i = 0; i < kNumIo; ++i) append_runtime_page_size_accessor_args(io[i], kernel.compile_time_args);
    kernel.named_compile_time_args = {
        {named_arg::kCbRow, kCbRow},           {named_arg::kCbOwn, kCbOwn},
        {named_arg::kCbCounts, kCbCounts},     {named_arg::kCbList, kCbList},
        {named_arg::kCbMapping, kCbMapping},   {named_arg::kCbTables, kCbTables},
        {named_arg::kCbIdxImage, kCbIdxImage}, {named_arg::kCbWeightImage, kCbWeightImage},
        {named_arg::kCbStage, kCbStage},       {named_arg::kCbHeaders, kCbHeaders},
        {named_arg::kSemInit, kSemInit},       {named_arg::kSemCounts, kSemCounts},
        {named_arg::kSemLists, kSemLists},     {named_arg::kSemPayload, kSemPayload},
    };
    kernel.config = WriterConfigDescriptor{};

    // The padding writer on the other data-movement RISC (and NOC).
    KernelDescriptor padding;
    padding.kernel_source = kernels_root + "/all_to_all_dispatch_dense/dataflow/write_padding.cpp";
    padding.core_ranges = cores;
    append_runtime_page_size_accessor_args(io[kTokens], padding.compile_time_args);
    padding.named_compile_time_args = {
        {named_arg::kCbTables, kCbTables}, {named_arg::kCbZeroRow, kCbZeroRow}, {named_arg::kSemInit, kSemInit}};
    padding.config = ReaderConfigDescriptor{};
    std::vector<uint32_t> padding_args(padding_arg::kCount);
    padding_args[padding_arg::kTokensAddress] = io[kTokens].address;
    padding_args[padding_arg::kHidden] = s.hidden;
    padding_args[padding_arg::kNumExperts] = s.num_experts;
    padding_args[padding_arg::kLocalExperts] = s.local_experts;
    padding_args[padding_arg::kLineSize] = line_size;
    padding_args[padding_arg::kPosition] = line.position;
    padding.runtime_args.emplace_back(core, std::move(padding_args));

    CachedProgram cached;
    std::vector<uint32_t> args(dataflow_arg::kLineDevices);
    for (uint32_t i = 0; i < kNumIo; ++i) {
        cached.address_slots.push_back({0, 0, i, i});
        args[i] = io[i].address;
    }
    args[dataflow_arg::kNumTokens] = s.tokens();
    args[dataflow_arg::kTopK] = s.top_k;
    args[dataflow_arg::kHidden] = s.hidden;
    args[dataflow_arg::kNumExperts] = s.num_experts;
    args[dataflow_arg::kLocalExperts] = s.local_experts;
    args[dataflow_arg::kNumDevices] = mesh.num_devices();
    args[dataflow_arg::kLineSize] = line_size;
    args[dataflow_arg::kPosition] = line.position;
    args[dataflow_arg::kCapacity] = s.capacity;
    args[dataflow_arg::kMaxPacketPayload] = attrs.max_packet_payload;
    args[dataflow_arg::kMappingElementBytes] = s.mapping_element_bytes;
    args[dataflow_arg::kNumLinks] = attrs.num_links;
    args.insert(args.end(), line.device_indices.begin(), line.device_indices.end());
    append_route_args(mesh, line, fabric_node_ids, args);
    kernel.runtime_args.emplace_back(core, std::move(args));
    program.kernels.push_back(std::move(kernel));
    cached.address_slots.push_back({1, 0, padding_arg::kTokensAddress, kTokens});
    program.kernels.push_back(std::move(padding));
    cached.program = std::move(program);
    return cached;
}

}  // namespace ttnn_moe::ops::dispatch_dense
