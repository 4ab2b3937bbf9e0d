#include "ops/moe_bmm/moe_bmm_device_operation.hpp"

#include <algorithm>
#include <stdexcept>

#include "ops/common/tensor_checks.hpp"
#include "ops/moe_bmm/moe_bmm_layout.hpp"
#include "ops/moe_bmm/moe_bmm_shared.hpp"

namespace ttnn_moe::ops::moe_bmm {

namespace {

using program::DataFormat;
using program::Layout;
using program::TensorArg;

constexpr uint32_t kTile = ttnn_moe::moe_bmm_shared::kTileRows;
// k tiles per block at most: a block is what the reader has in flight per read barrier and what
// the compute kernel accumulates between two spills of a partial sum.
constexpr uint32_t kMaxInnerBlock = 16;
// Row tiles of an expert computed together at most: prefill experts have a few, and each more
// costs two x blocks (2 x inner_block x 2 KB) of L1.
constexpr uint32_t kMaxRowBlock = 8;
// Output tiles of a segment at most: more than a core's share of an expert in the DeepSeek-V3
// layer (w2 at prefill: ~75 tiles of three row tiles), so each core reads an expert's x once;
// each costs weight_halves partial tiles of L1.
constexpr uint32_t kMaxOutputBlock = 128;

[[noreturn]] void fail(const std::string& message) {
    throw std::invalid_argument("moe_bmm: " + message);
}

// The shape with leading 1s dropped down to `rank` dims (ttnn's [1, 1, r, c] == [r, c]).
std::vector<uint32_t> squeezed(const TensorArg& t, size_t rank, const char* name, const char* expected) {
    std::vector<uint32_t> shape = t.shape;
    while (shape.size() > rank && shape.front() == 1) shape.erase(shape.begin());
    if (shape.size() != rank) fail(std::string(name) + " must be " + expected + ", got shape " + shape_str(t.shape));
    return shape;
}

const char* layout_name(Layout layout) {
    return layout == Layout::TILE ? "TILE" : "ROW_MAJOR";
}

// Any layout: x may be TILE or ROW_MAJOR.
void require(const TensorArg& t, const char* name, std::initializer_list<DataFormat> dtypes) {
    bool ok = false;
    std::string allowed;
    for (auto d : dtypes) {
        ok = ok || t.dtype == d;
        allowed += (allowed.empty() ? "" : " or ") + format_name(d);
    }
    if (!ok) fail(std::string(name) + " must be " + allowed + ", got " + format_name(t.dtype));
    if (!t.is_dram) fail(std::string(name) + " must be interleaved in DRAM (L1 tensors are not supported)");
}

void require(const TensorArg& t, const char* name, Layout layout, std::initializer_list<DataFormat> dtypes) {
    if (t.layout != layout) {
        fail(std::string(name) + " must be in " + layout_name(layout) + " layout, got " + layout_name(t.layout));
    }
    require(t, name, dtypes);
}

void require_tile_multiple(uint32_t value, const char* what) {
    if (value == 0 || value % kTile != 0) {
        fail(std::string(what) + " must be a positive multiple of " + std::to_string(kTile) + ", got " +
             std::to_string(value));
    }
}

uint32_t largest_divisor_up_to(uint32_t n, uint32_t limit) {
    for (uint32_t d = limit; d > 1; --d) {
        if (n % d == 0) return d;
    }
    return 1;
}

// The largest row block (up to kMaxRowBlock and the rows x has) and output block (up to
// kMaxOutputBlock and what a row block can hold) whose circular buffers fit the L1 budget;
// row_block 0 when even one row tile and one output tile do not.
Dims with_blocks(Dims dims, DataFormat weight_format) {
    const uint32_t most_rows = std::min(kMaxRowBlock, dims.row_tiles);
    for (uint32_t rows = most_rows; rows > 0; rows /= 2) {
        const uint32_t most_tiles = std::min(kMaxOutputBlock, rows * dims.col_tiles);
        for (uint32_t tiles = most_tiles; tiles >= rows; tiles /= 2) {
            dims.row_block = rows;
            dims.output_block = tiles;
            if (l1_bytes_per_core(dims, weight_format) <= kL1BudgetBytes) return dims;
        }
    }
    dims.row_block = dims.output_block = 0;
    return dims;
}

}  // namespace

Dims validate(const Attributes& attributes, const Inputs& inputs) {
    Dims dims;
    dims.grouped = inputs.expert_offsets.has_value();

    // TILE or ROW_MAJOR, bfloat16 either way: a row-major x is tilized as it is, with no conversion.
    require(inputs.x, "x", {DataFormat::Float16_b});
    dims.row_major_x = inputs.x.layout == Layout::ROW_MAJOR;
    dims.row_major_out = attributes.output_layout == Layout::ROW_MAJOR;
    require(inputs.w, "w", Layout::TILE, {DataFormat::Float16_b, DataFormat::Bfp8_b, DataFormat::Bfp4_b});
    require(inputs.num_routed_tokens, "num_routed_tokens", Layout::ROW_MAJOR, {DataFormat::UInt32});

    const bool swiglu = attributes.activation == Activation::Swiglu;
    const auto w = squeezed(inputs.w, 3, "w", swiglu ? "(E_l, Kd, 2N)" : "(E_l, Kd, N)");
    dims.num_experts = w[0];
    if (dims.num_experts == 0) fail("w has no experts: shape " + shape_str(inputs.w.shape));
    require_tile_multiple(w[1], "Kd (w.shape[-2])");
    dims.weight_halves = swiglu ? ttnn_moe::moe_bmm_shared::kSwigluHalves : ttnn_moe::moe_bmm_shared::kPlainHalves;
    require_tile_multiple(w[2], swiglu ? "2N (w.shape[-1], gate and up interleaved)" : "N (w.shape[-1])");
    if (w[2] % (dims.weight_halves * kTile) != 0) {
        fail(
            "with activation swiglu, w.shape[-1] = 2N holds a gate and an up tile column per output tile column, "
            "so it must be a multiple of 64, got " +
            std::to_string(w[2]));
    }
    dims.inner_tiles = w[1] / kTile;
    dims.col_tiles = w[2] / (dims.weight_halves * kTile);
    dims.inner_block = largest_divisor_up_to(dims.inner_tiles, kMaxInnerBlock);

    const auto x = dims.grouped ? squeezed(inputs.x, 2, "x", "(M, Kd) in grouped mode")
                                : squeezed(inputs.x, 3, "x", "(E_l, T, Kd) in padded mode");
    if (x.back() != w[1]) {
        fail("inner dims differ: x " + shape_str(inputs.x.shape) + " has Kd=" + std::to_string(x.back()) + ", w " +
             shape_str(inputs.w.shape) + " has Kd=" + std::to_string(w[1]));
    }
    if (!dims.grouped && x[0] != dims.num_experts) {
        fail("x has " + std::to_string(x[0]) + " experts (shape " + shape_str(inputs.x.shape) + "), w has " +
             std::to_string(dims.num_experts));
    }
    dims.rows = x[x.size() - 2];
    if (dims.rows == 0) fail("x has no rows: shape " + shape_str(inputs.x.shape));
    dims.row_tiles = (dims.rows + kTile - 1) / kTile;

    const auto counts = squeezed(inputs.num_routed_tokens, 2, "num_routed_tokens", "(E_l, 1)");
    if (counts[0] != dims.num_experts || counts[1] != 1) {
        fail("num_routed_tokens must be (E_l, 1) = (" + std::to_string(dims.num_experts) + ", 1), got " +
             shape_str(inputs.num_routed_tokens.shape));
    }
    if (dims.grouped) {
        const auto& offsets_arg = *inputs.expert_offsets;
        require(offsets_arg, "expert_offsets", Layout::ROW_MAJOR, {DataFormat::UInt32});
        const auto offsets = squeezed(offsets_arg, 2, "expert_offsets", "(E_l, 1)");
        if (offsets[0] != dims.num_experts || offsets[1] != 1) {
            fail("expert_offsets must be (E_l, 1) = (" + std::to_string(dims.num_experts) + ", 1), got " +
                 shape_str(offsets_arg.shape));
        }
    }

    if (inputs.addend) {
        if (swiglu) fail("an addend is supported with activation None only, not with swiglu");
        // TILE or ROW_MAJOR, bfloat16 either way: a row-major addend is tilized as it is, like x.
        require(*inputs.addend, "addend", {DataFormat::Float16_b});
        dims.row_major_addend = inputs.addend->layout == Layout::ROW_MAJOR;
        if (dims.row_major_addend && !dims.grouped && !dims.row_major_out) {
            // The writer copies the addend's tiles over a padded TILE output's inactive row tiles as they
            // are; rows would first need tilizing, which only the compute kernel does.
            fail(
                "a ROW_MAJOR addend needs grouped mode or a ROW_MAJOR output: a padded TILE output gets the "
                "addend's tiles copied over its inactive row tiles; pass a TILE addend or "
                "output_layout=ROW_MAJOR");
        }
        const uint32_t n = dims.col_tiles * kTile;
        const std::vector<uint32_t> out_shape =
            dims.grouped ? std::vector<uint32_t>{dims.rows, n} : std::vector<uint32_t>{dims.num_experts, dims.rows, n};
        const std::string like_output = "shaped like the output " + shape_str(out_shape);
        if (squeezed(*inputs.addend, out_shape.size(), "addend", like_output.c_str()) != out_shape) {
            fail("addend must be shaped like the output " + shape_str(out_shape) + ", got " +
                 shape_str(inputs.addend->shape));
        }
        dims.addend = true;
    }

    if (attributes.grid.x == 0 || attributes.grid.y == 0) {
        fail("core grid must be at least 1x1, got " + std::to_string(attributes.grid.x) + "x" +
             std::to_string(attributes.grid.y));
    }
    dims.fp32_partials = attributes.compute.fp32_dest_acc_en;
    const Dims blocked = with_blocks(dims, inputs.w.dtype);
    if (blocked.row_block == 0) {
        dims.row_block = dims.output_block = 1;
        fail("circular buffers need " + std::to_string(l1_bytes_per_core(dims, inputs.w.dtype)) +
             " B of L1 per core for E_l=" + std::to_string(dims.num_experts) + ", more than the " +
             std::to_string(kL1BudgetBytes) + " B budget (with one row tile and one output tile per segment)");
    }
    return blocked;
}

uint32_t l1_bytes_per_core(const Dims& dims, DataFormat weight_format) {
    uint32_t total = 0;
    for (const auto& cb : circular_buffers(dims, weight_format)) total += cb.pages * cb.page_size;
    return total;
}

OutputSpec output_spec(const Attributes& attributes, const Inputs& inputs) {
    const Dims dims = validate(attributes, inputs);
    const uint32_t n = dims.col_tiles * kTile;
    OutputSpec spec;
    spec.shape =
        dims.grouped ? std::vector<uint32_t>{dims.rows, n} : std::vector<uint32_t>{dims.num_experts, dims.rows, n};
    spec.layout = attributes.output_layout;
    return spec;
}

namespace {

// io starts with [x, w, num_routed_tokens] (padded) or [x, w, num_routed_tokens, expert_offsets],
// then the addend when the attributes say so.
Inputs inputs_from(const Attributes& attributes, const std::vector<TensorArg>& tensors, size_t count) {
    const size_t routing_count = attributes.with_addend ? count - 1 : count;
    if (count < 3 || (routing_count != 3 && routing_count != 4)) {
        fail("expected 3 inputs (x, w, num_routed_tokens) or 4 (+ expert_offsets)" +
             std::string(attributes.with_addend ? ", then the addend," : "") + " got " + std::to_string(count));
    }
    Inputs inputs{tensors[0], tensors[1], tensors[2], std::nullopt, std::nullopt};
    if (routing_count == 4) inputs.expert_offsets = tensors[3];
    if (attributes.with_addend) inputs.addend = tensors[routing_count];
    return inputs;
}

TensorArg output_arg(const OutputSpec& spec) {
    if (spec.layout == Layout::ROW_MAJOR) return row_major_spec(spec.shape, spec.dtype);
    TensorArg out;
    out.shape = spec.shape;
    out.dtype = spec.dtype;
    out.layout = spec.layout;
    out.page_size = program::tile_size_bytes(spec.dtype);
    const uint32_t rows = spec.shape[spec.shape.size() - 2], cols = spec.shape.back();
    uint32_t pages = ((rows + kTile - 1) / kTile) * ((cols + kTile - 1) / kTile);
    for (size_t i = 0; i + 2 < spec.shape.size(); ++i) pages *= spec.shape[i];
    out.num_pages = pages;
    return out;
}

}  // namespace

std::vector<TensorArg> Operation::output_specs(const Attributes& attributes, const std::vector<TensorArg>& inputs) {
    return {output_arg(output_spec(attributes, inputs_from(attributes, inputs, inputs.size()))),
            row_major_spec({1, moe_bmm_shared::kStatusWords}, DataFormat::UInt32)};
}

CachedProgram Operation::create_program(const Attributes& attributes, const std::vector<TensorArg>& io,
                                        const MeshContext& context, program::MeshCoordinate) {
    if (io.size() < 5) fail("io tensors are the inputs then the 2 outputs, got " + std::to_string(io.size()));
    return moe_bmm::create_program(attributes, inputs_from(attributes, io, io.size() - 2), io[io.size() - 2], io.back(),
                                   context.device);
}

}  // namespace ttnn_moe::ops::moe_bmm
