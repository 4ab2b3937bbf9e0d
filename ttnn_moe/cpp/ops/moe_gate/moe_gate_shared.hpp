// What the program factory of moe_gate and its kernels (kernels/moe_gate/{dataflow/reader_gate_inputs.cpp,
// compute/gate_scores.cpp, dataflow/writer_topk.cpp, dataflow/writer_send_scores.cpp}) must agree
// on. Included by both sides: plain C++17, no device or host headers.
#pragma once

#include <cstdint>

namespace ttnn_moe::moe_gate_shared {

// Rows (and columns) of a tile: a core scores 32 tokens against 32 experts per output tile.
inline constexpr uint32_t kTileRows = 32;
// Limits of the top-k kernel's per-token tables (L1 scratch sized by the factory).
inline constexpr uint32_t kMaxGroups = 32;
inline constexpr uint32_t kMaxTopK = 32;
// Experts uint16 topk_indices can name.
inline constexpr uint32_t kMaxUInt16Experts = 1u << 16;

// Tensors in io order: the 3 inputs then the 3 outputs.
enum Io : uint32_t { kX, kGateWeight, kBias, kTopkIndices, kTopkWeights, kGateStatus, kNumIo };

// Words of a row of the (ceil(T/32), kStatusWords) uint32 gate_status record, one row per token row
// tile (the writer of that tile fills it, so no core waits for another): the row tile's tokens with
// a NaN among their biased scores (score + bias), and the first such token and its first NaN
// expert. kNone: no such token.
inline constexpr uint32_t kNone = 0xFFFFFFFFu;
enum StatusWord : uint32_t { kNanTokens, kFirstNanToken, kFirstNanExpert, kStatusWords };

// The work split: token row tiles go to teams of cores. A team of one core scores and ranks its row
// tiles alone. A larger team has one row tile, every core scoring it against its own contiguous range
// of expert tiles; the team's first core (its ranker) gathers the row tile's Et score tiles in its
// cb_scores: its own are packed there, the others (senders) NOC-write theirs there. Every core's
// cb_scores has slots of Et tiles and every core pushes a whole slot per row tile (its own tiles
// first), so a sender's read pointer is the address of the same slot on its ranker.

// x and the gate weight arrive over both NOCs at once: the writer kernels (RISC-V 0, NOC 0) read the
// row tiles of x into cb_x, the reader (RISC-V 1, NOC 1) streams the gate weight into cb_w, each in
// blocks of inner_block tiles along H, so the first expert tile's matmuls follow both streams.

// Per-core runtime args of the reader: the gate weight's address, this core's row tiles and expert tiles.
namespace reader_arg {
enum : uint32_t {
    kGateWeightAddr,
    kNumRowTiles,      // this core's token row tiles
    kInnerTiles,       // Ht = H / 32
    kFirstExpertTile,  // this core's expert tiles [first, first + count) of the Et = ceil(E / 32)
    kNumExpertTiles,
    kInnerBlock,  // tiles per CB push of cb_w and cb_x (divides Ht)
    kCount,
};
}  // namespace reader_arg

// Per-core runtime args of the compute kernel.
namespace compute_arg {
enum : uint32_t {
    kNumRowTiles,
    kInnerTiles,
    kNumExpertTiles,  // this core's expert tiles, packed first in each slot
    kExpertTiles,     // Et: cb_scores pages pushed per row tile (the rest are the other cores')
    kInnerBlock,
    kCount,
};
}  // namespace compute_arg

// Per-core runtime args of a team's sender (writer_send_scores.cpp): the team's row tile of x in, then
// its score tiles of it to the same slot of the ranker's cb_scores.
namespace sender_arg {
enum : uint32_t {
    kXAddr,
    kRowTile,  // the team's token row tile
    kInnerTiles,
    kInnerBlock,
    kRankerNocX,  // NOC coordinates of the team's ranker
    kRankerNocY,
    kFirstExpertTile,  // where its tiles go in the ranker's slot
    kNumExpertTiles,
    kExpertTiles,  // Et: cb_scores pages per row tile
    kCount,
};
}  // namespace sender_arg

// Per-core runtime args of the writer (the top-k): addresses, then its row tiles of x and the routing.
namespace writer_arg {
enum : uint32_t {
    kXAddr,
    kInnerTiles,
    kInnerBlock,
    kBiasAddr,
    kIndicesAddr,
    kWeightsAddr,
    kBiasPageBytes,  // DRAM-aligned page sizes (the bank stride of each tensor's pages)
    kIndicesPageBytes,
    kWeightsPageBytes,
    kFirstRowTile,
    kNumRowTiles,
    kNumTokens,    // T: rows of the last row tile past T are not written
    kNumExperts,   // E
    kNumGroups,    // n_group
    kTopkGroups,   // topk_group
    kTopK,         // K
    kNormalize,    // 1: weights divided by their sum (norm_topk_prob)
    kScalingBits,  // routed_scaling_factor, fp32 bits
    kStatusAddr,   // gate_status
    kStatusPageBytes,
    kNumSenders,  // the team's other cores, whose score tiles this core waits for
    kIndexBytes,  // 4: topk_indices in uint32, 2: in uint16
    kCount,
};
}  // namespace writer_arg

// Names of the named compile-time args (CBs and semaphores).
namespace named_arg {
inline constexpr const char* kCbX = "cb_x";              // a row tile of x: Ht bf16 tiles, resident
inline constexpr const char* kCbW = "cb_w";              // gate-weight tiles, two blocks of inner_block
inline constexpr const char* kCbScores = "cb_scores";    // sigmoid scores, fp32 tiles, Et per row tile
inline constexpr const char* kCbBias = "cb_bias";        // writer scratch: the (E,) fp32 bias
inline constexpr const char* kCbBiased = "cb_biased";    // writer scratch: one token's biased scores
inline constexpr const char* kCbIndices = "cb_indices";  // writer staging: 32 rows of K ids, one uint32 row
inline constexpr const char* kCbWeights = "cb_weights";  // writer staging: 32 rows of K bf16
inline constexpr const char* kCbStatus = "cb_status";    // writer staging: one row of gate_status
// ranker: the senders' score tiles have landed (one increment per sender)
inline constexpr const char* kSemScoresIn = "sem_scores_in";
}  // namespace named_arg

}  // namespace ttnn_moe::moe_gate_shared
