// moe_bmm: per-expert matmul of the routed rows, output-stationary over the core grid.
//
//   padded:  x (E_l, T, Kd) bf16, w (E_l, Kd, N) TILE bf16|bfloat8_b|bfloat4_b,
//            num_routed_tokens (E_l, 1) uint32 ROW_MAJOR            -> out (E_l, T, N) bf16
//   grouped: x (M, Kd) bf16 packed by expert, expert_offsets (E_l, 1) uint32 ROW_MAJOR
//            (multiples of 32), num_routed_tokens, w (E_l, Kd, N)  -> out (M, N) bf16
// x is TILE or ROW_MAJOR (read for the counted rows only and tilized by the compute kernel); the
// output is TILE or ROW_MAJOR (attributes.output_layout: untilized by the packer, only the counted
// rows written).
//
// out[l, rows] = x[l, rows] @ w[l] for the first count_l rows of expert l; with the SwiGLU
// activation w is (E_l, Kd, 2N), its column tiles alternating gate and up, and
// out[l, rows] = silu(x @ gate) * (x @ up), (.., N). Counts and
// offsets stay on the device: the kernels read them and split the active output tiles
// (ceil(count_l / 32) * N/32 per expert) evenly over the cores themselves.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ops/common/device_operation.hpp"
#include "program/device_limits.hpp"
#include "program/program_descriptor.hpp"
#include "program/tensor_arg.hpp"

namespace ttnn_moe::ops::moe_bmm {

// The parts of a ttnn compute_kernel_config that change this op's compute kernel
// (packer_l1_acc does not apply: accumulation stays in DST).
struct ComputeConfig {
    program::MathFidelity math_fidelity = program::MathFidelity::HiFi4;
    bool fp32_dest_acc_en = false;
    bool math_approx_mode = false;
};

// What the op computes from the two products: plain x @ w, or SwiGLU over interleaved gate/up weights.
enum class Activation : uint32_t { None, Swiglu };

struct Attributes {
    ComputeConfig compute;
    Activation activation = Activation::None;
    bool with_addend = false;                               // the inputs end with an addend: out = x @ w + addend
    program::Layout output_layout = program::Layout::TILE;  // ROW_MAJOR: only counted rows are written
    // Filled from the mesh context:
    program::CoreCoord grid{8, 8};  // worker cores (x, y) the active tiles are split over
    std::string kernels_dir;        // root of the op kernels (<op>/{dataflow,compute}/...)
    auto fields() const {
        return std::tie(compute.math_fidelity, compute.fp32_dest_acc_en, compute.math_approx_mode, activation,
                        with_addend, output_layout, grid.x, grid.y, kernels_dir);
    }
};

struct Inputs {
    program::TensorArg x;
    program::TensorArg w;
    program::TensorArg num_routed_tokens;
    std::optional<program::TensorArg> expert_offsets;  // present: grouped mode
    std::optional<program::TensorArg> addend;          // present: out = x @ w + addend
};

// Sizes of a validated problem, in tiles where the name says so.
struct Dims {
    bool grouped = false;
    uint32_t num_experts = 0;       // E_l
    uint32_t rows = 0;              // padded: T; grouped: M
    uint32_t row_tiles = 0;         // ceil(rows / 32): per expert (padded) or in total (grouped)
    uint32_t inner_tiles = 0;       // Kt = Kd / 32
    uint32_t col_tiles = 0;         // Nt = N / 32 (of the output)
    uint32_t weight_halves = 1;     // weight column tiles per output column tile: 1, or 2 (SwiGLU gate, up)
    bool addend = false;            // each output tile starts from the addend's tile instead of 0
    bool row_major_addend = false;  // the addend's pages are rows: read as strips, tilized by the compute kernel
    bool row_major_x = false;       // x's pages are rows: read as row strips, tilized by the compute kernel
    bool row_major_out = false;     // the output's pages are rows: untilized, only counted rows written
    uint32_t inner_block = 0;       // k tiles per block: the largest divisor of Kt up to 16
    // A core computes its share in segments: Mb' <= row_block row tiles of one expert times up to
    // output_block / Mb' of its columns, accumulated over Kt in blocks of inner_block tiles. Each
    // x tile of a segment is read once for all its columns, each weight tile once for all its rows;
    // between blocks the segment's partial sums wait in cb_partial (output_block x weight_halves
    // tiles). The largest sizes up to 8 row tiles and 128 output tiles whose circular buffers fit.
    uint32_t row_block = 0;
    uint32_t output_block = 0;
    bool fp32_partials = false;  // partial sums kept as fp32 (fp32_dest_acc_en), else bfloat16 like DST
};

struct OutputSpec {
    std::vector<uint32_t> shape;  // padded (E_l, T, N); grouped (M, N)
    program::DataFormat dtype = program::DataFormat::Float16_b;
    program::Layout layout = program::Layout::TILE;
};

// Checks ranks, shapes, dtypes, layouts, alignment and the L1 budget; throws
// std::invalid_argument naming the offending value. Chooses the largest row and output
// blocks whose circular buffers fit the L1 budget; raises when even the smallest do not.
Dims validate(const Attributes& attributes, const Inputs& inputs);
OutputSpec output_spec(const Attributes& attributes, const Inputs& inputs);

// Bytes of L1 each core needs for the op's circular buffers.
uint32_t l1_bytes_per_core(const Dims& dims, program::DataFormat weight_format);

// The program for `output` (allocated from output_spec) and the (1, kStatusWords) bmm_status
// record, built on a miss of the op's program cache; io tensor order: x, w, num_routed_tokens,
// [expert_offsets,] [addend,] output, bmm_status. The reader multicasts x blocks to the cores
// sharing them, addressed by the NOC coordinates of `device`'s worker grid.
CachedProgram create_program(const Attributes& attributes, const Inputs& inputs, const program::TensorArg& output,
                             const program::TensorArg& status, const program::DeviceLimits& device);

// The device operation (device_operation.hpp): one program everywhere; inputs are
// [x, w, num_routed_tokens] (padded) or [x, w, num_routed_tokens, expert_offsets] (grouped), then the
// addend when attributes.with_addend.
struct Operation {
    static constexpr const char* name = "moe_bmm";
    static constexpr Placement placement = Placement::kSameProgramEverywhere;
    using Attributes = moe_bmm::Attributes;
    static Attributes with_context(Attributes attributes, const MeshContext& context) {
        return with_grid_and_kernels(attributes, context);
    }
    static std::vector<program::TensorArg> output_specs(const Attributes& attributes,
                                                        const std::vector<program::TensorArg>& inputs);
    static CachedProgram create_program(const Attributes& attributes, const std::vector<program::TensorArg>& io,
                                        const MeshContext& context, program::MeshCoordinate device);
};

}  // namespace ttnn_moe::ops::moe_bmm
