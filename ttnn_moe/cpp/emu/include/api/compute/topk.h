// The bitonic top-k stages of tt-metal 0.81.1's api/compute/topk.h on the emulator's DST: a slab of
// two value tiles at idst, idst+1 and their index tiles at idst+2, idst+3 (emu/compute/topk_slab.hpp
// has the semantics and the order of equal values). The unstable network is emulated; its
// stable_sort, fused-key and rank-stamped modes and the helpers that prepare or finish them are
// declared so kernels that name them build, and fail when called.
#pragma once

#include <cstdint>

#include "ttnn_moe_emu/compute_api.h"

namespace ckernel {

enum class TopkTieOrder : std::uint8_t { Unset, Ascending, Descending };

constexpr TopkTieOrder topk_tie_order_from_global_direction(bool descending) {
    return descending ? TopkTieOrder::Descending : TopkTieOrder::Ascending;
}

namespace emu_detail {
enum TopkStage : uint32_t { TOPK_LOCAL_SORT = 0, TOPK_MERGE = 1, TOPK_REBUILD = 2 };
template <bool stable_sort, bool fused, bool rank_stamped>
ALWI void require_unstable_network(const char* call) {
    if constexpr (stable_sort || fused || rank_stamped) {
        ttnn_moe_emu::fail(call);
    }
}
}  // namespace emu_detail

template <bool fused = false, bool rank_stamped = false, std::uint32_t tag_bits = 16>
ALWI void topk_tile_init() {
    emu_detail::require_unstable_network<false, fused, rank_stamped>(
        "topk_tile_init: the fused-key and rank-stamped top-k modes are not emulated");
}

template <bool stable_sort = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE, bool fused = false,
          bool rank_stamped = false, TopkTieOrder tie_order = TopkTieOrder::Unset>
ALWI void topk_local_sort(uint32_t idst, int idir, int i_end_phase, int i_start_phase = 0, int i_end_step = 0,
                          int i_start_step = 0) {
    static_assert(!stable_sort || tie_order != TopkTieOrder::Unset,
                  "comparator-stable topk requires an explicit tie_order");
    emu_detail::require_unstable_network<stable_sort, fused, rank_stamped>(
        "topk_local_sort: the stable, fused-key and rank-stamped modes are not emulated");
    emu_detail::svc().topk(emu_detail::TOPK_LOCAL_SORT, idst, idir, i_end_phase, i_start_phase, 0, 0);
}

template <bool idir = false, bool stable_sort = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE, bool fused = false,
          bool rank_stamped = false, TopkTieOrder tie_order = TopkTieOrder::Unset, std::uint32_t tag_bits = 16>
ALWI void topk_merge(uint32_t idst, int m_iter, int k) {
    static_assert(rank_stamped || tag_bits == 16, "tag_bits applies to the rank-stamped mode only");
    static_assert(!stable_sort || tie_order != TopkTieOrder::Unset,
                  "comparator-stable topk requires an explicit tie_order");
    emu_detail::require_unstable_network<stable_sort, fused, rank_stamped>(
        "topk_merge: the stable, fused-key and rank-stamped modes are not emulated");
    emu_detail::svc().topk(emu_detail::TOPK_MERGE, idst, idir ? 1 : 0, m_iter, k, 0, 0);
}

template <bool stable_sort = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE, bool fused = false,
          bool rank_stamped = false, TopkTieOrder tie_order = TopkTieOrder::Unset>
ALWI void topk_rebuild(uint32_t idst, bool idir, int m_iter, int k, int logk, int skip_second) {
    static_assert(!stable_sort || tie_order != TopkTieOrder::Unset,
                  "comparator-stable topk requires an explicit tie_order");
    emu_detail::require_unstable_network<stable_sort, fused, rank_stamped>(
        "topk_rebuild: the stable, fused-key and rank-stamped modes are not emulated");
    emu_detail::svc().topk(emu_detail::TOPK_REBUILD, idst, idir ? 1 : 0, m_iter, k, logk, skip_second);
}

#define EMU_TOPK_NOT_EMULATED(name) ttnn_moe_emu::fail(#name ": not emulated")
template <bool largest>
ALWI void topk_fuse_tile(uint32_t idst) {
    EMU_TOPK_NOT_EMULATED(topk_fuse_tile);
}
template <bool largest>
ALWI void topk_defuse_tile(uint32_t idst, uint32_t num_tiles) {
    EMU_TOPK_NOT_EMULATED(topk_defuse_tile);
}
template <bool largest, std::uint32_t tag_bits = 16>
ALWI void topk_stamp_local_positions(std::uint32_t idst) {
    EMU_TOPK_NOT_EMULATED(topk_stamp_local_positions);
}
template <bool largest, std::uint32_t tag_bits = 16>
ALWI void topk_stamp_tile_rank_range(uint32_t idst, uint32_t dst_tile_index, uint32_t rank_base) {
    EMU_TOPK_NOT_EMULATED(topk_stamp_tile_rank_range);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void topk_canonicalize_negzero_values(uint32_t idst) {
    EMU_TOPK_NOT_EMULATED(topk_canonicalize_negzero_values);
}
template <std::uint32_t tag_bits = 16, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void topk_strip_rank_tags(std::uint32_t idst) {
    EMU_TOPK_NOT_EMULATED(topk_strip_rank_tags);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void topk_finalize_uint16_indices(std::uint32_t idst) {
    EMU_TOPK_NOT_EMULATED(topk_finalize_uint16_indices);
}
ALWI void topk_uint16_prepare_value_tile_for_pack(uint32_t idst) {
    EMU_TOPK_NOT_EMULATED(topk_uint16_prepare_value_tile_for_pack);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void topk_uint16_move_dest_tile_to_pack_half(uint32_t idst) {
    EMU_TOPK_NOT_EMULATED(topk_uint16_move_dest_tile_to_pack_half);
}
#undef EMU_TOPK_NOT_EMULATED

}  // namespace ckernel
