// Program of moe_gate: token row tiles split over the first min(ceil(T/32), cores) cores. On each
// core the reader brings a row tile of x (kept while it is scored) and streams the gate weight; the
// compute kernel makes the row tile's E/32 score tiles (matmul with fp32 accumulation, SFPU
// sigmoid); the writer ranks each token's scores and writes its K indices and weights.
// Shapes and addresses are runtime args; compile-time args are the CB ids and the tile tensors'
// accessor args, so one build of each kernel serves every T, H, E and routing.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "ops/common/tensor_checks.hpp"
#include "ops/moe_gate/moe_gate_device_operation.hpp"
#include "ops/moe_gate/moe_gate_shared.hpp"
#include "program/tensor_accessor_args.hpp"

namespace ttnn_moe::ops::moe_gate {

using namespace program;
using namespace moe_gate_shared;

CachedProgram create_program(const Attributes& attributes, const std::vector<TensorArg>& io) {
    if (io.size() != kNumIo) {
        throw std::invalid_argument(kOpName + ": io tensors are the 3 inputs then the 3 outputs, got " +
                                    std::to_string(io.size()));
    }
    const Dims d = validate(attributes, {io.begin(), io.begin() + kTopkIndices});
    const uint32_t num_cores = std::min(d.row_tiles, attributes.grid.x * attributes.grid.y);
    const auto selection = first_cores(attributes.grid, num_cores);
    const auto& cores = selection.ranges;

    CachedProgram cached;
    auto& program = cached.program;
    for (const auto& cb : circular_buffers(d, attributes)) {
        program.cbs.push_back(CBDescriptor{
            cb.page_size * cb.pages, cores, {CBFormatDescriptor{cb.index, cb.format, cb.page_size, std::nullopt}}});
    }
    const std::string root = attributes.kernels_dir + "/moe_gate/";

    KernelDescriptor reader;
    reader.kernel_source = root + "dataflow/reader_gate_inputs.cpp";
    reader.core_ranges = cores;
    append_tensor_accessor_args(io[kX], reader.compile_time_args);
    append_tensor_accessor_args(io[kGateWeight], reader.compile_time_args);
    reader.named_compile_time_args = {{named_arg::kCbX, kCbX}, {named_arg::kCbW, kCbW}};
    reader.config = ReaderConfigDescriptor{};

    KernelDescriptor compute;
    compute.kernel_source = root + "compute/gate_scores.cpp";
    compute.core_ranges = cores;
    compute.named_compile_time_args = {
        {named_arg::kCbX, kCbX}, {named_arg::kCbW, kCbW}, {named_arg::kCbScores, kCbScores}};
    ComputeConfigDescriptor compute_config;
    compute_config.math_fidelity = MathFidelity::HiFi4;
    compute_config.fp32_dest_acc_en = true;  // the scores accumulate in fp32
    compute_config.math_approx_mode = false;
    compute.config = compute_config;

    KernelDescriptor writer;
    writer.kernel_source = root + "dataflow/writer_topk.cpp";
    writer.core_ranges = cores;
    for (uint32_t i : {kBias, kTopkIndices, kTopkWeights, kGateStatus}) {
        append_runtime_page_size_accessor_args(io[i], writer.compile_time_args);
    }
    writer.named_compile_time_args = {{named_arg::kCbScores, kCbScores},   {named_arg::kCbBias, kCbBias},
                                      {named_arg::kCbBiased, kCbBiased},   {named_arg::kCbIndices, kCbIndices},
                                      {named_arg::kCbWeights, kCbWeights}, {named_arg::kCbStatus, kCbStatus}};
    writer.config = WriterConfigDescriptor{};

    const uint32_t reader_kernel = 0, writer_kernel = 2;  // program.kernels order: reader, compute, writer
    for (uint32_t c = 0; c < num_cores; ++c) {
        const uint32_t first = split_begin(d.row_tiles, num_cores, c);
        const uint32_t count = split_begin(d.row_tiles, num_cores, c + 1) - first;

        std::vector<uint32_t> r(reader_arg::kCount);
        r[reader_arg::kXAddr] = io[kX].address;
        r[reader_arg::kGateWeightAddr] = io[kGateWeight].address;
        r[reader_arg::kFirstRowTile] = first;
        r[reader_arg::kNumRowTiles] = count;
        r[reader_arg::kInnerTiles] = d.inner_tiles;
        r[reader_arg::kExpertTiles] = d.expert_tiles;
        r[reader_arg::kInnerBlock] = d.inner_block;
        reader.runtime_args.emplace_back(selection.cores[c], std::move(r));

        std::vector<uint32_t> m(compute_arg::kCount);
        m[compute_arg::kNumRowTiles] = count;
        m[compute_arg::kInnerTiles] = d.inner_tiles;
        m[compute_arg::kExpertTiles] = d.expert_tiles;
        m[compute_arg::kInnerBlock] = d.inner_block;
        compute.runtime_args.emplace_back(selection.cores[c], std::move(m));

        std::vector<uint32_t> w(writer_arg::kCount);
        w[writer_arg::kBiasAddr] = io[kBias].address;
        w[writer_arg::kIndicesAddr] = io[kTopkIndices].address;
        w[writer_arg::kWeightsAddr] = io[kTopkWeights].address;
        w[writer_arg::kBiasPageBytes] = aligned_page_size(io[kBias]);
        w[writer_arg::kIndicesPageBytes] = aligned_page_size(io[kTopkIndices]);
        w[writer_arg::kWeightsPageBytes] = aligned_page_size(io[kTopkWeights]);
        w[writer_arg::kFirstRowTile] = first;
        w[writer_arg::kNumRowTiles] = count;
        w[writer_arg::kNumTokens] = d.num_tokens;
        w[writer_arg::kNumExperts] = d.num_experts;
        w[writer_arg::kNumGroups] = attributes.n_group;
        w[writer_arg::kTopkGroups] = attributes.topk_group;
        w[writer_arg::kTopK] = attributes.top_k;
        w[writer_arg::kNormalize] = attributes.norm_topk_prob ? 1u : 0u;
        w[writer_arg::kScalingBits] = attributes.routed_scaling_factor_bits;
        w[writer_arg::kStatusAddr] = io[kGateStatus].address;
        w[writer_arg::kStatusPageBytes] = aligned_page_size(io[kGateStatus]);
        writer.runtime_args.emplace_back(selection.cores[c], std::move(w));

        cached.address_slots.push_back({reader_kernel, c, reader_arg::kXAddr, kX});
        cached.address_slots.push_back({reader_kernel, c, reader_arg::kGateWeightAddr, kGateWeight});
        cached.address_slots.push_back({writer_kernel, c, writer_arg::kBiasAddr, kBias});
        cached.address_slots.push_back({writer_kernel, c, writer_arg::kIndicesAddr, kTopkIndices});
        cached.address_slots.push_back({writer_kernel, c, writer_arg::kWeightsAddr, kTopkWeights});
        cached.address_slots.push_back({writer_kernel, c, writer_arg::kStatusAddr, kGateStatus});
    }
    program.kernels = {std::move(reader), std::move(compute), std::move(writer)};
    return cached;
}

}  // namespace ttnn_moe::ops::moe_gate
