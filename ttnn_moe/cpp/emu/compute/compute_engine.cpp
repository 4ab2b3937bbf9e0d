// The compute engine of one emulated core. Semantic decisions, each taken
// from the 0.81.1 compute API / LLK sources:
//
// - DST capacity: 8 tiles (half-sync, 16-bit DST), 4 (half-sync, fp32 DST),
//   16 / 8 in full-sync (dst_full_sync_en). Any index at or past it is an error.
// - Ownership is linear: acquire -> math -> commit -> wait -> pack -> release.
//   The three TRISCs run as one sequential context here, so a second acquire
//   before release (legal on hardware in half-sync, where math may run one
//   section ahead of the packer) is rejected rather than modelled.
// - tile_regs_acquire hands out a zeroed DST section (hardware clears a
//   section when the packer releases it), so matmul accumulation starts at 0.
// - Unpack converts the CB's format to fp32 exactly (Bfp8_b, Bfp4_b dequantized
//   exactly, fp32 kept at full precision: the srcA/srcB 19-bit path of real
//   hardware is not modelled). Math is fp32. Without fp32_dest_acc_en DST
//   holds bf16, so the touched DST tiles are rounded to bf16 (nearest even)
//   after every math op; a tile matmul is one op (hardware rounds within the
//   K=32 reduction as well; we round once per tile product).
// - matmul_tiles / matmul_block: in0 (cb_a) is the left operand A, in1 (cb_b)
//   the right operand B; `transpose` transposes each B tile. One matmul_block
//   call is one inner-dimension step, exactly as the LLK unpacker walks it:
//   A tile for output row r = ia + r*kt_dim, B tile for column c = ib + c,
//   DST tile = dst + r*ct_dim + c. Each 32x32x32 product counts as one tile matmul.
// - The FPU's element-wise ops, as Wormhole B0's ISA defines them (ELWADD / ELWSUB / ELWMUL) and the 0.81.1
//   LLK issues them (llk_math_eltwise_binary.h): add and sub overwrite DST with A op bcast(B), or add it to
//   DST when the binary init asked for acc_to_dest (the instruction's AddDst bit, any broadcast); a multiply
//   always adds its product to DST (ELWMUL is Dst += SrcA * SrcB; the LLK's standard path issues no ZEROACC
//   before it). DST reads zero where nothing was written since the acquire (the packer's ZEROACC of the
//   half it releases, and the MATH thread's ZEROACC of all of DST at start), so a multiply into a fresh DST
//   tile is A * B and kernels that multiply into a tile holding a value accumulate. Row broadcast uses B's row 0
//   for every row, Col uses B's column 0 for every column, Scalar B[0][0]
//   (BroadcastType::ROW / COL / SCALAR of bcast.h). The SFPU binary ops
//   (mul_binary_tile) combine two DST tiles into a third, which may be
//   either operand, rounded like any other math op.
// - Integer CBs (UInt32, Int32, UInt16) move raw bits: copy_tile and pack_tile
//   preserve them; any arithmetic on them, or mixing integer DST tiles with
//   float CBs, is an error. 32-bit integers need fp32_dest_acc_en (a 16-bit
//   DST cannot hold them on hardware, where ttnn enables it for such dtypes).
// - pack_tile rounds to the output CB's format. Without an explicit index it
//   writes the CB's next sequential back slot (llk_pack's internal tile
//   pointer, reset by cb_push_back); an explicit index (out-of-order pack)
//   does not move that pointer. With the packer's ReLU on (pack_relu_config
//   ZERO_RELU) every value with its sign bit set packs as +0. With L1
//   accumulation on (pack_reconfig_l1_acc) the packer adds the value to the
//   tile already in the CB (in fp32) and rounds the sum to the CB's format.
// - tilize_block / untilize_block manage DST themselves (they acquire and
//   release a section per tile in tilize.h / untilize.h), so they must be
//   called with DST free. Data passes through DST, so without
//   fp32_dest_acc_en it is rounded to bf16 on the way. tilize_block writes
//   its tiles out of order at back indices 0..n-1 (its output_tile_index
//   default); untilize_block packs sequentially and advances the pointer.
// - pack_untilize_dest packs DST tiles as row-major rows at the output CB's
//   write pointer (the kernel pushes them); it does not move the sequential
//   pack position. ReLU, L1 accumulation and integer tiles are not emulated.
#include "emu/compute/compute_engine.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <cstring>
#include <string>
#include <vector>

#include "emu/compute/topk_slab.hpp"
#include "emu/error.hpp"

namespace ttnn_moe::emu {

using numerics::TILE_DIM;
using numerics::TILE_ELEMENTS;
using program::DataFormat;

namespace {

uint32_t capacity_for(const program::ComputeConfigDescriptor& config) {
    const uint32_t half_sync = config.fp32_dest_acc_en ? 4 : 8;
    return config.dst_full_sync_en ? 2 * half_sync : half_sync;
}

std::string cb_name(uint32_t cb) {
    return "CB " + std::to_string(cb);
}

bool is_32bit_integer(DataFormat format) {
    return format == DataFormat::UInt32 || format == DataFormat::Int32;
}

}  // namespace

ComputeEngine::ComputeEngine(CbTileAccess& cbs, const program::ComputeConfigDescriptor& config)
    : cbs_(cbs),
      fp32_dest_(config.fp32_dest_acc_en),
      full_sync_(config.dst_full_sync_en),
      dst_capacity_(capacity_for(config)),
      worker_(MatmulWorker::for_this_thread()) {}

ComputeEngine::~ComputeEngine() {
    // The worker must not write into DST after it is gone; a failed job only matters to the run.
    try {
        settle();
    } catch (...) {
    }
}

void ComputeEngine::settle() {
    if (queued_jobs_.empty()) return;
    worker_->finish(queued_jobs_);
    queued_jobs_.clear();
}

// ---- DST ownership ----------------------------------------------------------

const char* ComputeEngine::phase_description(Phase phase) {
    switch (phase) {
        case Phase::Idle:
            return "free (not acquired)";
        case Phase::Math:
            return "acquired for math (between tile_regs_acquire and tile_regs_commit)";
        case Phase::Committed:
            return "committed, not yet taken by the packer (tile_regs_wait)";
        case Phase::Pack:
            return "held by the packer (between tile_regs_wait and tile_regs_release)";
    }
    return "?";
}

void ComputeEngine::require_phase(Phase want, const char* op, const char* rule) const {
    if (phase_ != want) throw EmuError(std::string(op) + ": " + rule + "; DST is " + phase_description(phase_));
}

void ComputeEngine::tile_regs_acquire() {
    require_phase(
        Phase::Idle, "tile_regs_acquire",
        "DST must be released (tile_regs_commit, tile_regs_wait, tile_regs_release) before it is acquired again");
    settle();
    for (uint32_t i = 0; i < DST_SLOTS; ++i) {
        if (slot_kind_[i] != SlotKind::Zero) {
            dst_[i].fill(0.0f);
            slot_kind_[i] = SlotKind::Zero;
        }
    }
    phase_ = Phase::Math;
}

void ComputeEngine::tile_regs_commit() {
    require_phase(Phase::Math, "tile_regs_commit", "needs a preceding tile_regs_acquire");
    phase_ = Phase::Committed;
}

void ComputeEngine::tile_regs_wait() {
    require_phase(Phase::Committed, "tile_regs_wait",
                  "needs a preceding tile_regs_commit (on hardware the packer would wait forever)");
    phase_ = Phase::Pack;
}

void ComputeEngine::tile_regs_release() {
    require_phase(Phase::Pack, "tile_regs_release", "needs a preceding tile_regs_wait");
    phase_ = Phase::Idle;
    pack_sfpu_targets_packer_half_ = false;
    if (!full_sync_) packer_half_ ^= 1;
}

// ---- SFPU through the LLK, and the PACK thread's hand-off ------------------------

void ComputeEngine::packer_wait_for_math() {
    require_phase(Phase::Committed, "TTI_SEMWAIT(MATH_PACK)",
                  "the packer waits for a DST half math committed (tile_regs_commit), else it would wait forever");
    phase_ = Phase::Pack;
}

uint32_t ComputeEngine::packer_dest_offset() const {
    return packer_half_ * DEST_HALF_ROWS;
}

void ComputeEngine::set_sfpu_dest_offset(uint32_t offset) {
    if (phase_ != Phase::Pack)
        throw EmuError(
            "TT_SETC16(DEST_TARGET_REG_CFG_MATH_Offset_ADDR32): only the PACK thread's write after it took DST "
            "(TTI_SEMWAIT on MATH_PACK) is modelled; DST is " +
            std::string(phase_description(phase_)));
    if (offset != packer_dest_offset())
        throw EmuError("TT_SETC16(DEST_TARGET_REG_CFG_MATH_Offset_ADDR32, " + std::to_string(offset) +
                       "): the packer holds the DST half at row " + std::to_string(packer_dest_offset()) +
                       "; pointing the PACK thread's SFPU elsewhere is not modelled");
    pack_sfpu_targets_packer_half_ = true;
}

float* ComputeEngine::sfpu_dest(const char* op) {
    if (phase_ == Phase::Pack && !pack_sfpu_targets_packer_half_)
        throw EmuError(std::string(op) +
                       ": SFPU work while the packer holds DST runs on the PACK thread, whose SFPU addresses the "
                       "packer's half only after TT_SETC16(DEST_TARGET_REG_CFG_MATH_Offset_ADDR32, "
                       "packer::get_packer_dest_offset())");
    if (phase_ != Phase::Math && phase_ != Phase::Pack)
        throw EmuError(std::string(op) + ": SFPU work needs DST acquired for math or held by the packer; DST is " +
                       phase_description(phase_));
    settle();
    return dst_[0].data();
}

void ComputeEngine::sfpu_done(uint32_t tiles_loaded, uint32_t tiles_stored) {
    for (uint32_t t = 0; t < DST_SLOTS; ++t) {
        if (tiles_loaded >> t & 1) require_not_integer_slot(t, "SFPU call");
        if (tiles_stored >> t & 1) slot_kind_[t] = SlotKind::Float;
    }
}

void ComputeEngine::zero_dest() {
    if (phase_ != Phase::Idle && phase_ != Phase::Math)
        throw EmuError(std::string("zeroacc: the MATH thread clears DST while the packer may hold it; DST is ") +
                       phase_description(phase_));
    settle();
    for (uint32_t i = 0; i < DST_SLOTS; ++i) {
        dst_[i].fill(0.0f);
        slot_kind_[i] = SlotKind::Zero;
    }
}

// ---- helpers -------------------------------------------------------------------

void ComputeEngine::check_dst_index(uint32_t dst, const char* op) const {
    if (dst >= dst_capacity_)
        throw EmuError(std::string(op) + ": DST index " + std::to_string(dst) + " is out of range: DST holds " +
                       std::to_string(dst_capacity_) + " tiles (" + (full_sync_ ? "full" : "half") + "-sync, " +
                       (fp32_dest_ ? "fp32_dest_acc_en" : "16-bit DST") + ")");
}

float* ComputeEngine::dst_slot(uint32_t dst, const char* op) {
    check_dst_index(dst, op);
    settle();
    return dst_[dst].data();
}

DataFormat ComputeEngine::tile_format(uint32_t cb, const char* op) {
    const DataFormat format = cbs_.format(cb);
    if (!numerics::is_supported_format(format))
        throw EmuError(std::string(op) + ": " + cb_name(cb) + " has data format " + numerics::format_name(format) +
                       ", which the emulator does not support");
    const uint32_t want = numerics::tile_bytes(format);
    const uint32_t have = cbs_.tile_size(cb);
    if (have != want)
        throw EmuError(std::string(op) + ": " + cb_name(cb) + " pages are " + std::to_string(have) + " bytes, not a " +
                       numerics::format_name(format) + " tile (" + std::to_string(want) + " bytes)");
    return format;
}

DataFormat ComputeEngine::float_tile_format(uint32_t cb, const char* op) {
    const DataFormat format = tile_format(cb, op);
    if (numerics::is_integer_format(format))
        throw EmuError(std::string(op) + ": " + cb_name(cb) + " holds " + numerics::format_name(format) +
                       " (integer) data; only copy_tile and pack_tile may move integer tiles");
    return format;
}

void ComputeEngine::require_integer_fits_dst(uint32_t cb, DataFormat format, const char* op) const {
    if (is_32bit_integer(format) && !fp32_dest_)
        throw EmuError(std::string(op) + ": " + cb_name(cb) + " holds 32-bit " + numerics::format_name(format) +
                       " data but DST is 16-bit; set fp32_dest_acc_en (hardware would lose the upper bits)");
}

void ComputeEngine::require_not_integer_slot(uint32_t dst, const char* op) const {
    if (slot_kind_[dst] == SlotKind::Integer)
        throw EmuError(std::string(op) + ": DST tile " + std::to_string(dst) +
                       " holds integer bits (copied from an integer CB); arithmetic on it is not emulated");
}

void ComputeEngine::finish_math(uint32_t dst) {
    slot_kind_[dst] = SlotKind::Float;
    if (!fp32_dest_) numerics::round_in_place(DataFormat::Float16_b, dst_[dst].data(), TILE_ELEMENTS);
}

void ComputeEngine::through_dst(float* tile) const {
    if (!fp32_dest_) numerics::round_in_place(DataFormat::Float16_b, tile, TILE_ELEMENTS);
}

const uint8_t* ComputeEngine::front_span(uint32_t cb, size_t bytes, const char* op) {
    const uint32_t page = cbs_.tile_size(cb);
    const size_t pages = (bytes + page - 1) / page;
    const uint8_t* first = cbs_.front_tile(cb, 0);
    for (size_t p = 1; p + 1 < pages; ++p) cbs_.front_tile(cb, static_cast<uint32_t>(p));  // each page is read
    if (pages > 1 && cbs_.front_tile(cb, static_cast<uint32_t>(pages - 1)) != first + (pages - 1) * page)
        throw EmuError(std::string(op) + ": the " + std::to_string(pages) + " pages read from " + cb_name(cb) +
                       " wrap around the end of its ring (the hardware unpacker reads them as one contiguous block)");
    return first;
}

uint8_t* ComputeEngine::back_span(uint32_t cb, uint32_t first_page, size_t bytes, const char* op) {
    const uint32_t page = cbs_.tile_size(cb);
    const size_t pages = (bytes + page - 1) / page;
    uint8_t* first = cbs_.back_tile(cb, first_page);
    for (size_t p = 1; p + 1 < pages; ++p) cbs_.back_tile(cb, static_cast<uint32_t>(first_page + p));  // written
    if (pages > 1 && cbs_.back_tile(cb, static_cast<uint32_t>(first_page + pages - 1)) != first + (pages - 1) * page)
        throw EmuError(std::string(op) + ": the " + std::to_string(pages) + " pages written to " + cb_name(cb) +
                       " wrap around the end of its ring (the hardware packer writes them as one contiguous block)");
    return first;
}

// ---- math ----------------------------------------------------------------------

void ComputeEngine::copy_tile(uint32_t cb, uint32_t tile_index, uint32_t dst) {
    require_phase(Phase::Math, "copy_tile", "math ops run between tile_regs_acquire and tile_regs_commit");
    float* out = dst_slot(dst, "copy_tile");
    const DataFormat format = tile_format(cb, "copy_tile");
    if (numerics::is_integer_format(format)) {
        require_integer_fits_dst(cb, format, "copy_tile");
        numerics::unpack_tile(format, cbs_.front_tile(cb, tile_index), out);
        slot_kind_[dst] = SlotKind::Integer;
        return;
    }
    numerics::unpack_tile(format, cbs_.front_tile(cb, tile_index), out);
    finish_math(dst);
}

void ComputeEngine::transpose_tile(uint32_t cb, uint32_t tile_index, uint32_t dst) {
    require_phase(Phase::Math, "transpose_tile", "math ops run between tile_regs_acquire and tile_regs_commit");
    float* out = dst_slot(dst, "transpose_tile");
    const DataFormat format = tile_format(cb, "transpose_tile");
    const bool integer = numerics::is_integer_format(format);
    if (integer) require_integer_fits_dst(cb, format, "transpose_tile");
    numerics::unpack_tile(format, cbs_.front_tile(cb, tile_index), scratch_.data());
    numerics::transpose_tile(scratch_.data(), out);
    if (integer) {
        slot_kind_[dst] = SlotKind::Integer;
        return;
    }
    finish_math(dst);
}

static_assert(sizeof(std::array<std::array<float, TILE_ELEMENTS>, ComputeEngine::DST_SLOTS>) ==
                  ComputeEngine::DST_SLOTS * TILE_ELEMENTS * sizeof(float),
              "a matmul job addresses a block of DST tiles as one array");

void ComputeEngine::multiply(const MatmulJobShape& shape, uint32_t dst, const uint8_t* const* a_tiles,
                             const uint8_t* const* b_tiles) {
    for (uint32_t i = 0; i < shape.rows * shape.cols; ++i) {
        require_not_integer_slot(dst + i, "matmul");
        slot_kind_[dst + i] = SlotKind::Float;
    }
    tile_matmuls_ += uint64_t(shape.rows) * shape.cols;
    if (worker_) {
        queued_jobs_.push_back(worker_->submit(shape, a_tiles, b_tiles));
        return;
    }
    run_matmul_job(shape, a_tiles, b_tiles, MatmulScratch::of_this_thread());
}

void ComputeEngine::matmul_tiles(uint32_t cb_a, uint32_t cb_b, uint32_t ia, uint32_t ib, uint32_t dst,
                                 bool transpose_b) {
    require_phase(Phase::Math, "matmul_tiles", "math ops run between tile_regs_acquire and tile_regs_commit");
    check_dst_index(dst, "matmul_tiles");
    MatmulJobShape shape = matmul_shape(cb_a, cb_b, dst, transpose_b, 1, 1, "matmul_tiles");
    const uint8_t* a_tile = cbs_.front_tile(cb_a, ia);
    const uint8_t* b_tile = cbs_.front_tile(cb_b, ib);
    multiply(shape, dst, &a_tile, &b_tile);
}

void ComputeEngine::matmul_block(uint32_t cb_a, uint32_t cb_b, uint32_t ia, uint32_t ib, uint32_t dst, bool transpose,
                                 uint32_t ct_dim, uint32_t rt_dim, uint32_t kt_dim) {
    require_phase(Phase::Math, "matmul_block", "math ops run between tile_regs_acquire and tile_regs_commit");
    if (ct_dim == 0 || rt_dim == 0)
        throw EmuError("matmul_block: ct_dim and rt_dim must be at least 1, got ct_dim=" + std::to_string(ct_dim) +
                       ", rt_dim=" + std::to_string(rt_dim));
    const uint64_t last = uint64_t(dst) + uint64_t(rt_dim) * ct_dim - 1;
    if (last >= dst_capacity_)
        throw EmuError("matmul_block: output block of " + std::to_string(rt_dim) + "x" + std::to_string(ct_dim) +
                       " tiles at DST " + std::to_string(dst) + " needs DST index " + std::to_string(last) +
                       ", past the " + std::to_string(dst_capacity_) + " tiles DST holds");
    MatmulJobShape shape = matmul_shape(cb_a, cb_b, dst, transpose, rt_dim, ct_dim, "matmul_block");
    // The B row of the block (ct_dim tiles) is unpacked once and reused for every A tile.
    std::array<const uint8_t*, MatmulScratch::kMaxBlockSide> a_tiles, b_tiles;
    for (uint32_t c = 0; c < ct_dim; ++c) b_tiles[c] = cbs_.front_tile(cb_b, ib + c);
    for (uint32_t r = 0; r < rt_dim; ++r) a_tiles[r] = cbs_.front_tile(cb_a, ia + r * kt_dim);
    multiply(shape, dst, a_tiles.data(), b_tiles.data());
}

MatmulJobShape ComputeEngine::matmul_shape(uint32_t cb_a, uint32_t cb_b, uint32_t dst, bool transpose_b, uint32_t rows,
                                           uint32_t cols, const char* op) {
    MatmulJobShape shape;
    shape.dst = dst_[dst].data();
    shape.rows = rows;
    shape.cols = cols;
    shape.format_a = float_tile_format(cb_a, op);
    shape.format_b = float_tile_format(cb_b, op);
    shape.tile_bytes_a = cbs_.tile_size(cb_a);
    shape.tile_bytes_b = cbs_.tile_size(cb_b);
    shape.transpose_b = transpose_b;
    shape.round_to_bf16 = !fp32_dest_;
    return shape;
}

void ComputeEngine::binary_tiles(numerics::BinaryOp op, numerics::Broadcast bcast, uint32_t cb_a, uint32_t cb_b,
                                 uint32_t ia, uint32_t ib, uint32_t dst, bool acc_to_dest) {
    require_phase(Phase::Math, "binary op", "math ops run between tile_regs_acquire and tile_regs_commit");
    float* out = dst_slot(dst, "binary op");
    const DataFormat format_a = float_tile_format(cb_a, "binary op");
    const DataFormat format_b = float_tile_format(cb_b, "binary op");
    numerics::unpack_tile(format_a, cbs_.front_tile(cb_a, ia), operand_a_.data());
    numerics::unpack_tile(format_b, broadcast_operand(format_b, bcast, cb_b, ib), operand_b_.data());
    // ELWMUL has no overwriting form: it always adds its product to DST.
    if (!acc_to_dest && op != numerics::BinaryOp::Mul) {
        numerics::binary_tile(op, bcast, operand_a_.data(), operand_b_.data(), out);
        finish_math(dst);
        return;
    }
    require_not_integer_slot(dst, op == numerics::BinaryOp::Mul ? "binary multiply (DST += A * B)"
                                                                : "binary op with acc_to_dest (DST += A op B)");
    numerics::binary_tile(op, bcast, operand_a_.data(), operand_b_.data(), scratch_.data());
    for (size_t i = 0; i < TILE_ELEMENTS; ++i) out[i] += scratch_[i];
    finish_math(dst);
}

void ComputeEngine::reduce_tile(ReduceDim dim, uint32_t cb_a, uint32_t cb_scaler, uint32_t ia, uint32_t is,
                                uint32_t dst) {
    require_phase(Phase::Math, "reduce_tile", "math ops run between tile_regs_acquire and tile_regs_commit");
    float* out = dst_slot(dst, "reduce_tile");
    require_not_integer_slot(dst, "reduce_tile");
    const DataFormat format_a = float_tile_format(cb_a, "reduce_tile");
    const DataFormat format_s = float_tile_format(cb_scaler, "reduce_tile");
    numerics::unpack_tile(format_a, cbs_.front_tile(cb_a, ia), operand_a_.data());
    numerics::unpack_tile(format_s, cbs_.front_tile(cb_scaler, is), operand_b_.data());
    const float* a = operand_a_.data();
    const float* w = operand_b_.data();  // row 0: the weight of each position along the reduced dim
    switch (dim) {
        case ReduceDim::Row:
            for (uint32_t r = 0; r < TILE_DIM; ++r) {
                float sum = 0.0f;
                for (uint32_t c = 0; c < TILE_DIM; ++c) sum += a[r * TILE_DIM + c] * w[c];
                out[r * TILE_DIM] += sum;
            }
            break;
        case ReduceDim::Col:
            for (uint32_t c = 0; c < TILE_DIM; ++c) {
                float sum = 0.0f;
                for (uint32_t r = 0; r < TILE_DIM; ++r) sum += a[r * TILE_DIM + c] * w[r];
                out[c] += sum;
            }
            break;
        case ReduceDim::Scalar: {
            float sum = 0.0f;
            for (uint32_t i = 0; i < TILE_ELEMENTS; ++i) sum += a[i];
            out[0] += sum * w[0];
            break;
        }
    }
    finish_math(dst);
}

void ComputeEngine::topk(TopkStage stage, uint32_t idst, int idir, int p0, int p1, int p2, int p3) {
    require_phase(Phase::Math, "topk", "math ops run between tile_regs_acquire and tile_regs_commit");
    for (uint32_t i = 0; i < 4; ++i) dst_slot(idst + i, "topk (a slab is DST idst .. idst+3)");
    for (uint32_t i = 0; i < 2; ++i) {
        if (slot_kind_[idst + i] == SlotKind::Integer)
            throw EmuError("topk: value tile DST " + std::to_string(idst + i) + " holds integer bits");
        if (slot_kind_[idst + 2 + i] == SlotKind::Float)
            throw EmuError("topk: index tile DST " + std::to_string(idst + 2 + i) +
                           " holds float values; the indices come from an integer (UInt16) CB");
    }
    // Index tiles hold raw bit patterns in the float storage: moved as bits, never as floats.
    std::array<std::array<uint32_t, TILE_ELEMENTS>, 2> bits{};
    for (uint32_t i = 0; i < 2; ++i) std::memcpy(bits[i].data(), dst_[idst + 2 + i].data(), sizeof(bits[i]));
    const topk::Slab slab{{dst_[idst].data(), dst_[idst + 1].data()}, {bits[0].data(), bits[1].data()}};
    try {
        switch (stage) {
            case TopkStage::LocalSort:
                topk::local_sort(slab, idir, p0, p1);
                break;
            case TopkStage::Merge:
                topk::merge(slab, idir, p0, p1);
                break;
            case TopkStage::Rebuild:
                topk::rebuild(slab, idir, p0, p1, p2, p3 != 0);
                break;
        }
    } catch (const std::invalid_argument& e) {
        throw EmuError(e.what());
    }
    for (uint32_t i = 0; i < 2; ++i) {
        std::memcpy(dst_[idst + 2 + i].data(), bits[i].data(), sizeof(bits[i]));
        slot_kind_[idst + i] = SlotKind::Float;
        slot_kind_[idst + 2 + i] = SlotKind::Integer;
    }
}

const uint8_t* ComputeEngine::broadcast_operand(DataFormat format, numerics::Broadcast bcast, uint32_t cb,
                                                uint32_t tile_index) {
    using numerics::Broadcast;
    const uint32_t datum = format == DataFormat::Float16_b ? 2 : format == DataFormat::Float32 ? 4 : 0;
    if (bcast == Broadcast::None || datum == 0) return cbs_.front_tile(cb, tile_index);
    // The unpacker reads what is broadcast: element (0, 0), row 0 (faces 0 and 1) or column 0 (faces 0 and 2).
    constexpr uint32_t face = 16 * 16, row = 16;
    std::array<ByteRange, 2 * row> ranges{};
    size_t count = 0;
    if (bcast == Broadcast::Scalar) {
        ranges[count++] = {0, datum};
    } else if (bcast == Broadcast::Row) {
        ranges[count++] = {0, row * datum};
        ranges[count++] = {face * datum, row * datum};
    } else {
        for (uint32_t f : {0u, 2u})
            for (uint32_t r = 0; r < row; ++r) ranges[count++] = {(f * face + r * row) * datum, datum};
    }
    return cbs_.front_tile_bytes(cb, tile_index, ranges.data(), count);
}

void ComputeEngine::unary_bcast_tile(numerics::Broadcast bcast, uint32_t cb, uint32_t tile_index, uint32_t dst) {
    require_phase(Phase::Math, "unary_bcast", "math ops run between tile_regs_acquire and tile_regs_commit");
    float* out = dst_slot(dst, "unary_bcast");
    const DataFormat format = float_tile_format(cb, "unary_bcast");
    numerics::unpack_tile(format, broadcast_operand(format, bcast, cb, tile_index), operand_b_.data());
    // The broadcast datacopy (MOVB2D) moves the broadcast source register as is, sign of zero included.
    const float* b = operand_b_.data();
    for (uint32_t r = 0; r < TILE_DIM; ++r)
        for (uint32_t c = 0; c < TILE_DIM; ++c) {
            const uint32_t from = bcast == numerics::Broadcast::None  ? r * TILE_DIM + c
                                  : bcast == numerics::Broadcast::Row ? c
                                  : bcast == numerics::Broadcast::Col ? r * TILE_DIM
                                                                      : 0;
            out[r * TILE_DIM + c] = b[from];
        }
    finish_math(dst);
}

void ComputeEngine::unary_tile(numerics::UnaryOp op, uint32_t dst) {
    require_phase(Phase::Math, "unary op", "math ops run between tile_regs_acquire and tile_regs_commit");
    float* inout = dst_slot(dst, "unary op");
    require_not_integer_slot(dst, "unary op");
    numerics::unary_tile(op, inout);
    finish_math(dst);
}

void ComputeEngine::fill_tile(uint32_t dst, float value) {
    require_phase(Phase::Math, "fill", "math ops run between tile_regs_acquire and tile_regs_commit");
    float* out = dst_slot(dst, "fill");
    std::fill(out, out + numerics::TILE_ELEMENTS, value);
    finish_math(dst);
}

void ComputeEngine::binary_dst_tiles(numerics::BinaryOp op, uint32_t idst0, uint32_t idst1, uint32_t odst) {
    require_phase(Phase::Math, "binary DST op", "math ops run between tile_regs_acquire and tile_regs_commit");
    const float* a = dst_slot(idst0, "binary DST op");
    const float* b = dst_slot(idst1, "binary DST op");
    float* out = dst_slot(odst, "binary DST op");
    for (uint32_t slot : {idst0, idst1}) require_not_integer_slot(slot, "binary DST op");
    // Through a copy: odst may be one of the operands.
    numerics::binary_tile(op, numerics::Broadcast::None, a, b, scratch_.data());
    std::copy(scratch_.begin(), scratch_.end(), out);
    finish_math(odst);
}

// ---- pack ----------------------------------------------------------------------

void ComputeEngine::pack_tile(uint32_t dst, uint32_t cb, std::optional<uint32_t> out_tile_index) {
    require_phase(Phase::Pack, "pack_tile", "packing runs between tile_regs_wait and tile_regs_release");
    const float* in = dst_slot(dst, "pack_tile");
    const DataFormat format = tile_format(cb, "pack_tile");
    const bool integer_cb = numerics::is_integer_format(format);
    if (slot_kind_[dst] == SlotKind::Integer && !integer_cb)
        throw EmuError("pack_tile: DST tile " + std::to_string(dst) + " holds integer bits but " + cb_name(cb) +
                       " is " + numerics::format_name(format) + "; integer/float conversion is not emulated");
    if (slot_kind_[dst] == SlotKind::Float && integer_cb)
        throw EmuError("pack_tile: DST tile " + std::to_string(dst) + " holds float values but " + cb_name(cb) +
                       " is " + numerics::format_name(format) + "; float/integer conversion is not emulated");
    uint32_t index;
    if (out_tile_index) {
        index = *out_tile_index;
    } else {
        index = pack_position_[cb]++;
    }
    if (pack_relu_ && slot_kind_[dst] != SlotKind::Integer) {
        for (size_t i = 0; i < numerics::TILE_ELEMENTS; ++i) scratch_[i] = std::signbit(in[i]) ? 0.0f : in[i];
        in = scratch_.data();
    }
    uint8_t* out = pack_l1_acc_ ? cbs_.accumulated_tile(cb, index) : cbs_.back_tile(cb, index);
    if (pack_l1_acc_) {
        if (integer_cb || pack_relu_)
            throw EmuError("pack_tile: L1 accumulation into " + cb_name(cb) +
                           (integer_cb ? " (an integer format)" : " with the packer's ReLU on") + " is not emulated");
        numerics::unpack_tile(format, out, operand_a_.data());
        for (size_t i = 0; i < numerics::TILE_ELEMENTS; ++i) scratch_[i] = operand_a_[i] + in[i];
        in = scratch_.data();
    }
    numerics::pack_tile(format, in, out);
    ++tiles_packed_;
}

void ComputeEngine::on_push_back(uint32_t cb) {
    pack_position_[cb] = 0;
}

// ---- tilize / untilize -----------------------------------------------------------

void ComputeEngine::require_same_kind(uint32_t cb_in, DataFormat in, uint32_t cb_out, DataFormat out,
                                      const char* op) const {
    if (numerics::is_integer_format(in) != numerics::is_integer_format(out))
        throw EmuError(std::string(op) + ": " + cb_name(cb_in) + " (" + numerics::format_name(in) + ") and " +
                       cb_name(cb_out) + " (" + numerics::format_name(out) +
                       ") mix integer and float formats; conversion is not emulated");
    if (numerics::is_integer_format(in)) require_integer_fits_dst(cb_in, in, op);
}

DataFormat ComputeEngine::row_major_format(uint32_t cb, const char* op) {
    const DataFormat format = cbs_.format(cb);
    if (!numerics::is_supported_format(format) || numerics::is_block_format(format))
        throw EmuError(std::string(op) + ": row-major " + cb_name(cb) + " has data format " +
                       numerics::format_name(format) + "; it needs an element format (not a block format)");
    return format;
}

void ComputeEngine::tilize_block(uint32_t cb_in, uint32_t ntiles, uint32_t cb_out) {
    require_phase(Phase::Idle, "tilize_block", "it acquires and releases DST itself, so DST must be free");
    const DataFormat in_format = row_major_format(cb_in, "tilize_block");
    const DataFormat out_format = tile_format(cb_out, "tilize_block");
    require_same_kind(cb_in, in_format, cb_out, out_format, "tilize_block");
    const bool integer = numerics::is_integer_format(in_format);
    // cb_in: 32 rows x (ntiles*32) elements, row-major.
    const uint32_t row_elements = ntiles * TILE_DIM;
    const uint32_t element = numerics::element_bytes(in_format);
    const uint8_t* rows = front_span(cb_in, size_t(TILE_DIM) * row_elements * element, "tilize_block");
    for (uint32_t t = 0; t < ntiles; ++t) {
        for (uint32_t r = 0; r < TILE_DIM; ++r)
            numerics::unpack_elements(in_format, rows + (size_t(r) * row_elements + t * TILE_DIM) * element,
                                      scratch_.data() + r * TILE_DIM, TILE_DIM);
        if (!integer) through_dst(scratch_.data());
        numerics::pack_tile(out_format, scratch_.data(), cbs_.back_tile(cb_out, t));
        ++tiles_packed_;
    }
}

void ComputeEngine::untilize_block(uint32_t cb_in, uint32_t ntiles, uint32_t cb_out) {
    require_phase(Phase::Idle, "untilize_block", "it acquires and releases DST itself, so DST must be free");
    const DataFormat in_format = tile_format(cb_in, "untilize_block");
    const DataFormat out_format = row_major_format(cb_out, "untilize_block");
    require_same_kind(cb_in, in_format, cb_out, out_format, "untilize_block");
    const bool integer = numerics::is_integer_format(in_format);
    // cb_out: 32 rows x (ntiles*32) elements, row-major, at the sequential pack position.
    const uint32_t row_elements = ntiles * TILE_DIM;
    const uint32_t element = numerics::element_bytes(out_format);
    const size_t bytes = size_t(TILE_DIM) * row_elements * element;
    uint32_t& position = pack_position_[cb_out];
    uint8_t* rows = back_span(cb_out, position, bytes, "untilize_block");
    for (uint32_t t = 0; t < ntiles; ++t) {
        numerics::unpack_tile(in_format, cbs_.front_tile(cb_in, t), scratch_.data());
        if (!integer) through_dst(scratch_.data());
        for (uint32_t r = 0; r < TILE_DIM; ++r)
            numerics::pack_elements(out_format, scratch_.data() + r * TILE_DIM,
                                    rows + (size_t(r) * row_elements + t * TILE_DIM) * element, TILE_DIM);
        ++tiles_packed_;
    }
    const uint32_t page = cbs_.tile_size(cb_out);
    position += static_cast<uint32_t>((bytes + page - 1) / page);
}

void ComputeEngine::pack_untilize_dest(uint32_t cb, uint32_t block_rt, uint32_t block_ct, uint32_t full_ct,
                                       uint32_t c_index) {
    const char* op = "pack_untilize_dest";
    require_phase(Phase::Pack, op, "packing runs between tile_regs_wait and tile_regs_release");
    if (block_rt == 0 || block_ct == 0 || (c_index + 1) * block_ct > full_ct)
        throw EmuError(std::string(op) + ": a block of " + std::to_string(block_rt) + "x" + std::to_string(block_ct) +
                       " tiles at column block " + std::to_string(c_index) + " does not fit rows of " +
                       std::to_string(full_ct) + " tiles");
    if (pack_relu_ || pack_l1_acc_)
        throw EmuError(std::string(op) + ": the packer's " + (pack_relu_ ? "ReLU" : "L1 accumulation") +
                       " is not emulated with untilize");
    const DataFormat format = row_major_format(cb, op);
    if (numerics::is_integer_format(format))
        throw EmuError(std::string(op) + ": " + cb_name(cb) + " has integer format " + numerics::format_name(format) +
                       "; untilizing integer tiles is not emulated");
    const size_t row_elements = size_t(full_ct) * TILE_DIM;
    const uint32_t element = numerics::element_bytes(format);
    uint8_t* rows = back_span(cb, 0, size_t(block_rt) * TILE_DIM * row_elements * element, op);
    for (uint32_t r = 0; r < block_rt; ++r) {
        for (uint32_t c = 0; c < block_ct; ++c) {
            const uint32_t dst = r * block_ct + c;
            require_not_integer_slot(dst, op);
            const float* in = dst_slot(dst, op);
            const size_t column = size_t(c_index * block_ct + c) * TILE_DIM;
            for (uint32_t row = 0; row < TILE_DIM; ++row)
                numerics::pack_elements(format, in + row * TILE_DIM,
                                        rows + ((size_t(r) * TILE_DIM + row) * row_elements + column) * element,
                                        TILE_DIM);
            ++tiles_packed_;
        }
    }
}

}  // namespace ttnn_moe::emu
