// Program of moe_gate: token row tiles split over teams of cores, each team a run of consecutive
// cores of a grid row sharing its row tiles' expert tiles. On each core the writer brings a row tile
// of x (kept while it is scored) over NOC 0 while the reader streams the gate weight of the core's
// expert tiles over NOC 1; the compute
// kernel makes their score tiles (matmul with fp32 accumulation, SFPU sigmoid); the team's other
// cores send theirs to its first core, whose writer ranks each token's scores and writes its K
// indices and weights (moe_gate_shared.hpp: the slot protocol).
// Shapes and addresses are runtime args; compile-time args are the CB and semaphore ids and the
// tensors' accessor args, so one build of each kernel serves every T, H, E, routing and split.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "ops/common/tensor_checks.hpp"
#include "ops/moe_gate/moe_gate_device_operation.hpp"
#include "ops/moe_gate/moe_gate_program.hpp"
#include "ops/moe_gate/moe_gate_shared.hpp"
#include "program/tensor_accessor_args.hpp"

namespace ttnn_moe::ops::moe_gate {

using namespace program;
using namespace moe_gate_shared;

namespace {

// Every core of a team reads the whole row tile of x besides its expert tiles' weights, so a team of
// s cores reads s copies of x (at DeepSeek-V3's shapes a row tile of x is as large as the weight of
// one expert tile). A Wormhole core's NOC port reads ~28 B/cycle and the chip's DRAM serves ~267
// B/cycle: about ten cores reading at once saturate DRAM. So a row tile's expert tiles are spread
// only while the teams of all row tiles together stay within kSpreadReaders cores; past that the
// extra copies of x cost more DRAM time than the spread saves. 16 rather than 10 since each core reads
// x and its weight tiles over its two NOCs at once; the value comes from this arithmetic, not a sweep.
constexpr uint32_t kSpreadReaders = 16;

// Teams of team_size consecutive cores of a grid row, teams_per_row to a row, row-major.
struct WorkSplit {
    uint32_t team_size = 1;
    uint32_t teams_per_row = 1;
    uint32_t teams = 1;
    CoreCoord core(uint32_t team, uint32_t member) const {
        return {(team % teams_per_row) * team_size + member, team / teams_per_row};
    }
};

WorkSplit work_split(const Dims& d, CoreCoord grid) {
    WorkSplit split;
    split.team_size = std::max(1u, std::min({d.expert_tiles, grid.x, kSpreadReaders / d.row_tiles}));
    // A team of several cores has one row tile (its ranker gathers one slot of scores): smaller teams
    // until the grid has room for one per row tile.
    while (split.team_size > 1 && (grid.x / split.team_size) * grid.y < d.row_tiles) --split.team_size;
    split.teams_per_row = grid.x / split.team_size;
    split.teams = std::min(d.row_tiles, split.teams_per_row * grid.y);
    return split;
}

// The cores of members [first_member, last_member] of every team; whole teams merge into a range per grid row.
CoreRangeSet member_ranges(const WorkSplit& split, uint32_t first_member, uint32_t last_member) {
    CoreRangeSet set;
    const bool whole_teams = first_member == 0 && last_member == split.team_size - 1;
    const uint32_t step = whole_teams ? split.teams_per_row : 1;
    for (uint32_t t = 0; t < split.teams; t += step) {
        const uint32_t last_team = whole_teams ? std::min(t + step, split.teams) - 1 : t;
        set.ranges.push_back({split.core(t, first_member), split.core(last_team, last_member)});
    }
    return set;
}

}  // namespace

void add_buffers(ProgramDescriptor& program, const Dims& d, const Attributes& attributes, const CoreRangeSet& cores) {
    for (const auto& cb : circular_buffers(d, attributes)) {
        program.cbs.push_back(CBDescriptor{
            cb.page_size * cb.pages, cores, {CBFormatDescriptor{cb.index, cb.format, cb.page_size, std::nullopt}}});
    }
    const uint32_t semaphores = d.resident() ? kSemScoresTaken + 1 : kSemScoresIn + 1;
    for (uint32_t id = 0; id < semaphores; ++id) {
        program.semaphores.push_back(SemaphoreDescriptor{id, CoreType::WORKER, cores, 0});
    }
}

std::vector<uint32_t> routing_args(const Attributes& attributes, const Dims& d, const std::vector<TensorArg>& io) {
    std::vector<uint32_t> w(routing_arg::kCount);
    w[routing_arg::kBiasAddr] = io[kBias].address;
    w[routing_arg::kIndicesAddr] = io[kTopkIndices].address;
    w[routing_arg::kWeightsAddr] = io[kTopkWeights].address;
    w[routing_arg::kBiasPageBytes] = aligned_page_size(io[kBias]);
    w[routing_arg::kIndicesPageBytes] = aligned_page_size(io[kTopkIndices]);
    w[routing_arg::kWeightsPageBytes] = aligned_page_size(io[kTopkWeights]);
    w[routing_arg::kStatusAddr] = io[kGateStatus].address;
    w[routing_arg::kStatusPageBytes] = aligned_page_size(io[kGateStatus]);
    w[routing_arg::kNumTokens] = d.num_tokens;
    w[routing_arg::kNumExperts] = d.num_experts;
    w[routing_arg::kNumGroups] = attributes.n_group;
    w[routing_arg::kTopkGroups] = attributes.topk_group;
    w[routing_arg::kTopK] = attributes.top_k;
    w[routing_arg::kNormalize] = attributes.norm_topk_prob ? 1u : 0u;
    w[routing_arg::kScalingBits] = attributes.routed_scaling_factor_bits;
    w[routing_arg::kIndexBytes] = attributes.indices_format == DataFormat::UInt16 ? 2 : 4;
    return w;
}

void append_topk_accessor_args(const std::vector<TensorArg>& io, std::vector<uint32_t>& compile_time_args) {
    for (uint32_t i : {kBias, kTopkIndices, kTopkWeights, kGateStatus}) {
        append_runtime_page_size_accessor_args(io[i], compile_time_args);
    }
}

KernelDescriptor scores_compute_kernel(const std::string& source, const CoreRangeSet& cores) {
    KernelDescriptor compute;
    compute.kernel_source = source;
    compute.core_ranges = cores;
    compute.named_compile_time_args = {
        {named_arg::kCbX, kCbX}, {named_arg::kCbW, kCbW}, {named_arg::kCbScores, kCbScores}};
    ComputeConfigDescriptor config;
    config.math_fidelity = MathFidelity::HiFi4;
    config.fp32_dest_acc_en = true;
    config.math_approx_mode = false;
    compute.config = config;
    return compute;
}

void add_routing_address_slots(CachedProgram& cached, uint32_t kernel, uint32_t core_index, uint32_t routing_base) {
    cached.address_slots.push_back({kernel, core_index, routing_base + routing_arg::kBiasAddr, kBias});
    cached.address_slots.push_back({kernel, core_index, routing_base + routing_arg::kIndicesAddr, kTopkIndices});
    cached.address_slots.push_back({kernel, core_index, routing_base + routing_arg::kWeightsAddr, kTopkWeights});
    cached.address_slots.push_back({kernel, core_index, routing_base + routing_arg::kStatusAddr, kGateStatus});
}

CachedProgram create_program(const Attributes& attributes, const std::vector<TensorArg>& io,
                             const DeviceLimits& device) {
    if (io.size() != kNumIo) {
        throw std::invalid_argument(kOpName + ": io tensors are the 3 inputs then the 3 outputs, got " +
                                    std::to_string(io.size()));
    }
    const Dims d = validate(attributes, {io.begin(), io.begin() + kTopkIndices});
    if (d.resident()) return create_resident_program(attributes, d, io, device);
    const WorkSplit split = work_split(d, attributes.grid);
    const CoreRangeSet cores = member_ranges(split, 0, split.team_size - 1);

    CachedProgram cached;
    auto& program = cached.program;
    add_buffers(program, d, attributes, cores);
    const std::string root = attributes.kernels_dir + "/moe_gate/";

    KernelDescriptor reader;
    reader.kernel_source = root + "dataflow/reader_gate_inputs.cpp";
    reader.core_ranges = cores;
    append_tensor_accessor_args(io[kGateWeight], reader.compile_time_args);
    reader.named_compile_time_args = {{named_arg::kCbW, kCbW}};
    reader.config = ReaderConfigDescriptor{};

    KernelDescriptor compute = scores_compute_kernel(root + "compute/gate_scores.cpp", cores);

    KernelDescriptor writer;
    writer.kernel_source = root + "dataflow/writer_topk.cpp";
    writer.core_ranges = member_ranges(split, 0, 0);
    append_topk_accessor_args(io, writer.compile_time_args);
    append_tensor_accessor_args(io[kX], writer.compile_time_args);
    writer.named_compile_time_args = {
        {named_arg::kCbX, kCbX},           {named_arg::kCbScores, kCbScores},      {named_arg::kCbBias, kCbBias},
        {named_arg::kCbBiased, kCbBiased}, {named_arg::kCbIndices, kCbIndices},    {named_arg::kCbWeights, kCbWeights},
        {named_arg::kCbStatus, kCbStatus}, {named_arg::kSemScoresIn, kSemScoresIn}};
    writer.config = WriterConfigDescriptor{};

    KernelDescriptor sender;
    sender.kernel_source = root + "dataflow/writer_send_scores.cpp";
    if (split.team_size > 1) sender.core_ranges = member_ranges(split, 1, split.team_size - 1);
    append_tensor_accessor_args(io[kX], sender.compile_time_args);
    sender.named_compile_time_args = {
        {named_arg::kCbX, kCbX}, {named_arg::kCbScores, kCbScores}, {named_arg::kSemScoresIn, kSemScoresIn}};
    sender.config = WriterConfigDescriptor{};

    // program.kernels order: reader, compute, writer, sender
    const uint32_t reader_kernel = 0, writer_kernel = 2, sender_kernel = 3;
    uint32_t core_index = 0, sender_index = 0;
    for (uint32_t t = 0; t < split.teams; ++t) {
        const uint32_t first = split_begin(d.row_tiles, split.teams, t);  // one row tile when team_size > 1
        const uint32_t count = split_begin(d.row_tiles, split.teams, t + 1) - first;
        const CoreCoord ranker_noc = split.team_size > 1 ? device.noc_core(kOpName, split.core(t, 0)) : CoreCoord{0, 0};
        for (uint32_t m = 0; m < split.team_size; ++m, ++core_index) {
            const CoreCoord core = split.core(t, m);
            const uint32_t first_expert_tile = split_begin(d.expert_tiles, split.team_size, m);
            const uint32_t num_expert_tiles = split_begin(d.expert_tiles, split.team_size, m + 1) - first_expert_tile;

            std::vector<uint32_t> r(reader_arg::kCount);
            r[reader_arg::kGateWeightAddr] = io[kGateWeight].address;
            r[reader_arg::kNumRowTiles] = count;
            r[reader_arg::kInnerTiles] = d.inner_tiles;
            r[reader_arg::kFirstExpertTile] = first_expert_tile;
            r[reader_arg::kNumExpertTiles] = num_expert_tiles;
            r[reader_arg::kInnerBlock] = d.inner_block;
            reader.runtime_args.emplace_back(core, std::move(r));
            cached.address_slots.push_back({reader_kernel, core_index, reader_arg::kGateWeightAddr, kGateWeight});

            std::vector<uint32_t> c(compute_arg::kCount);
            c[compute_arg::kNumRowTiles] = count;
            c[compute_arg::kInnerTiles] = d.inner_tiles;
            c[compute_arg::kNumExpertTiles] = num_expert_tiles;
            c[compute_arg::kExpertTiles] = d.expert_tiles;
            c[compute_arg::kInnerBlock] = d.inner_block;
            compute.runtime_args.emplace_back(core, std::move(c));

            if (m > 0) {
                std::vector<uint32_t> s(sender_arg::kCount);
                s[sender_arg::kXAddr] = io[kX].address;
                s[sender_arg::kRowTile] = first;
                s[sender_arg::kInnerTiles] = d.inner_tiles;
                s[sender_arg::kInnerBlock] = d.inner_block;
                s[sender_arg::kRankerNocX] = ranker_noc.x;
                s[sender_arg::kRankerNocY] = ranker_noc.y;
                s[sender_arg::kFirstExpertTile] = first_expert_tile;
                s[sender_arg::kNumExpertTiles] = num_expert_tiles;
                s[sender_arg::kExpertTiles] = d.expert_tiles;
                sender.runtime_args.emplace_back(core, std::move(s));
                cached.address_slots.push_back({sender_kernel, sender_index++, sender_arg::kXAddr, kX});
            }
        }

        std::vector<uint32_t> w(writer_arg::kRouting);
        w[writer_arg::kXAddr] = io[kX].address;
        w[writer_arg::kInnerTiles] = d.inner_tiles;
        w[writer_arg::kInnerBlock] = d.inner_block;
        w[writer_arg::kFirstRowTile] = first;
        w[writer_arg::kNumRowTiles] = count;
        w[writer_arg::kNumSenders] = split.team_size - 1;
        const std::vector<uint32_t> routing = routing_args(attributes, d, io);
        w.insert(w.end(), routing.begin(), routing.end());
        writer.runtime_args.emplace_back(split.core(t, 0), std::move(w));
        cached.address_slots.push_back({writer_kernel, t, writer_arg::kXAddr, kX});
        add_routing_address_slots(cached, writer_kernel, t, writer_arg::kRouting);
    }
    program.kernels = {std::move(reader), std::move(compute), std::move(writer)};
    if (split.team_size > 1) program.kernels.push_back(std::move(sender));
    return cached;
}

}  // namespace ttnn_moe::ops::moe_gate
