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

namespace {
// io tensor indices
enum Io : uint32_t {
    kX, kIds, kWeights, kMapping,
    kTokens, kCounts, kOffsets, kIdxMap, kRowWeights, kSlotSource, kNumSlots, kStatus, kRoutingCounts,
    kRoutingLists, kNumIo,
};
enum Cb : uint8_t { kCbRow, kCbOwn, kCbCounts, kCbList, kCbMapping, kCbTables, kCbIdxImage, kCbWeightImage,
                    kCbStage, kCbHeaders };
// Per-expert tables of the plan: owner position, line index, assignments before this
// source, total assignments, running rank, block offset, rows kept.
constexpr uint32_t kPlanTables = 7;
constexpr uint32_t kListEntryBytes = 8;  // (token, expert | bf16 weight << 16)
// Staging of one ids row (K <= kMaxTopK words) or the status record.
constexpr uint32_t kStageBytes = kMaxTopK * 4;
// Room for the packet header of either fabric (1D low-latency or 2D hybrid mesh).
constexpr uint32_t kHeaderSlotBytes = 128;
// Semaphores on the kernel's core: peers ready, count pages landed, list packets landed,
// token rows landed.
enum Semaphore : uint32_t { kSemInit = 0, kSemCounts = 1, kSemLists = 2, kSemPayload = 3 };

}  // namespace

CachedProgram create_program(const std::vector<TensorArg>& io, const std::string& kernels_root, CoreCoord grid,
                             const Attributes& attrs, MeshCoordinate device,
                             const std::vector<std::pair<uint32_t, uint32_t>>& fabric_node_ids) {
    validate_line_program_inputs(kOpName, io.size(), kNumIo, grid);
    const Shapes s = validate({io.begin(), io.begin() + 4}, attrs);
    const MeshGeometry& mesh = attrs.mesh;
    const DispatchLine line = dispatch_line(mesh, device);
    const uint32_t line_size = mesh.line_size();
    const uint32_t assignments = s.tokens() * s.top_k;

    const CoreCoord core{0, 0};
    const CoreRangeSet cores{{CoreRange{core, core}}};
    ProgramDescriptor program;
    program.cbs = {
        scratch_cb(cores, kCbRow, DataFormat::Float16_b, s.hidden * 2),
        scratch_cb(cores, kCbOwn, DataFormat::UInt32, assignments * 6),
        scratch_cb(cores, kCbCounts, DataFormat::UInt32, line_size * round_up(s.num_experts * 4, kAlignment)),
        scratch_cb(cores, kCbList, DataFormat::UInt32, assignments * kListEntryBytes),
        scratch_cb(cores, kCbMapping, DataFormat::UInt32, mesh.num_devices() * s.mapping_element_bytes),
        scratch_cb(cores, kCbTables, DataFormat::UInt32, kPlanTables * s.num_experts * 4),
        scratch_cb(cores, kCbIdxImage, DataFormat::UInt32, s.capacity * 4),
        scratch_cb(cores, kCbWeightImage, DataFormat::Float16_b, s.capacity * 2),
        scratch_cb(cores, kCbStage, DataFormat::UInt32, kStageBytes),
        scratch_cb(cores, kCbHeaders, DataFormat::UInt32, kHeaderSlotBytes),
    };
    uint32_t l1_bytes = 0;
    for (const auto& cb : program.cbs) l1_bytes += cb.total_size;
    check_l1_budget(kOpName, l1_bytes, "capacity=" + std::to_string(s.capacity) + ", T=" +
                                           std::to_string(s.tokens()) + ", K=" + std::to_string(s.top_k) +
                                           ", H=" + std::to_string(s.hidden) + ", D=" + std::to_string(line_size));
    for (uint32_t id : {kSemInit, kSemCounts, kSemLists, kSemPayload}) {
        program.semaphores.push_back(SemaphoreDescriptor{id, CoreType::WORKER, cores, 0});
    }

    KernelDescriptor kernel;
    kernel.kernel_source = kernels_root + "/all_to_all_dispatch_dense/dataflow/dispatch_dense.cpp";
    kernel.core_ranges = cores;
    for (uint32_t i = 0; i < kNumIo; ++i) append_runtime_page_size_accessor_args(io[i], kernel.compile_time_args);
    kernel.named_compile_time_args = {
        {"cb_row", kCbRow},         {"cb_own", kCbOwn},           {"cb_counts", kCbCounts},
        {"cb_list", kCbList},       {"cb_mapping", kCbMapping},   {"cb_tables", kCbTables},
        {"cb_idx_image", kCbIdxImage}, {"cb_weight_image", kCbWeightImage}, {"cb_stage", kCbStage},
        {"cb_headers", kCbHeaders}, {"sem_init", kSemInit},       {"sem_counts", kSemCounts},
        {"sem_lists", kSemLists},   {"sem_payload", kSemPayload},
    };
    kernel.config = WriterConfigDescriptor{};

    CachedProgram cached;
    std::vector<uint32_t> args;
    for (uint32_t i = 0; i < kNumIo; ++i) {
        cached.address_slots.push_back({0, 0, static_cast<uint32_t>(args.size()), i});
        args.push_back(io[i].address);
    }
    args.insert(args.end(), {s.tokens(), s.top_k, s.hidden, s.num_experts, s.local_experts, mesh.num_devices(),
                             line_size, line.position, s.capacity, attrs.max_packet_payload,
                             s.mapping_element_bytes, attrs.num_links});
    args.insert(args.end(), line.device_indices.begin(), line.device_indices.end());
    append_route_args(mesh, line, fabric_node_ids, args);
    kernel.runtime_args.emplace_back(core, std::move(args));
    program.kernels.push_back(std::move(kernel));
    cached.program = std::move(program);
    return cached;
}

}  // namespace ttnn_moe::ops::dispatch_dense
