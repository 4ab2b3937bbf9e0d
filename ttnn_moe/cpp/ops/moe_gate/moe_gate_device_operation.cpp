#include "ops/moe_gate/moe_gate_device_operation.hpp"

#include <algorithm>
#include <stdexcept>

#include "ops/common/tensor_checks.hpp"
#include "ops/moe_gate/moe_gate_shared.hpp"

namespace ttnn_moe::ops::moe_gate {

using program::DataFormat;
using program::Layout;
using program::TensorArg;
using namespace moe_gate_shared;

namespace {

// Gate-weight tiles per CB push: a block's reads wait for one barrier, so its NOC latency and command
// issue are paid once per block; blocks of 32 tiles (64 KiB bf16) keep the stream near the NOC port's
// rate. Smaller blocks where the L1 budget leaves no room (a large H: x's row tile is resident).
constexpr uint32_t kMaxInnerBlock = 32;
// Staging rows are this far apart in L1: a multiple of every DRAM alignment (Wormhole 32 B,
// Blackhole 64 B), so a row written to its DRAM page starts at an address the NOC accepts.
constexpr uint32_t kStagingAlignment = 64;

[[noreturn]] void fail(const std::string& message) {
    throw std::invalid_argument(kOpName + ": " + message);
}

void require_tile_input(const TensorArg& t, const char* name, std::initializer_list<DataFormat> dtypes) {
    if (t.layout != Layout::TILE) fail(std::string(name) + " must be in TILE layout, got ROW_MAJOR");
    bool ok = false;
    std::string allowed;
    for (auto d : dtypes) {
        ok = ok || t.dtype == d;
        allowed += (allowed.empty() ? "" : " or ") + format_name(d);
    }
    if (!ok) fail(std::string(name) + " must be " + allowed + ", got " + format_name(t.dtype));
    require_dram(kOpName, name, t);
}

void require_tile_multiple(uint32_t value, const std::string& what) {
    if (value == 0 || value % kTileRows != 0) {
        fail(what + " must be a positive multiple of " + std::to_string(kTileRows) + ", got " + std::to_string(value));
    }
}

uint32_t largest_divisor_up_to(uint32_t n, uint32_t limit) {
    for (uint32_t d = limit; d > 1; --d) {
        if (n % d == 0) return d;
    }
    return 1;
}

uint32_t l1_bytes(const std::vector<CircularBuffer>& cbs) {
    uint32_t bytes = 0;
    for (const auto& cb : cbs) bytes += cb.page_size * cb.pages;
    return bytes;
}

void validate_routing(const Attributes& a, uint32_t num_experts) {
    const std::string groups = "n_group=" + std::to_string(a.n_group);
    if (a.n_group == 0 || a.n_group > kMaxGroups) {
        fail("n_group must be in [1, " + std::to_string(kMaxGroups) + "], got " + std::to_string(a.n_group));
    }
    if (num_experts % a.n_group != 0) {
        fail("E=" + std::to_string(num_experts) + " experts do not split into " + groups + " equal groups");
    }
    const uint32_t per_group = num_experts / a.n_group;
    if (per_group < 2) {
        fail("a group's score sums its two best experts, but E=" + std::to_string(num_experts) + " with " + groups +
             " leaves " + std::to_string(per_group) + " per group");
    }
    if (a.topk_group == 0 || a.topk_group > a.n_group) {
        fail("topk_group must be in [1, n_group=" + std::to_string(a.n_group) + "], got " +
             std::to_string(a.topk_group));
    }
    const uint32_t candidates = a.topk_group * per_group;
    const uint32_t max_k = candidates < kMaxTopK ? candidates : kMaxTopK;
    if (a.top_k == 0 || a.top_k > max_k) {
        fail("top_k must be in [1, " + std::to_string(max_k) + "] (" + std::to_string(candidates) +
             " experts in the kept groups, at most " + std::to_string(kMaxTopK) + "), got " + std::to_string(a.top_k));
    }
    if (a.indices_format != DataFormat::UInt32 && a.indices_format != DataFormat::UInt16) {
        fail("indices_dtype must be uint32 or uint16, got " + format_name(a.indices_format));
    }
    if (a.indices_format == DataFormat::UInt16 && num_experts > kMaxUInt16Experts) {
        fail("uint16 topk_indices hold expert ids below " + std::to_string(kMaxUInt16Experts) +
             ", but E=" + std::to_string(num_experts));
    }
}

// The resident split: grid columns take the expert tiles (each at most kMaxResidentExpertTiles, whose
// score tiles DST holds over the whole of H), grid rows the row tiles. It runs for more than one row tile
// when its cb_w (a column's weight, resident) fits L1 with some block size; fills d's split fields.
bool choose_resident_split(Dims& d, const Attributes& a) {
    if (d.row_tiles < 2) return false;
    const uint32_t cols = std::min(d.expert_tiles, a.grid.x);
    const uint32_t column_tiles = (d.expert_tiles + cols - 1) / cols;
    if (column_tiles > kMaxResidentExpertTiles) return false;
    Dims split = d;
    split.split_cols = cols;
    split.split_rows = std::min(d.row_tiles, a.grid.y);
    split.column_expert_tiles = column_tiles;
    for (uint32_t block = largest_divisor_up_to(d.inner_tiles, kMaxInnerBlock);;
         block = largest_divisor_up_to(d.inner_tiles, block - 1)) {
        split.inner_block = block;
        if (l1_bytes(circular_buffers(split, a)) <= kL1BudgetBytes) {
            d = split;
            return true;
        }
        if (block == 1) return false;
    }
}

}  // namespace

Dims validate(const Attributes& attributes, const std::vector<TensorArg>& inputs) {
    if (inputs.size() != 3) {
        fail("expects 3 inputs (x, gate_weight, e_score_correction_bias), got " + std::to_string(inputs.size()));
    }
    const TensorArg& x = inputs[kX];
    const TensorArg& w = inputs[kGateWeight];
    const TensorArg& bias = inputs[kBias];
    const auto x_shape = squeeze_to_rank(kOpName, "x", x, 2);
    require_tile_input(x, "x", {DataFormat::Float16_b});
    const auto w_shape = squeeze_to_rank(kOpName, "gate_weight", w, 2);
    require_tile_input(w, "gate_weight", {DataFormat::Float16_b, DataFormat::Float32});
    const auto bias_shape = row_major_input(kOpName, "e_score_correction_bias", bias, 1, DataFormat::Float32);
    require_dram(kOpName, "e_score_correction_bias", bias);

    Dims d;
    d.num_tokens = x_shape[0];
    d.hidden = x_shape[1];
    d.num_experts = w_shape[0];
    if (d.num_tokens == 0) fail("x has no tokens: shape " + shape_str(x.shape));
    require_tile_multiple(d.hidden, "H (x.shape[-1])");
    if (w_shape[1] != d.hidden) {
        fail("gate_weight " + shape_str(w.shape) + " must be (E, H) with H=" + std::to_string(d.hidden) + " as in x " +
             shape_str(x.shape));
    }
    if (d.num_experts == 0) fail("gate_weight has no experts: shape " + shape_str(w.shape));
    if (bias_shape[0] != d.num_experts) {
        fail("e_score_correction_bias " + shape_str(bias.shape) + " must have E=" + std::to_string(d.num_experts) +
             " entries, one per row of gate_weight");
    }
    validate_routing(attributes, d.num_experts);
    if (attributes.grid.x == 0 || attributes.grid.y == 0) {
        fail("core grid must be at least 1x1, got " + std::to_string(attributes.grid.x) + "x" +
             std::to_string(attributes.grid.y));
    }
    d.row_tiles = (d.num_tokens + kTileRows - 1) / kTileRows;
    d.inner_tiles = d.hidden / kTileRows;
    d.expert_tiles = (d.num_experts + kTileRows - 1) / kTileRows;  // the last one padded past E
    d.weight_format = w.dtype;
    if (!choose_resident_split(d, attributes)) {
        // Teams: the largest block that fits; a block of 1 that does not is refused below.
        d.inner_block = largest_divisor_up_to(d.inner_tiles, kMaxInnerBlock);
        while (d.inner_block > 1 && l1_bytes(circular_buffers(d, attributes)) > kL1BudgetBytes) {
            d.inner_block = largest_divisor_up_to(d.inner_tiles, d.inner_block - 1);
        }
    }
    check_l1_budget(kOpName, l1_bytes(circular_buffers(d, attributes)),
                    "H=" + std::to_string(d.hidden) + " (a resident row tile of x: " + std::to_string(d.inner_tiles) +
                        " tiles), E=" + std::to_string(d.num_experts));
    return d;
}

std::vector<CircularBuffer> circular_buffers(const Dims& d, const Attributes& a) {
    using program::tile_size_bytes;
    const uint32_t bias_bytes = round_up(d.num_experts * 4, kStagingAlignment);
    // Teams: a row tile of x resident, the weight streamed in two blocks. Resident split: x streamed in
    // kXStreamRounds rounds of a block per grid column, the column's weight resident.
    const uint32_t x_pages = d.resident() ? kXStreamRounds * d.split_cols * d.inner_block : d.inner_tiles;
    const uint32_t w_pages = d.resident() ? d.column_expert_tiles * d.inner_tiles : 2 * d.inner_block;
    return {
        {kCbX, DataFormat::Float16_b, tile_size_bytes(DataFormat::Float16_b), x_pages},
        {kCbW, d.weight_format, tile_size_bytes(d.weight_format), w_pages},
        // Two row tiles of scores: the compute kernel fills one while the writer ranks the other.
        {kCbScores, DataFormat::Float32, tile_size_bytes(DataFormat::Float32), 2 * d.expert_tiles},
        {kCbBias, DataFormat::Float32, bias_bytes, 1},
        {kCbBiased, DataFormat::Float32, bias_bytes, 1},
        // 32 staged rows (at the output's page stride), then the row a token's uint32 ids are chosen
        // into when the output holds uint16
        {kCbIndices, DataFormat::UInt32, (kTileRows + 1) * round_up(a.top_k * 4, kStagingAlignment), 1},
        {kCbWeights, DataFormat::Float16_b, kTileRows * round_up(a.top_k * 2, kStagingAlignment), 1},
        {kCbStatus, DataFormat::UInt32, round_up(moe_gate_shared::kStatusWords * 4, kStagingAlignment), 1},
    };
}

std::vector<TensorArg> Operation::output_specs(const Attributes& attributes, const std::vector<TensorArg>& inputs) {
    const Dims d = validate(attributes, inputs);
    return {
        row_major_spec({1, d.num_tokens, attributes.top_k}, attributes.indices_format),
        row_major_spec({1, d.num_tokens, attributes.top_k}, DataFormat::Float16_b),
        row_major_spec({d.row_tiles, moe_gate_shared::kStatusWords}, DataFormat::UInt32),
    };
}

}  // namespace ttnn_moe::ops::moe_gate
