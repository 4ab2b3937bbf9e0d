// Program of moe_gate's resident split (moe_gate_shared.hpp), for many row tiles: a grid of split_rows x
// split_cols cores, grid column j holding its expert tiles' gate weight in L1 for the whole op (read from
// DRAM once, by the column's first core, and multicast down the column), grid row i scoring its row
// tiles, whose x the row's cores read in turns, block by block, and multicast along the row. The row tiles of a grid row
// are ranked in turn by its columns.
#include <string>

#include "ops/common/tensor_checks.hpp"
#include "ops/moe_gate/moe_gate_program.hpp"
#include "ops/moe_gate/moe_gate_shared.hpp"
#include "program/tensor_accessor_args.hpp"

namespace ttnn_moe::ops::moe_gate {

using namespace program;
using namespace moe_gate_shared;

CachedProgram create_resident_program(const Attributes& attributes, const Dims& d, const std::vector<TensorArg>& io,
                                      const DeviceLimits& device) {
    const uint32_t rows = d.split_rows, cols = d.split_cols;
    const CoreRangeSet cores{{{{0, 0}, {cols - 1, rows - 1}}}};
    // One core needs no NOC coordinates (a target may not give them).
    const auto noc = [&](uint32_t x, uint32_t y) {
        return rows * cols > 1 ? device.noc_core(kOpName, {x, y}) : CoreCoord{0, 0};
    };

    CachedProgram cached;
    auto& program = cached.program;
    add_buffers(program, d, attributes, cores);
    const std::string root = attributes.kernels_dir + "/moe_gate/";

    KernelDescriptor reader;
    reader.kernel_source = root + "dataflow/reader_gate_resident.cpp";
    reader.core_ranges = cores;
    append_topk_accessor_args(io, reader.compile_time_args);
    append_tensor_accessor_args(io[kGateWeight], reader.compile_time_args);
    reader.named_compile_time_args = {{named_arg::kCbW, kCbW},
                                      {named_arg::kCbScores, kCbScores},
                                      {named_arg::kCbBias, kCbBias},
                                      {named_arg::kCbBiased, kCbBiased},
                                      {named_arg::kCbIndices, kCbIndices},
                                      {named_arg::kCbWeights, kCbWeights},
                                      {named_arg::kCbStatus, kCbStatus},
                                      {named_arg::kSemScoresIn, kSemScoresIn},
                                      {named_arg::kSemScoresTaken, kSemScoresTaken},
                                      {named_arg::kSemWeightBlocks, kSemWeightBlocks}};
    reader.config = ReaderConfigDescriptor{};

    KernelDescriptor compute = scores_compute_kernel(root + "compute/gate_scores_resident.cpp", cores);

    KernelDescriptor writer;
    writer.kernel_source = root + "dataflow/writer_gate_x_multicast.cpp";
    writer.core_ranges = cores;
    append_tensor_accessor_args(io[kX], writer.compile_time_args);
    writer.named_compile_time_args = {
        {named_arg::kCbX, kCbX}, {named_arg::kSemXReady, kSemXReady}, {named_arg::kSemXValid, kSemXValid}};
    writer.config = WriterConfigDescriptor{};

    // program.kernels order: reader, compute, writer; runtime args row-major over the cores
    const uint32_t reader_kernel = 0, writer_kernel = 2;
    const std::vector<uint32_t> routing = routing_args(attributes, d, io);
    uint32_t core_index = 0;
    for (uint32_t i = 0; i < rows; ++i) {
        const uint32_t first_row_tile = split_begin(d.row_tiles, rows, i);
        const uint32_t num_row_tiles = split_begin(d.row_tiles, rows, i + 1) - first_row_tile;
        std::vector<uint32_t> column_noc_xs;
        for (uint32_t c = 0; c < cols; ++c) column_noc_xs.push_back(noc(c, i).x);
        for (uint32_t j = 0; j < cols; ++j, ++core_index) {
            const CoreCoord core{j, i};
            const uint32_t first_expert_tile = split_begin(d.expert_tiles, cols, j);
            const uint32_t num_expert_tiles = split_begin(d.expert_tiles, cols, j + 1) - first_expert_tile;

            std::vector<uint32_t> r(resident_arg::kRouting);
            r[resident_arg::kGateWeightAddr] = io[kGateWeight].address;
            r[resident_arg::kInnerTiles] = d.inner_tiles;
            r[resident_arg::kInnerBlock] = d.inner_block;
            r[resident_arg::kFirstExpertTile] = first_expert_tile;
            r[resident_arg::kNumExpertTiles] = num_expert_tiles;
            r[resident_arg::kWeightReceivers] = i == 0 ? rows - 1 : 0;
            r[resident_arg::kIsWeightSender] = i == 0 ? 1 : 0;
            r[resident_arg::kColumnNocX] = noc(j, 0).x;
            r[resident_arg::kColumnStartNocY] = noc(j, rows > 1 ? 1 : 0).y;
            r[resident_arg::kColumnEndNocY] = noc(j, rows - 1).y;
            r[resident_arg::kFirstRowTile] = first_row_tile;
            r[resident_arg::kNumRowTiles] = num_row_tiles;
            r[resident_arg::kSplitCols] = cols;
            r[resident_arg::kSplitCol] = j;
            r[resident_arg::kRowNocY] = noc(0, i).y;
            r.insert(r.end(), routing.begin(), routing.end());
            r.insert(r.end(), column_noc_xs.begin(), column_noc_xs.end());
            reader.runtime_args.emplace_back(core, std::move(r));
            cached.address_slots.push_back({reader_kernel, core_index, resident_arg::kGateWeightAddr, kGateWeight});
            add_routing_address_slots(cached, reader_kernel, core_index, resident_arg::kRouting);

            std::vector<uint32_t> c(resident_compute_arg::kCount);
            c[resident_compute_arg::kNumRowTiles] = num_row_tiles;
            c[resident_compute_arg::kInnerTiles] = d.inner_tiles;
            c[resident_compute_arg::kInnerBlock] = d.inner_block;
            c[resident_compute_arg::kFirstExpertTile] = first_expert_tile;
            c[resident_compute_arg::kNumExpertTiles] = num_expert_tiles;
            c[resident_compute_arg::kExpertTiles] = d.expert_tiles;
            compute.runtime_args.emplace_back(core, std::move(c));

            std::vector<uint32_t> x(x_stream_arg::kColumnNocXs);
            x[x_stream_arg::kXAddr] = io[kX].address;
            x[x_stream_arg::kInnerTiles] = d.inner_tiles;
            x[x_stream_arg::kInnerBlock] = d.inner_block;
            x[x_stream_arg::kFirstRowTile] = first_row_tile;
            x[x_stream_arg::kNumRowTiles] = num_row_tiles;
            x[x_stream_arg::kSplitCols] = cols;
            x[x_stream_arg::kSplitCol] = j;
            x[x_stream_arg::kRowNocY] = noc(0, i).y;
            x.insert(x.end(), column_noc_xs.begin(), column_noc_xs.end());
            writer.runtime_args.emplace_back(core, std::move(x));
            cached.address_slots.push_back({writer_kernel, core_index, x_stream_arg::kXAddr, kX});
        }
    }
    program.kernels = {std::move(reader), std::move(compute), std::move(writer)};
    return cached;
}

}  // namespace ttnn_moe::ops::moe_gate
