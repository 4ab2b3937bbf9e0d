// The bitonic top-k stages of tt-metal's compute API (topk_local_sort, topk_merge, topk_rebuild in
// api/compute/topk.h) on one DST "slab": two value tiles at DST idst, idst+1 and their two index
// tiles at idst+2, idst+3. Every one of the 32 columns is a sequence of 64 positions: rows 0..31
// of the first tile, then rows 0..31 of the second; values and indices move together.
//
// The device runs these stages as an SFPU compare-and-swap network (ckernel_sfpu_topk.h). What the
// kernels built on them rely on is the result of each stage, as topk.h documents it, not the
// network: that is what is emulated here.
//
// - local sort (phases 0..end_phase): the sequence is cut into runs of K = 2^(end_phase+1)
//   positions; run j is sorted decreasing when (idir == 0) != (j odd), increasing otherwise.
// - merge (idir, m_iter, k): runs of k positions; run i (i a multiple of 2^(m_iter+1)) and its
//   partner i + 2^m_iter: run i receives the k largest values of the two (the k smallest with
//   idir 1), the partner the rest. The device leaves both runs bitonic; here run i is sorted in
//   the direction idir names and the partner in the other,
//   which is one of the bitonic orders and sorts the same under the rebuild that must follow.
// - rebuild (idir, m_iter, k): the runs of k positions 2^(m_iter+1) runs apart (0, 2^(m_iter+1),
//   ...) are sorted in alternating directions starting with idir (0 decreasing); with
//   skip_second, runs in the second tile are left alone. The device only sorts a bitonic run
//   correctly; a full sort gives the same result on every input it handles.
//
// Equal values: the device network is not stable (only its stable_sort mode orders ties, and that
// mode is not emulated). Here equal values keep their current relative position order in every
// sorted run, a fixed, documented rule; results on inputs with ties in the sort keys may differ
// from a device. -0.0 equals +0.0; a NaN compares as larger than every number.
#pragma once

#include <cstdint>

namespace ttnn_moe::emu::topk {

inline constexpr uint32_t SLAB_POSITIONS = 64;

// One slab: values[t] and index bits[t] for t in {0, 1} point at 32x32 row-major tiles.
struct Slab {
    float* values[2];
    uint32_t* indices[2];
};

// Each throws std::invalid_argument naming a parameter outside the documented range.
void local_sort(Slab slab, int idir, int end_phase, int start_phase);
void merge(Slab slab, int idir, int m_iter, int k);
void rebuild(Slab slab, int idir, int m_iter, int k, int logk, bool skip_second);

}  // namespace ttnn_moe::emu::topk
