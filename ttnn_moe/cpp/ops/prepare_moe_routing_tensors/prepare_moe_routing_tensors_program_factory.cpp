// Program: local experts split over the first min(E_l, cores) cores; every core
// scans all (T, K) ids in order (linear work per core) and writes the table rows
// of its experts. Core 0 also counts invalid ids and overflowing assignments.
#include <algorithm>

#include "ops/common/tensor_checks.hpp"
#include "ops/prepare_moe_routing_tensors/prepare_moe_routing_tensors_device_operation.hpp"

namespace ttnn_moe::ops::prepare_routing {

using namespace program;

namespace {
// io tensor indices
enum Io : uint32_t { kIds, kWeights, kMapping, kCounts, kTokens, kTokenWeights, kIdxMap, kErrors, kNumIo };
// Circular buffers, used as L1 scratch by the single data-movement kernel.
enum Cb : uint8_t { kCbMapping, kCbIds, kCbWeights, kCbTokens, kCbTokenWeights, kCbCounters, kCbErrors, kCbStage };
constexpr uint32_t kChunkRows = 32;  // (t, k) rows fetched per DRAM batch

CBDescriptor scratch_cb(const CoreRangeSet& cores, uint8_t index, DataFormat format, uint32_t page, uint32_t pages) {
    return CBDescriptor{page * pages, cores, {CBFormatDescriptor{index, format, page, std::nullopt}}};
}
}  // namespace

CachedProgram create_program(const std::vector<TensorArg>& io, const std::string& kernels_root, CoreCoord grid,
                             const Attributes& attrs) {
    const auto [num_tokens, top_k] = validate({io.begin(), io.begin() + 3}, attrs);
    const uint32_t num_local = attrs.num_local_experts;
    const uint32_t num_cores = std::min(num_local, grid.x * grid.y);
    const uint32_t max_slots_per_core = (num_local + num_cores - 1) / num_cores;
    const auto selection = first_cores(grid, num_cores);
    const auto& cores = selection.ranges;

    const uint32_t mapping_page = round_up(attrs.num_experts * 4, kAlignment);
    const uint32_t ids_page = round_up(top_k * 4, kAlignment);
    const uint32_t weights_page = round_up(top_k * 2, kAlignment);
    const uint32_t tokens_page = round_up(num_tokens * 4, kAlignment);
    const uint32_t token_weights_page = round_up(num_tokens * 2, kAlignment);
    const uint32_t counters_page = round_up(num_local * 4, kAlignment);
    const uint32_t chunk_rows = std::min(kChunkRows, num_tokens);

    ProgramDescriptor program;
    program.cbs = {
        scratch_cb(cores, kCbMapping, DataFormat::Int32, mapping_page, 1),
        scratch_cb(cores, kCbIds, DataFormat::UInt32, ids_page, chunk_rows),
        scratch_cb(cores, kCbWeights, DataFormat::Float16_b, weights_page, chunk_rows),
        scratch_cb(cores, kCbTokens, DataFormat::UInt32, tokens_page, max_slots_per_core),
        scratch_cb(cores, kCbTokenWeights, DataFormat::Float16_b, token_weights_page, max_slots_per_core),
        scratch_cb(cores, kCbCounters, DataFormat::UInt32, counters_page, 1),
        scratch_cb(cores, kCbErrors, DataFormat::UInt32, kErrorWords * 4, 1),
        scratch_cb(cores, kCbStage, DataFormat::UInt32, kAlignment, 1),  // one aligned count for its DRAM write
    };
    uint32_t l1_bytes = 0;
    for (const auto& cb : program.cbs) l1_bytes += cb.total_size;
    check_l1_budget(kOpName, l1_bytes, "T=" + std::to_string(num_tokens) + ", K=" + std::to_string(top_k) +
                                           ", E=" + std::to_string(attrs.num_experts) + ", " +
                                           std::to_string(max_slots_per_core) + " local experts per core");

    KernelDescriptor kernel;
    kernel.kernel_source = kernels_root + "/prepare_moe_routing_tensors/dataflow/route_assignments.cpp";
    kernel.core_ranges = cores;
    for (uint32_t i = 0; i < kNumIo; ++i) append_runtime_page_size_accessor_args(io[i], kernel.compile_time_args);
    kernel.named_compile_time_args = {
        {"cb_mapping", kCbMapping}, {"cb_ids", kCbIds},           {"cb_weights", kCbWeights},
        {"cb_tokens", kCbTokens},   {"cb_token_weights", kCbTokenWeights}, {"cb_counters", kCbCounters},
        {"cb_errors", kCbErrors},   {"cb_stage", kCbStage},
    };
    kernel.config = ReaderConfigDescriptor{};

    CachedProgram cached;
    for (uint32_t c = 0; c < num_cores; ++c) {
        std::vector<uint32_t> args;
        for (uint32_t i = 0; i < kNumIo; ++i) {
            cached.address_slots.push_back({0, c, static_cast<uint32_t>(args.size()), i});
            args.push_back(io[i].address);
        }
        args.insert(args.end(), {num_tokens, top_k, attrs.num_experts, num_local, split_begin(num_local, num_cores, c),
                                 split_begin(num_local, num_cores, c + 1), c == 0 ? 1u : 0u, chunk_rows});
        kernel.runtime_args.emplace_back(selection.cores[c], std::move(args));
    }
    program.kernels.push_back(std::move(kernel));
    cached.program = std::move(program);
    return cached;
}

}  // namespace ttnn_moe::ops::prepare_routing
