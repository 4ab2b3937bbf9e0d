// The compute side of one emulated Tensix core: the DST register file, the
// unpack -> math -> pack path, and the acquire/commit/wait/release discipline.
//
// The three TRISCs of a compute kernel run as ONE sequential context in the
// emulator, so the kernel-API layer calls this engine in program order. The
// engine owns no circular buffers: it reads and writes tiles through
// CbTileAccess (the emulator's CB rings), which also tells it each CB's format.
//
// Numerics (see numerics.hpp): unpack converts the CB format to fp32, math is
// fp32, DST is rounded to bf16 after every math op unless fp32_dest_acc_en,
// and pack rounds to the output CB's format.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "emu/compute/matmul_worker.hpp"
#include "emu/numerics/numerics.hpp"
#include "program/program_descriptor.hpp"

namespace ttnn_moe::emu {

// The emulator's circular buffers as the compute engine sees them. Tile
// indices are relative to the CB's read pointer (front) or write pointer
// (back), exactly like the tile_index arguments of the compute API.
struct ByteRange {
    uint32_t offset;
    uint32_t size;
};

struct CbTileAccess {
    virtual ~CbTileAccess() = default;
    virtual const uint8_t* front_tile(uint32_t cb, uint32_t tile_index) = 0;
    virtual uint8_t* back_tile(uint32_t cb, uint32_t tile_index) = 0;
    // A front tile of which only `count` byte ranges {offset, size} are read (a broadcast operand);
    // the emulator checks those were written.
    virtual const uint8_t* front_tile_bytes(uint32_t cb, uint32_t tile_index, const ByteRange* ranges, size_t count) {
        (void)ranges, (void)count;
        return front_tile(cb, tile_index);
    }
    // A back tile the packer reads before writing (L1 accumulation); the emulator checks it was written.
    virtual uint8_t* accumulated_tile(uint32_t cb, uint32_t tile_index) { return back_tile(cb, tile_index); }
    virtual program::DataFormat format(uint32_t cb) = 0;
    virtual uint32_t tile_size(uint32_t cb) = 0;
};

class ComputeEngine {
public:
    // Physical DST: 16 tiles of 32x32 values; how many a kernel may use depends on the config.
    static constexpr uint32_t DST_SLOTS = 16;

    ComputeEngine(CbTileAccess& cbs, const program::ComputeConfigDescriptor& config);
    ~ComputeEngine();
    ComputeEngine(const ComputeEngine&) = delete;
    ComputeEngine& operator=(const ComputeEngine&) = delete;

    // DST ownership, in this order: acquire (zeroes DST) -> math ops -> commit
    // -> wait -> pack_tile -> release. Anything else is an EmuError.
    void tile_regs_acquire();
    void tile_regs_commit();
    void tile_regs_wait();
    void tile_regs_release();

    void copy_tile(uint32_t cb, uint32_t tile_index, uint32_t dst);
    // DST[dst] = cb[tile_index] transposed (transpose_wh_tile: rows become columns); integer tiles keep their bits.
    void transpose_tile(uint32_t cb, uint32_t tile_index, uint32_t dst);
    // DST[dst] += A @ B (B transposed when transpose_b), A = cb_a[ia], B = cb_b[ib].
    void matmul_tiles(uint32_t cb_a, uint32_t cb_b, uint32_t ia, uint32_t ib, uint32_t dst, bool transpose_b);
    // One inner-dimension step of a block matmul, as the 0.81.1 LLK does it:
    // for r < rt_dim, c < ct_dim: DST[dst + r*ct_dim + c] += A[ia + r*kt_dim] @ B[ib + c].
    void matmul_block(uint32_t cb_a, uint32_t cb_b, uint32_t ia, uint32_t ib, uint32_t dst, bool transpose,
                      uint32_t ct_dim, uint32_t rt_dim, uint32_t kt_dim);
    // Add and sub: DST[dst] = A op bcast(B), or DST[dst] += A op bcast(B) with acc_to_dest (the binary init's
    // flag). Mul: DST[dst] += A * bcast(B) always (ELWMUL accumulates; acc_to_dest does not change it).
    void binary_tiles(numerics::BinaryOp op, numerics::Broadcast bcast, uint32_t cb_a, uint32_t cb_b, uint32_t ia,
                      uint32_t ib, uint32_t dst, bool acc_to_dest = false);
    // reduce_tile SUM/AVG (the scaler carries 1/N): DST[dst] += the weighted reduction of cb_a[ia] along
    // `dim`, weights from row 0 of cb_scaler[is] (REDUCE_ROW: column 0 gets sum_c a[r][c] * w[c];
    // REDUCE_COL: row 0 gets sum_r a[r][c] * w[r]; REDUCE_SCALAR: [0][0] gets sum a * w[0]).
    enum class ReduceDim : uint8_t { Row, Col, Scalar };
    void reduce_tile(ReduceDim dim, uint32_t cb_a, uint32_t cb_scaler, uint32_t ia, uint32_t is, uint32_t dst);
    // The bitonic top-k stages on the slab at DST idst..idst+3 (topk_slab.hpp).
    enum class TopkStage : uint8_t { LocalSort, Merge, Rebuild };
    void topk(TopkStage stage, uint32_t idst, int idir, int p0, int p1, int p2, int p3);
    // unary_bcast: the tile's broadcast part (row 0, column 0 or element (0, 0)) spread over a DST tile.
    void unary_bcast_tile(numerics::Broadcast bcast, uint32_t cb, uint32_t tile_index, uint32_t dst);
    void unary_tile(numerics::UnaryOp op, uint32_t dst);
    // Every element of DST tile `dst` set to `value` (the SFPU fill).
    void fill_tile(uint32_t dst, float value);
    // DST[odst] = DST[idst0] op DST[idst1] (the SFPU binary ops on DST tiles).
    void binary_dst_tiles(numerics::BinaryOp op, uint32_t idst0, uint32_t idst1, uint32_t odst);

    // ---- SFPU work through the LLK and the PACK thread's hand-off (tensix_sync.h)
    // The DST tiles the SFPU of the thread issuing a call addresses: the MATH thread's while DST is acquired
    // for math, the PACK thread's while the packer holds DST and pointed its SFPU at that half.
    float* sfpu_dest(const char* op);
    // After an SFPU call: the tiles it read must hold floats; the tiles it wrote do.
    void sfpu_done(uint32_t tiles_loaded, uint32_t tiles_stored);
    // True while DST is the packer's (SFPU work then runs on the PACK thread).
    bool held_by_packer() const { return phase_ == Phase::Pack; }
    // TTI_SEMWAIT on the MATH_PACK semaphore: the packer waits for math's commit (tile_regs_wait).
    void packer_wait_for_math();
    // TT_SETC16(DEST_TARGET_REG_CFG_MATH_Offset_ADDR32, offset) by the PACK thread.
    void set_sfpu_dest_offset(uint32_t offset);
    // The DST row offset of the half the packer holds (get_packer_dest_offset): half-sync DST alternates
    // halves at every release.
    uint32_t packer_dest_offset() const;
    // ZEROACC of all of DST by the MATH thread.
    void zero_dest();
    // Wormhole's DEST_REGISTER_HALF_SIZE: DST rows of one half (16 rows per face, 64 per tile).
    static constexpr uint32_t DEST_HALF_ROWS = 512;

    // Packs DST[dst] into cb's back. out_tile_index nullopt: the next sequential
    // slot since the last push_back of that CB.
    void pack_tile(uint32_t dst, uint32_t cb, std::optional<uint32_t> out_tile_index);
    // Packer ReLU for later pack_tile calls: negative values pack as +0 (tt-metal's ZERO_RELU).
    void set_pack_relu(bool zero_relu) { pack_relu_ = zero_relu; }
    // Packer L1 accumulation for later pack_tile calls: the packed value is added to the CB's tile.
    void set_pack_l1_acc(bool enable) { pack_l1_acc_ = enable; }
    // The kernel pushed cb: its sequential pack position restarts at 0.
    void on_push_back(uint32_t cb);

    // cb_in front: 32 row-major rows of ntiles*32 elements -> ntiles tiles at cb_out's back.
    void tilize_block(uint32_t cb_in, uint32_t ntiles, uint32_t cb_out);
    // cb_in front: ntiles tiles -> 32 row-major rows of ntiles*32 elements at cb_out's back.
    void untilize_block(uint32_t cb_in, uint32_t ntiles, uint32_t cb_out);
    // The packer's untilize of DST (pack_untilize_dest): DST tiles 0 .. block_rt*block_ct - 1, a row-major
    // block_rt x block_ct block of tiles, become row-major rows at cb's write pointer: block_rt*32 rows of
    // full_ct*32 elements, this block in the columns of tile column block c_index.
    void pack_untilize_dest(uint32_t cb, uint32_t block_rt, uint32_t block_ct, uint32_t full_ct, uint32_t c_index);

    uint64_t tile_matmuls() const { return tile_matmuls_; }
    uint64_t tiles_packed() const { return tiles_packed_; }
    // DST slots usable under this config (8/4 half-sync, 16/8 full-sync).
    uint32_t dst_capacity() const { return dst_capacity_; }

private:
    enum class Phase : uint8_t { Idle, Math, Committed, Pack };
    // What a DST slot holds since the last acquire: integer bit patterns must
    // not meet arithmetic or a float format.
    enum class SlotKind : uint8_t { Zero, Float, Integer };

    static const char* phase_description(Phase phase);
    void require_phase(Phase want, const char* op, const char* rule) const;
    // DST tile `dst` for reading or writing: the queued matmuls have landed in DST.
    float* dst_slot(uint32_t dst, const char* op);
    void check_dst_index(uint32_t dst, const char* op) const;
    // Completes this engine's matmuls queued on the worker thread (MatmulWorker::finish).
    void settle();
    // A matmul step of rows x cols DST tiles from `dst` (formats checked).
    MatmulJobShape matmul_shape(uint32_t cb_a, uint32_t cb_b, uint32_t dst, bool transpose_b, uint32_t rows,
                                uint32_t cols, const char* op);
    // The products of one matmul step (rows x cols DST tiles from `dst`), queued or run here.
    void multiply(const MatmulJobShape& shape, uint32_t dst, const uint8_t* const* a_tiles,
                  const uint8_t* const* b_tiles);
    // Format of a CB read or written as tiles (supported, page size = one tile).
    program::DataFormat tile_format(uint32_t cb, const char* op);
    program::DataFormat float_tile_format(uint32_t cb, const char* op);
    program::DataFormat row_major_format(uint32_t cb, const char* op);
    void require_integer_fits_dst(uint32_t cb, program::DataFormat format, const char* op) const;
    void require_not_integer_slot(uint32_t dst, const char* op) const;
    void require_same_kind(uint32_t cb_in, program::DataFormat in, uint32_t cb_out, program::DataFormat out,
                           const char* op) const;
    // Start of `bytes` contiguous bytes at the CB's front / back (error if they wrap the ring).
    const uint8_t* front_span(uint32_t cb, size_t bytes, const char* op);
    uint8_t* back_span(uint32_t cb, uint32_t first_page, size_t bytes, const char* op);
    const uint8_t* broadcast_operand(program::DataFormat format, numerics::Broadcast bcast, uint32_t cb,
                                     uint32_t tile_index);
    // Marks a DST tile as float and rounds it to what DST holds (bf16 without fp32_dest_acc_en).
    void finish_math(uint32_t dst);
    void through_dst(float* tile) const;

    using Tile = std::array<float, numerics::TILE_ELEMENTS>;

    CbTileAccess& cbs_;
    bool fp32_dest_;
    bool full_sync_;
    uint32_t dst_capacity_;
    Phase phase_ = Phase::Idle;
    std::array<Tile, DST_SLOTS> dst_{};
    std::array<SlotKind, DST_SLOTS> slot_kind_{};
    // Unpacked operands and staging (32x32 row-major each).
    Tile operand_a_{};
    Tile operand_b_{};
    Tile scratch_{};
    // Matmuls run on the worker thread when there is one, else here with the calling thread's
    // operand buffers (MatmulScratch::of_this_thread).
    MatmulWorker* worker_;
    std::vector<uint64_t> queued_jobs_;  // in submission order
    // Next sequential back slot of each CB for pack_tile without an index.
    std::unordered_map<uint32_t, uint32_t> pack_position_;
    uint64_t tile_matmuls_ = 0;
    uint64_t tiles_packed_ = 0;
    bool pack_relu_ = false;
    bool pack_l1_acc_ = false;
    // The packer's DST half (half-sync: flips at every release) and whether the PACK thread's SFPU was
    // pointed at it since the packer took DST.
    uint32_t packer_half_ = 0;
    bool pack_sfpu_targets_packer_half_ = false;
};

}  // namespace ttnn_moe::emu
