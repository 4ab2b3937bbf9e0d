// The emulator's compute kernel API (tt-metal 0.81.1 names and signatures).
// The three TRISC roles run as one context, so UNPACK/MATH/PACK pass their
// argument through; every call forwards to the core's ComputeEngine.
#pragma once

#include <cstdint>

#include "api/compile_time_args.h"
#include "api/dataflow/dataflow_buffer.h"
#include "api/debug/assert.h"
#include "api/debug/dprint.h"
#include "api/debug/waypoint.h"
#include "ckernel.h"
#include "emu_kernel_config.h"
#include "internal/circular_buffer_interface.h"
#include "llk_defs.h"
#include "ttnn_moe_emu/kernel_args.h"
#include "ttnn_moe_emu/kernel_common.h"
#include "ttnn_moe_emu/sfpu_raw.h"
#include "ttnn_moe_emu/tensix_sync.h"

#define UNPACK(x) x
#define MATH(x) x
#define PACK(x) x

constexpr bool DST_ACCUM_MODE = ttnn_moe_emu_config::fp32_dest_acc_en;
constexpr bool APPROX = ttnn_moe_emu_config::math_approx_mode;
constexpr int MATH_FIDELITY = static_cast<int>(ttnn_moe_emu_config::math_fidelity);

// What tt-metal's JIT defines in a TRISC build and its kernel library (ttnn/cpp/ttnn/kernel_lib) reads:
// UCK_CHLKC_MATH says DST_ACCUM_MODE is this build's (the compute context runs the MATH thread's calls
// with the others), DST_SYNC_MODE the DST sync mode of the compute config.
#ifndef UCK_CHLKC_MATH
#define UCK_CHLKC_MATH 1
#endif
namespace ckernel {
enum DstSync : uint8_t { SyncHalf = 0, SyncFull = 1 };
}
#define DST_SYNC_MODE (ttnn_moe_emu_config::dst_full_sync_en ? ckernel::DstSync::SyncFull : ckernel::DstSync::SyncHalf)

namespace ckernel {

enum class SrcOrder : uint8_t { Regular = 0, Reverse = 1 };
enum BroadcastType : uint8_t { NONE = 0, COL = 1, ROW = 2, SCALAR = 3 };

// The packer's ReLU modes and their configuration, as the 0.81.1 LLK defines them (llk_defs.h).
enum class ReluType : uint8_t { NO_RELU = 0, ZERO_RELU, MIN_THRESHOLD_RELU, MAX_THRESHOLD_RELU };
struct ReluConfig {
    static constexpr ReluConfig none() { return {ReluType::NO_RELU}; }
    static constexpr ReluConfig zero() { return {ReluType::ZERO_RELU}; }
    static constexpr ReluConfig min_threshold(uint32_t t) { return {ReluType::MIN_THRESHOLD_RELU, t}; }
    static constexpr ReluConfig max_threshold(uint32_t t) { return {ReluType::MAX_THRESHOLD_RELU, t}; }
    static constexpr ReluConfig from_packed(uint32_t packed) {
        return {static_cast<ReluType>(packed & 0x3), (packed >> 16) & 0xFFFF};
    }
    constexpr ReluType get_mode() const { return mode; }
    constexpr uint32_t get_threshold() const { return threshold; }

private:
    constexpr ReluConfig(ReluType m, uint32_t t = 0) : mode(m), threshold(t) {}
    ReluType mode = ReluType::NO_RELU;
    uint32_t threshold = 0;
};

namespace emu_detail {
inline const ttnn_moe_emu::Services& svc() {
    return *ttnn_moe_emu::services;
}
inline ttnn_moe_emu::Broadcast bcast_of(BroadcastType b) {
    switch (b) {
        case BroadcastType::ROW:
            return ttnn_moe_emu::Broadcast::Row;
        case BroadcastType::COL:
            return ttnn_moe_emu::Broadcast::Col;
        case BroadcastType::SCALAR:
            return ttnn_moe_emu::Broadcast::Scalar;
        default:
            return ttnn_moe_emu::Broadcast::None;
    }
}
inline void binary(ttnn_moe_emu::BinaryOp op, ttnn_moe_emu::Broadcast b, uint32_t icb0, uint32_t icb1, uint32_t itile0,
                   uint32_t itile1, uint32_t idst) {
    svc().binary_tiles(op, b, icb0, icb1, itile0, itile1, idst);
}
}  // namespace emu_detail

// ---- LLK configuration calls tt-metal's kernel library makes directly. They program unpacker, math and
// packer registers (formats, strides, the reduce packer mask); the emulator's ops carry their own
// semantics (reduce_tile writes only the reduced row or column), so there is nothing to configure.
enum class p_dim_stride_target : uint8_t { IGNORE = 0, FACE_ROW_MAJOR = 1, ROW_MAJOR = 2 };
enum class PackMode : uint8_t { Default = 0 };
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE, p_dim_stride_target stride = p_dim_stride_target::IGNORE>
ALWI void llk_unpack_reconfig_data_format_srca(uint32_t old_operand, uint32_t new_operand) {}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void llk_math_reconfig_data_format_srca(uint32_t old_operand, uint32_t new_operand) {}
template <PoolType type, ReduceDim dim>
ALWI void llk_unpack_AB_reduce_init(uint32_t operand_a, uint32_t operand_b) {}
template <PoolType type, ReduceDim dim, bool is_fp32_dest_acc_en, int math_fidelity>
ALWI void llk_math_reduce_init(uint32_t operand_a, uint32_t operand_b) {}
template <ReduceDim dim, PackMode mode = PackMode::Default>
ALWI void llk_pack_reduce_mask_config(uint32_t operand) {}
// The FPU binary's MATH-thread init (deepseek_moe_fast_reduce_nc_fused calls it itself): acc_to_dest makes later
// add and sub accumulate (ELWADD / ELWSUB with AddDst, any broadcast). A multiply accumulates with or without it:
// ELWMUL is Dst += A * B, and the LLK issues it without AddDst.
template <EltwiseBinaryType eltwise_binary_type, BroadcastType src_b_bcast_type, int math_fidelity,
          EltwiseBinaryReuseDestType binary_reuse_dest = EltwiseBinaryReuseDestType::NONE>
ALWI void llk_math_eltwise_binary_init(uint32_t operand_a, uint32_t operand_b, uint32_t acc_to_dest = 0) {
    static_assert(binary_reuse_dest == EltwiseBinaryReuseDestType::NONE,
                  "llk_math_eltwise_binary_init: DST reuse as a source is not emulated");
    const bool accumulates =
        eltwise_binary_type == EltwiseBinaryType::ELWADD || eltwise_binary_type == EltwiseBinaryType::ELWSUB;
    emu_detail::svc().binary_acc_to_dest(acc_to_dest != 0 && accumulates ? 1 : 0);
}
ALWI void llk_pack_reduce_mask_clear() {}

// ---- startup, DST ownership, CBs
template <SrcOrder src_order = SrcOrder::Regular>
ALWI void compute_kernel_hw_startup(uint32_t icb0, uint32_t icb1, uint32_t ocb) {
    emu_detail::svc().compute_hw_startup(icb0, icb1, ocb);
}
ALWI void compute_kernel_hw_startup(uint32_t icb0, uint32_t ocb) {
    emu_detail::svc().compute_hw_startup(icb0, icb0, ocb);
}

ALWI void tile_regs_acquire() {
    emu_detail::svc().tile_regs_acquire();
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tile_regs_commit() {
    emu_detail::svc().tile_regs_commit();
}
ALWI void tile_regs_wait() {
    emu_detail::svc().tile_regs_wait();
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tile_regs_release() {
    emu_detail::svc().tile_regs_release();
}

// 0.81.1's get_tile_address: the L1 address of tile `tile_index` at the read side of CB `cb_id`. On hardware
// UNPACK reads it and mails it to MATH and PACK; here the three roles are one context, so it is the address
// (a host address, as every L1 address a kernel receives).
ALWI uint32_t get_tile_address(uint32_t cb_id, uint32_t tile_index) {
    const auto& services = *ttnn_moe_emu::services;
    return services.cb_read_ptr(cb_id) + tile_index * services.cb_info(cb_id, ttnn_moe_emu::CbField::PageSize);
}
// read_tile_value: the uint32 word `element_offset` of that tile (after cb_wait_front), a plain load.
ALWI uint32_t read_tile_value(uint32_t cb_id, uint32_t tile_index, uint32_t element_offset) {
    const uint32_t tile_addr = get_tile_address(cb_id, tile_index);
    return reinterpret_cast<const volatile uint32_t*>(static_cast<uintptr_t>(tile_addr))[element_offset];
}

ALWI void cb_wait_front(uint32_t cbid, uint32_t ntiles) {
    emu_detail::svc().cb_wait_front(cbid, ntiles);
}
ALWI void cb_pop_front(uint32_t cbid, uint32_t ntiles) {
    emu_detail::svc().cb_pop_front(cbid, ntiles);
}
ALWI void cb_reserve_back(uint32_t cbid, uint32_t ntiles) {
    emu_detail::svc().cb_reserve_back(cbid, ntiles);
}
ALWI void cb_push_back(uint32_t cbid, uint32_t ntiles) {
    emu_detail::svc().cb_push_back(cbid, ntiles);
}

// ---- data format reconfiguration: formats come from each CB, nothing to switch
template <SrcOrder src_order = SrcOrder::Regular>
ALWI void reconfig_data_format(const uint32_t, const uint32_t) {}
template <SrcOrder src_order = SrcOrder::Regular>
ALWI void reconfig_data_format(const uint32_t, const uint32_t, const uint32_t, const uint32_t) {}
ALWI void reconfig_data_format_srca(const uint32_t) {}
ALWI void reconfig_data_format_srca(const uint32_t, const uint32_t) {}
ALWI void reconfig_data_format_srcb(const uint32_t) {}
ALWI void reconfig_data_format_srcb(const uint32_t, const uint32_t) {}
template <bool is_tile_dim_reconfig_en = false>
ALWI void pack_reconfig_data_format(const uint32_t) {}
template <bool is_tile_dim_reconfig_en = false>
ALWI void pack_reconfig_data_format(const uint32_t, const uint32_t) {}

// ---- copy
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void copy_init(uint32_t cbid, uint32_t transpose = 0, uint32_t transpose_within_16x16_face = false,
                    uint32_t call_line = __builtin_LINE()) {
    if (transpose) ttnn_moe_emu::fail("copy_init with transpose is not emulated");
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
[[deprecated("Renamed to copy_init().")]] ALWI void copy_tile_to_dst_init_short(
    uint32_t cbid, uint32_t transpose = 0, uint32_t transpose_within_16x16_face = false,
    uint32_t call_line = __builtin_LINE()) {
    copy_init(cbid, transpose);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
[[deprecated("Renamed to copy_init().")]] ALWI void copy_tile_init(uint32_t cbid,
                                                                   uint32_t call_line = __builtin_LINE()) {}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void copy_tile(uint32_t in_cb_id, uint32_t in_tile_index, uint32_t dst_tile_index) {
    emu_detail::svc().copy_tile(in_cb_id, in_tile_index, dst_tile_index);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void copy_block(uint32_t in_cb_id, uint32_t start_in_tile_index, uint32_t start_dst_tile_index, uint32_t ntiles) {
    for (uint32_t i = 0; i < ntiles; ++i) copy_tile(in_cb_id, start_in_tile_index + i, start_dst_tile_index + i);
}

// ---- matmul
ALWI void matmul_init(uint32_t in0_cb_id, uint32_t in1_cb_id, const uint32_t transpose = 0,
                      uint32_t call_line = __builtin_LINE()) {
    emu_detail::svc().matmul_init(transpose);
}
ALWI void mm_uninit(uint32_t, uint32_t) {}
ALWI void matmul_tiles(uint32_t in0_cb_id, uint32_t in1_cb_id, uint32_t in0_tile_index, uint32_t in1_tile_index,
                       uint32_t idst) {
    emu_detail::svc().matmul_tiles(in0_cb_id, in1_cb_id, in0_tile_index, in1_tile_index, idst);
}
ALWI void matmul_block_init(uint32_t in0_cb_id, uint32_t in1_cb_id, const uint32_t transpose = 0, uint32_t ct_dim = 1,
                            uint32_t rt_dim = 1, uint32_t kt_dim = 1, uint32_t call_line = __builtin_LINE()) {
    emu_detail::svc().matmul_init(transpose);
}
ALWI void matmul_block(uint32_t in0_cb_id, uint32_t in1_cb_id, uint32_t in0_tile_index, uint32_t in1_tile_index,
                       uint32_t idst, const uint32_t transpose, uint32_t ct_dim, uint32_t rt_dim, uint32_t kt_dim,
                       uint32_t call_line = __builtin_LINE()) {
    emu_detail::svc().matmul_block(in0_cb_id, in1_cb_id, in0_tile_index, in1_tile_index, idst, transpose, ct_dim,
                                   rt_dim, kt_dim);
}

// ---- eltwise binary (with broadcasts)
// The FPU binary init of one op type (binary_ng's kernels call it directly). The op itself comes with each
// *_tiles call. acc_to_dest (add and sub: DST += A op B) stays on until the next binary init. A multiply
// always adds its product to DST (ELWMUL is Dst += A * B; the LLK issues it without AddDst, so mul_init's
// acc_to_dest changes nothing): into a freshly acquired DST tile that is A * B.
template <bool full_init, EltwiseBinaryType eltwise_binary_type>
ALWI void binary_tiles_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false,
                            uint32_t call_line = __builtin_LINE()) {
    const bool accumulates =
        eltwise_binary_type == EltwiseBinaryType::ELWADD || eltwise_binary_type == EltwiseBinaryType::ELWSUB;
    emu_detail::svc().binary_acc_to_dest(acc_to_dest && accumulates ? 1 : 0);
}
ALWI void add_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false, uint32_t call_line = __builtin_LINE()) {
    emu_detail::svc().binary_acc_to_dest(acc_to_dest ? 1 : 0);
}
ALWI void sub_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false, uint32_t call_line = __builtin_LINE()) {
    emu_detail::svc().binary_acc_to_dest(acc_to_dest ? 1 : 0);
}
ALWI void mul_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = true, uint32_t call_line = __builtin_LINE()) {
    emu_detail::svc().binary_acc_to_dest(0);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    emu_detail::binary(ttnn_moe_emu::BinaryOp::Add, ttnn_moe_emu::Broadcast::None, icb0, icb1, itile0, itile1, idst);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sub_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    emu_detail::binary(ttnn_moe_emu::BinaryOp::Sub, ttnn_moe_emu::Broadcast::None, icb0, icb1, itile0, itile1, idst);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    emu_detail::binary(ttnn_moe_emu::BinaryOp::Mul, ttnn_moe_emu::Broadcast::None, icb0, icb1, itile0, itile1, idst);
}

#define EMU_BCAST_OP(name, OP, BCAST)                                                                              \
    template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>                                                           \
    ALWI void name(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {                \
        emu_detail::binary(ttnn_moe_emu::BinaryOp::OP, ttnn_moe_emu::Broadcast::BCAST, icb0, icb1, itile0, itile1, \
                           idst);                                                                                  \
    }
EMU_BCAST_OP(add_tiles_bcast_cols, Add, Col)
EMU_BCAST_OP(sub_tiles_bcast_cols, Sub, Col)
EMU_BCAST_OP(mul_tiles_bcast_cols, Mul, Col)
EMU_BCAST_OP(add_tiles_bcast_scalar, Add, Scalar)
EMU_BCAST_OP(sub_tiles_bcast_scalar, Sub, Scalar)
EMU_BCAST_OP(mul_tiles_bcast_scalar, Mul, Scalar)
#undef EMU_BCAST_OP

#define EMU_BCAST_ROW_OP(name, OP)                                                                               \
    template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>                                                         \
    ALWI void name(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,                \
                   uint32_t bcast_row_idx = 0) {                                                                 \
        if (bcast_row_idx != 0) ttnn_moe_emu::fail(#name " with bcast_row_idx != 0 is not emulated");            \
        emu_detail::binary(ttnn_moe_emu::BinaryOp::OP, ttnn_moe_emu::Broadcast::Row, icb0, icb1, itile0, itile1, \
                           idst);                                                                                \
    }
EMU_BCAST_ROW_OP(add_tiles_bcast_rows, Add)
EMU_BCAST_ROW_OP(sub_tiles_bcast_rows, Sub)
EMU_BCAST_ROW_OP(mul_tiles_bcast_rows, Mul)
#undef EMU_BCAST_ROW_OP

template <BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                          uint32_t bcast_row_idx = 0) {
    emu_detail::binary(ttnn_moe_emu::BinaryOp::Add, emu_detail::bcast_of(tBcastDim), icb0, icb1, itile0, itile1, idst);
}
template <BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sub_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                          uint32_t bcast_row_idx = 0) {
    emu_detail::binary(ttnn_moe_emu::BinaryOp::Sub, emu_detail::bcast_of(tBcastDim), icb0, icb1, itile0, itile1, idst);
}
template <BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                          uint32_t bcast_row_idx = 0) {
    emu_detail::binary(ttnn_moe_emu::BinaryOp::Mul, emu_detail::bcast_of(tBcastDim), icb0, icb1, itile0, itile1, idst);
}
// The FPU add with one operand from DST (DEST_TO_SRCA / DEST_TO_SRCB): declared so that kernels using it build;
// the add fails when called.
template <EltwiseBinaryReuseDestType reuse_dest>
ALWI void add_reuse_dest_init(uint32_t icb, uint32_t call_line = __builtin_LINE()) {
    static_assert(reuse_dest != EltwiseBinaryReuseDestType::NONE, "add_reuse_dest_init: reuse_dest must not be NONE");
}
template <EltwiseBinaryReuseDestType reuse_dest>
ALWI void add_reuse_dest_tiles(uint32_t icb, uint32_t in_tile_index, uint32_t dst_tile_index) {
    ttnn_moe_emu::fail("add_reuse_dest_tiles: the FPU add with an operand from DST is not emulated");
}
// unary_bcast: one tile through the unpacker's broadcast (row 0, column 0 or element (0, 0)) into DST.
template <BroadcastType bcast_type, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void unary_bcast_init(uint32_t icb) {}
template <BroadcastType bcast_type, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void unary_bcast(uint32_t icb, uint32_t in_tile_index, uint32_t dst_tile_index) {
    emu_detail::svc().unary_bcast_tile(emu_detail::bcast_of(bcast_type), icb, in_tile_index, dst_tile_index);
}

#define EMU_NOOP_INIT(name)                                                               \
    ALWI void name(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE()) { \
        emu_detail::svc().binary_acc_to_dest(0);                                          \
    }
EMU_NOOP_INIT(add_bcast_rows_init)
EMU_NOOP_INIT(sub_bcast_rows_init)
EMU_NOOP_INIT(mul_bcast_rows_init)
EMU_NOOP_INIT(add_bcast_cols_init)
EMU_NOOP_INIT(sub_bcast_cols_init)
EMU_NOOP_INIT(mul_bcast_cols_init)
EMU_NOOP_INIT(add_bcast_scalar_init)
EMU_NOOP_INIT(sub_bcast_scalar_init)
EMU_NOOP_INIT(mul_bcast_scalar_init)
#undef EMU_NOOP_INIT
template <EltwiseBinaryType tBcastOp, BroadcastType tBcastDim>
ALWI void bcast_init(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE()) {
    emu_detail::svc().binary_acc_to_dest(0);
}

// ---- SFPU unary
ALWI void silu_tile_init() {}
ALWI void silu_tile(uint32_t idst) {
    emu_detail::svc().unary_tile(ttnn_moe_emu::UnaryOp::Silu, idst);
}
template <bool fast_and_approx = false>
ALWI void sigmoid_tile_init() {}
template <int vec_mode = 4, bool fast_and_approx = false>
ALWI void sigmoid_tile(uint32_t idst) {
    emu_detail::svc().unary_tile(ttnn_moe_emu::UnaryOp::Sigmoid, idst);
}
template <bool approx = false, bool fast_and_approx = false, uint32_t scale = 0x3F80>
ALWI void exp_tile_init() {}
template <bool approx = false, bool fast_and_approx = false, bool scale_en = false, bool skip_positive_check = false,
          int iterations = 8>
ALWI void exp_tile(uint32_t idst, VectorMode vector_mode = VectorMode::RC, uint16_t scale = 0x3F80) {
    emu_detail::svc().unary_tile(ttnn_moe_emu::UnaryOp::Exp, idst);
}
ALWI void relu_tile_init() {}
ALWI void relu_tile(uint32_t idst) {
    emu_detail::svc().unary_tile(ttnn_moe_emu::UnaryOp::Relu, idst);
}
ALWI void recip_tile_init() {}
ALWI void recip_tile(uint32_t idst) {
    emu_detail::svc().unary_tile(ttnn_moe_emu::UnaryOp::Recip, idst);
}
ALWI void negative_tile_init() {}
ALWI void negative_tile(uint32_t idst) {
    emu_detail::svc().unary_tile(ttnn_moe_emu::UnaryOp::Neg, idst);
}

// ---- SFPU binary (both operands already in DST)
ALWI void mul_binary_tile_init() {}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    emu_detail::svc().binary_dst_tiles(ttnn_moe_emu::BinaryOp::Mul, idst0, idst1, odst);
}

ALWI void init_sfpu(uint32_t icb, uint32_t ocb) {}
ALWI void unary_op_init_common(uint32_t icb, uint32_t ocb) {}

// ---- pack
ALWI void pack_init(uint32_t ocb, uint32_t call_line = __builtin_LINE()) {}
// Packer ReLU for the following pack_tile calls (ZERO_RELU: negatives pack as 0; thresholds are not emulated).
ALWI void pack_relu_config(const ReluConfig& config) {
    emu_detail::svc().pack_relu_config(static_cast<uint32_t>(config.get_mode()), config.get_threshold());
}
template <bool out_of_order_output = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_tile(uint32_t ifrom_dst, uint32_t icb, uint32_t output_tile_index = 0) {
    emu_detail::svc().pack_tile(ifrom_dst, icb, output_tile_index, out_of_order_output ? 1 : 0);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_block(uint32_t ifrom_dst, uint32_t icb, uint32_t ntiles) {
    for (uint32_t i = 0; i < ntiles; ++i) pack_tile(ifrom_dst + i, icb);
}

// Packer L1 accumulation: while on, pack_tile adds to the tile already in the output CB.
ALWI void pack_reconfig_l1_acc(const uint32_t l1_acc_en) {
    emu_detail::svc().pack_l1_acc(l1_acc_en);
}
// The LLK call beneath it, which the Metal 2.0 matmul compute kernel makes directly (inside PACK(...)).
ALWI void llk_pack_reconfig_l1_acc(const uint32_t enable) {
    pack_reconfig_l1_acc(enable);
}

// ---- pack_untilize: the packer writes DST tiles as row-major rows (pack_untilize_dest, emulated); the
// unpack-side pack_untilize_init/block are declared so kernels that name them build, failing when called
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool narrow_row = false,
          uint32_t row_num_datums = 32, bool dense = false, bool configure_remap = true,
          bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_untilize_dest_init(uint32_t ocb, uint32_t call_line = __builtin_LINE()) {
    static_assert(!narrow_row && row_num_datums == 32 && !dense,
                  "pack_untilize_dest: narrow rows and dense packing are not emulated");
}
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool diagonal = false,
          bool narrow_row = false, uint32_t row_num_datums = 32, uint32_t tile_dst_ct_offset = 0, bool dense = false>
ALWI void pack_untilize_dest(uint32_t ocb, uint32_t block_rt_dim = 1, uint32_t block_c_index = 0,
                             uint32_t tile_dst_rt_offset = 0) {
    static_assert(!diagonal && !narrow_row && row_num_datums == 32 && tile_dst_ct_offset == 0 && !dense,
                  "pack_untilize_dest: diagonal, narrow-row, dense and DST-offset packing are not emulated");
    if (tile_dst_rt_offset != 0) ttnn_moe_emu::fail("pack_untilize_dest with a DST row offset is not emulated");
    emu_detail::svc().pack_untilize_dest(ocb, block_rt_dim, block_ct_dim, full_ct_dim, block_c_index);
}
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_untilize_init(uint32_t icb, uint32_t ocb, uint32_t call_line = __builtin_LINE()) {
    ttnn_moe_emu::fail("pack_untilize_init: the unpack-side pack_untilize is not emulated");
}
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_untilize_block(uint32_t icb, uint32_t block_rt_dim, uint32_t ocb, uint32_t block_c_index = 0) {
    ttnn_moe_emu::fail("pack_untilize_block: the unpack-side pack_untilize is not emulated");
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_untilize_uninit(uint32_t ocb) {}
// ---- transpose_wh: a tile transposed on its way from a CB into DST (integer tiles keep their bits)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void transpose_init(uint32_t icb, uint32_t call_line = __builtin_LINE()) {}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void transpose_tile(uint32_t icb, uint32_t itile, uint32_t idst) {
    emu_detail::svc().transpose_tile(icb, itile, idst);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void transpose_block(uint32_t icb, uint32_t start_itile, uint32_t start_idst, uint32_t ntiles) {
    for (uint32_t i = 0; i < ntiles; ++i) transpose_tile(icb, start_itile + i, start_idst + i);
}

// ---- tilize / untilize
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tilize_init(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t call_line = __builtin_LINE()) {}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tilize_block(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t input_tile_index = 0,
                       uint32_t output_tile_index = 0) {
    if (input_tile_index != 0 || output_tile_index != 0) {
        ttnn_moe_emu::fail("tilize_block with tile offsets is not emulated");
    }
    emu_detail::svc().tilize_block(icb, block, ocb);
}
ALWI void tilize_uninit(uint32_t icb, uint32_t ocb) {}
// fast_tilize: the same tiles by another unpacker mode, exact for bfloat16 input; fp32 input, which it truncates
// to tf32, is not emulated.
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_tilize_init(uint32_t icb, uint32_t full_dim, uint32_t ocb, uint32_t call_line = __builtin_LINE()) {}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_tilize_init_skip_remap(uint32_t icb, uint32_t full_dim, uint32_t ocb,
                                      uint32_t call_line = __builtin_LINE()) {}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_tilize_block(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t input_tile_index = 0,
                            uint32_t output_tile_index = 0) {
    if (ttnn_moe_emu_config::cb_format[icb] == static_cast<uint8_t>(DataFormat::Float32))
        ttnn_moe_emu::fail("fast_tilize_block of fp32 input (truncated to tf32 on hardware) is not emulated");
    tilize_block(icb, block, ocb, input_tile_index, output_tile_index);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_tilize_uninit(uint32_t icb, uint32_t ocb, uint32_t full_dim) {}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void untilize_init(uint32_t icb, uint32_t call_line = __builtin_LINE()) {}
template <uint32_t block_ct_dim = 1, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void untilize_block(uint32_t icb, uint32_t full_ct_dim, uint32_t ocb) {
    emu_detail::svc().untilize_block(icb, full_ct_dim, ocb);
}
ALWI void untilize_uninit(uint32_t icb) {}

}  // namespace ckernel

using namespace ckernel;
