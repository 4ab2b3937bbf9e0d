// What the program factories of moe_gate and its kernels (kernels/moe_gate/: teams:
// dataflow/reader_gate_inputs.cpp, compute/gate_scores.cpp, dataflow/writer_topk.cpp,
// dataflow/writer_send_scores.cpp; the resident split: dataflow/reader_gate_resident.cpp,
// compute/gate_scores_resident.cpp, dataflow/writer_gate_x_multicast.cpp) must agree on. Included by both
// sides: plain C++17, no device or host headers.
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

// Runtime args of the top-k (writer_topk.cpp, and the ranking part of reader_gate_resident.cpp from its
// routing_base on): the bias, the outputs and the routing.
namespace routing_arg {
enum : uint32_t {
    kBiasAddr,
    kIndicesAddr,
    kWeightsAddr,
    kBiasPageBytes,  // DRAM-aligned page sizes (the bank stride of each tensor's pages)
    kIndicesPageBytes,
    kWeightsPageBytes,
    kStatusAddr,  // gate_status
    kStatusPageBytes,
    kNumTokens,    // T: rows of the last row tile past T are not written
    kNumExperts,   // E
    kNumGroups,    // n_group
    kTopkGroups,   // topk_group
    kTopK,         // K
    kNormalize,    // 1: weights divided by their sum (norm_topk_prob)
    kScalingBits,  // routed_scaling_factor, fp32 bits
    kIndexBytes,   // 4: topk_indices in uint32, 2: in uint16
    kCount,
};
}  // namespace routing_arg

// Per-core runtime args of the writer of a team's ranker: its row tiles of x, then the routing.
namespace writer_arg {
enum : uint32_t {
    kXAddr,
    kInnerTiles,
    kInnerBlock,
    kFirstRowTile,
    kNumRowTiles,
    kNumSenders,  // the team's other cores, whose score tiles this core waits for
    kRouting,     // routing_arg from here
    kCount = kRouting + routing_arg::kCount,
};
}  // namespace writer_arg

// The resident split, for many row tiles: a grid of split_rows x split_cols cores. Grid column j holds
// its contiguous, balanced range of the expert tiles; its weight tiles are read from DRAM once, by the
// column's first core, and multicast down the column into every core's cb_w, where they stay for the
// whole op (in k-block order: block b holds the column's expert tiles' b-th inner_block tiles). Grid row
// i holds a contiguous, balanced range of the row tiles; their x streams through cb_x block by block,
// in rounds of a block per column: the round's blocks are read from DRAM at once, the row's n-th block
// by its column n % split_cols, and multicast along the row in turn. A core keeps the score
// tiles of its expert tiles in DST over the whole of H (at most kMaxResidentExpertTiles), so x streams
// through once per row tile and every score keeps the one-core accumulation order. Row tile q of a grid
// row (its q-th) is ranked by the row's column q % split_cols: that core reads the other columns' score
// tiles from the same cb_scores slot of theirs (all push the same slots) and frees them.
inline constexpr uint32_t kMaxResidentExpertTiles = 4;  // fp32 tiles DST holds in half-sync mode
// Rounds of x blocks in cb_x in the resident split (a round: a block per grid column): the cores read the
// next round from DRAM while the compute kernels work through this one.
inline constexpr uint32_t kXStreamRounds = 2;

// Per-core runtime args of the resident split's x stream (writer_gate_x_multicast.cpp, RISC-V 0 / NOC 0),
// then the NOC x coordinate of each grid column of the split from kColumnNocXs on.
namespace x_stream_arg {
enum : uint32_t {
    kXAddr,
    kInnerTiles,
    kInnerBlock,
    kFirstRowTile,  // the grid row's row tiles
    kNumRowTiles,
    kSplitCols,  // columns of the split, this core's column and its row's NOC y
    kSplitCol,
    kRowNocY,
    kColumnNocXs,
};
}  // namespace x_stream_arg

// Per-core runtime args of the resident split's reader (reader_gate_resident.cpp, RISC-V 1 / NOC 1): the
// weight column in, then the ranking of this core's share of the row tiles; then the routing
// (routing_arg) from kRouting on, then the NOC x coordinate of each grid column of the split.
namespace resident_arg {
enum : uint32_t {
    kGateWeightAddr,
    kInnerTiles,
    kInnerBlock,
    kFirstExpertTile,  // this column's expert tiles
    kNumExpertTiles,
    kWeightReceivers,  // on the column's first core: the column's other cores (0: none); elsewhere 0
    kIsWeightSender,   // 1 on the column's first core
    kColumnNocX,       // the multicast rectangle: the column's second core to its last
    kColumnStartNocY,
    kColumnEndNocY,
    kFirstRowTile,  // the grid row's row tiles
    kNumRowTiles,
    kSplitCols,  // columns of the split; this core's column and its row's NOC y
    kSplitCol,
    kRowNocY,
    kRouting,  // routing_arg from here, then kSplitCols NOC x coordinates
    kColumnNocXs = kRouting + routing_arg::kCount,
};
}  // namespace resident_arg

// Per-core runtime args of the resident split's compute kernel (compute/gate_scores_resident.cpp).
namespace resident_compute_arg {
enum : uint32_t {
    kNumRowTiles,
    kInnerTiles,
    kInnerBlock,
    kFirstExpertTile,  // packed at their place in each row tile's slot of Et tiles
    kNumExpertTiles,
    kExpertTiles,  // Et
    kCount,
};
}  // namespace resident_compute_arg

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
// ranker: the senders' score tiles have landed (team) or are ready to be read (resident split)
inline constexpr const char* kSemScoresIn = "sem_scores_in";
// resident split: the ranker has read this core's score tiles of the row tile
inline constexpr const char* kSemScoresTaken = "sem_scores_taken";
// resident split: x multicast handshake (row's first core counts its ready receivers; a receiver's
// flag is set when the block has landed) and the weight blocks multicast so far (a column's cores)
inline constexpr const char* kSemXReady = "sem_x_ready";
inline constexpr const char* kSemXValid = "sem_x_valid";
inline constexpr const char* kSemWeightBlocks = "sem_weight_blocks";
}  // namespace named_arg

}  // namespace ttnn_moe::moe_gate_shared
