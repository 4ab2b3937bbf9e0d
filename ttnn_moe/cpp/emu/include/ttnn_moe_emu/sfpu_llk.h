// The LLK layer of SFPU work (tt-llk's llk_math_eltwise_{unary,binary}_sfpu_params.h and the SFPU inits)
// over the emulator's DST: what SFPU_UNARY_CALL / SFPU_BINARY_CALL expand to, and the SFPU register setup
// the SFPU inits of tt-metal's ckernel_sfpu_*.h headers make.
//
// A call asks the compute engine for the DST half the issuing thread's SFPU addresses (the MATH thread's
// between tile_regs_acquire and tile_regs_commit, the PACK thread's after its hand-off, see
// tensix_sync.h), runs the sfpi function over the faces its VectorMode names, then reports which DST
// tiles it read and wrote and how many SFPU instructions it issued (the time model charges them).
// Faces: a unary call starts at its tile (64 DST rows each), a binary one at tile 0 (its function adds
// the tile offsets); each face call starts 16 rows further. RC: the four faces, R: faces 0 and 1 (the
// tile's top rows), C: faces 0 and 2 (its left columns), any other mode: one call at face 0.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "emu_kernel_config.h"
#include "llk_defs.h"
#include "sfpi.h"
#include "ttnn_moe_emu/kernel_common.h"

// The SFPU op tags of tt-metal's llk_sfpu_types.h that kernels and the SFPU headers name (values unused).
enum class SfpuType { unused, gelu, silu, exponential, sigmoid, reciprocal, sqrt, softplus };

namespace ckernel {

// ---- register setup the SFPU inits make
// Address modifiers: sfpi code addresses DST through dst_reg and the Dst counter, which the emulator keeps
// itself; an address modifier that moves a counter by itself is a raw-instruction idiom and is not emulated.
struct addr_mod_t {
    struct Counter {
        int incr = 0;
        int clr = 0;
        int cr = 0;
        int c_to_cr = 0;
    };
    struct Fidelity {
        int incr = 0;
        int clr = 0;
    };
    Counter srca;
    Counter srcb;
    Counter dest;
    Fidelity fidelity;
    Counter bias;
    void set(int index) const {
        if (srca.incr != 0 || srcb.incr != 0 || dest.incr != 0 || fidelity.incr != 0 || bias.incr != 0)
            ttnn_moe_emu::fail(("addr_mod_t::set(" + std::to_string(index) +
                                "): an address modifier with a non-zero increment is not emulated")
                                   .c_str());
    }
};
enum AddrMod : int { ADDR_MOD_0, ADDR_MOD_1, ADDR_MOD_2, ADDR_MOD_3, ADDR_MOD_4, ADDR_MOD_5, ADDR_MOD_6, ADDR_MOD_7 };

struct p_setrwc {
    static constexpr uint32_t CLR_NONE = 0x0;
    static constexpr uint32_t CR_D = 0x8;
    static constexpr uint32_t SET_D = 0x4;
    static constexpr uint32_t SET_ABD_F = 0xF;
};

namespace math {
// Resets the read/write counters; each SFPU call here starts its Dst counter at its tile anyway.
inline void reset_counters(uint32_t) {}
}  // namespace math

namespace sfpu {
// The SFPU's lane configuration register at its reset value, which the emulated vector unit has.
inline void _init_sfpu_config_reg() {}
}  // namespace sfpu

// ---- the calls
namespace emu_sfpu {
inline constexpr uint32_t ROWS_PER_FACE = 16;

// Runs `face_call(face)` for the faces of `mode` over the DST rows from `first_row`, inside one SFPU call.
template <typename FaceCall>
inline void run(uint32_t first_row, VectorMode mode, FaceCall&& face_call) {
    sfpi::emu::Machine& m = sfpi::emu::machine;
    m.dest = ttnn_moe_emu::services->sfpu_dest(&m.dest_tiles);
    m.fp32_dest = ttnn_moe_emu_config::fp32_dest_acc_en;
    m.enabled = sfpi::emu::ALL_LANES;
    m.tiles_loaded = m.tiles_stored = 0;
    m.instructions = 0;
    auto face = [&](uint32_t f) {
        m.dst_counter = first_row + f * ROWS_PER_FACE;
        face_call();
    };
    switch (mode) {
        case VectorMode::RC:
            for (uint32_t f = 0; f < 4; ++f) face(f);
            break;
        case VectorMode::R:
            face(0), face(1);
            break;
        case VectorMode::C:
            face(0), face(2);
            break;
        default:
            face(0);
            break;
    }
    m.dest = nullptr;
    ttnn_moe_emu::services->sfpu_done(m.tiles_loaded, m.tiles_stored, m.instructions);
}
}  // namespace emu_sfpu

template <typename Function, typename... Args>
inline void _llk_math_eltwise_unary_sfpu_params_(Function&& sfpu_function, uint32_t dst_index,
                                                 VectorMode mode = VectorMode::RC, Args&&... args) {
    emu_sfpu::run(dst_index * sfpi::emu::ROWS_PER_TILE, mode, [&] { sfpu_function(args...); });
}

template <typename Function, typename... Args>
inline void _llk_math_eltwise_binary_sfpu_params_(Function&& sfpu_function, uint32_t dst_index_in0,
                                                  uint32_t dst_index_in1, uint32_t dst_index_out,
                                                  VectorMode mode = VectorMode::RC, Args&&... args) {
    emu_sfpu::run(0, mode, [&] { sfpu_function(dst_index_in0, dst_index_in1, dst_index_out, args...); });
}

template <SfpuType op, bool is_fp32_dest_acc_en = ttnn_moe_emu_config::fp32_dest_acc_en, typename... Args>
inline void llk_math_eltwise_unary_sfpu_init(Args&&... init) {
    if constexpr (sizeof...(Args) > 0) std::invoke(std::forward<Args>(init)...);
}

template <SfpuType op, typename... Args>
inline void llk_math_eltwise_binary_sfpu_init(Args&&... init) {
    if constexpr (sizeof...(Args) > 0) std::invoke(std::forward<Args>(init)...);
}

}  // namespace ckernel
