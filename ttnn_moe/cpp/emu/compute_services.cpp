// Compute services of the kernel ABI: each compute kernel instance owns a
// ComputeEngine that reads and writes tiles through its core's CB rings.
#include <bit>
#include <optional>
#include <string>

#include "emu/compute/compute_engine.hpp"
#include "emu/services.hpp"

namespace ttnn_moe::emu {

// The CB rings of one core as the compute engine sees them: tile i lies i tiles past the read
// (front) or write (back) pointer. Like the hardware's unpacker and packer, which address
// fifo pointer + i * tile size, it never wraps: a tile past the ring's end is an error here,
// where on a device it would read or overwrite whatever follows the CB in L1.
class CbTileAccessImpl : public CbTileAccess {
public:
    explicit CbTileAccessImpl(CoreState& core) : core_(core) {}

    const uint8_t* front_tile(uint32_t cb, uint32_t tile_index) override {
        uint8_t* tile = at(cb, state(cb).rd, tile_index, "read");
        check_written(cb, tile, tile_index, "unpacking tile ");
        return tile;
    }
    const uint8_t* front_tile_bytes(uint32_t cb, uint32_t tile_index, const ByteRange* ranges, size_t count) override {
        uint8_t* tile = at(cb, state(cb).rd, tile_index, "read");
        if (!core_.l1_shadow) return tile;
        const uint32_t offset = static_cast<uint32_t>(tile - core_.l1);
        for (size_t i = 0; i < count; ++i) {
            services::check_written_l1(
                core_, offset + ranges[i].offset, ranges[i].size,
                "unpacking the broadcast part of tile " + std::to_string(tile_index) + " of CB " + std::to_string(cb));
        }
        return tile;
    }
    uint8_t* back_tile(uint32_t cb, uint32_t tile_index) override {
        uint8_t* tile = at(cb, state(cb).wr, tile_index, "write");
        if (core_.l1_shadow) {
            services::mark_written_l1(core_, static_cast<uint32_t>(tile - core_.l1), state(cb).page_size);
        }
        return tile;
    }
    uint8_t* accumulated_tile(uint32_t cb, uint32_t tile_index) override {
        uint8_t* tile = at(cb, state(cb).wr, tile_index, "write");
        check_written(cb, tile, tile_index, "accumulating (pack_reconfig_l1_acc) into tile ");
        return back_tile(cb, tile_index);
    }
    program::DataFormat format(uint32_t cb) override { return state(cb).format; }
    uint32_t tile_size(uint32_t cb) override { return state(cb).page_size; }

private:
    CbState& state(uint32_t cb) { return services::cb(cb); }
    uint8_t* at(uint32_t cb, uint32_t pointer, uint32_t tile_index, const char* side) {
        const CbState& s = state(cb);
        const uint64_t offset =
            static_cast<uint64_t>(pointer - s.base) + static_cast<uint64_t>(tile_index) * s.page_size;
        if (offset + s.page_size > s.size) {
            services::fail("compute reached tile " + std::to_string(tile_index) + " of CB " + std::to_string(cb) +
                           " from its " + side + " pointer (ring offset " + std::to_string(pointer - s.base) +
                           "), past the end of its " + std::to_string(s.size) +
                           "-byte ring: the device does not wrap tile indices around a CB");
        }
        return core_.l1 + s.base + offset;
    }
    void check_written(uint32_t cb, const uint8_t* tile, uint32_t tile_index, const char* what) {
        if (!core_.l1_shadow) return;
        services::check_written_l1(core_, static_cast<uint32_t>(tile - core_.l1), state(cb).page_size,
                                   what + std::to_string(tile_index) + " of CB " + std::to_string(cb));
    }
    CoreState& core_;
};

Instance::Instance() = default;
Instance::~Instance() = default;

void Run::attach_compute(Instance& inst) {
    inst.cb_access = std::make_unique<CbTileAccessImpl>(*inst.core);
    inst.compute =
        std::make_unique<ComputeEngine>(*inst.cb_access, std::get<program::ComputeConfigDescriptor>(inst.desc->config));
}

void Run::collect_compute_counters(Instance& inst) {
    Counters& c = counters_of(*inst.core);
    c.tile_matmuls += inst.compute->tile_matmuls();
    c.tiles_packed += inst.compute->tiles_packed();
}

namespace services {
namespace {

ComputeEngine& engine() {
    Instance& inst = instance();
    if (!inst.compute) fail("compute API called from a dataflow kernel");
    count_call();
    return *inst.compute;
}

// The device-time model's side of each compute call (emu/timing/time_model.hpp).
timing::TimeModel& time() {
    return run().time();
}
const program::ComputeConfigDescriptor& config() {
    return std::get<program::ComputeConfigDescriptor>(instance().desc->config);
}
uint64_t tile_bytes(uint32_t cb) {
    return services::cb(cb).page_size;
}

void c_startup(uint32_t icb0, uint32_t icb1, uint32_t ocb) {
    engine();
    instance().matmul_transpose = 0;
}
void c_matmul_init(uint32_t transpose) {
    engine();
    instance().matmul_transpose = transpose;
}
void c_acquire() {
    engine().tile_regs_acquire();
    time().dst_acquire(instance(), config().dst_full_sync_en);
}
void c_commit() {
    engine().tile_regs_commit();
    time().dst_commit(instance());
}
void c_wait() {
    engine().tile_regs_wait();
    time().dst_wait(instance());
}
void c_release() {
    engine().tile_regs_release();
    time().dst_release(instance());
}
void c_copy(uint32_t cb, uint32_t tile, uint32_t dst) {
    engine().copy_tile(cb, tile, dst);
    time().unpack_math(instance(), tile_bytes(cb), time().arch().datacopy_tile_cycles);
}
void c_matmul(uint32_t a, uint32_t b, uint32_t ia, uint32_t ib, uint32_t dst) {
    ComputeEngine& e = engine();
    e.matmul_tiles(a, b, ia, ib, dst, instance().matmul_transpose != 0);
    const auto fidelity = static_cast<uint32_t>(config().math_fidelity);
    time().unpack_math(instance(), tile_bytes(a) + tile_bytes(b), time().arch().matmul_cycles(fidelity));
}
void c_matmul_block(uint32_t a, uint32_t b, uint32_t ia, uint32_t ib, uint32_t dst, uint32_t transpose, uint32_t ct_dim,
                    uint32_t rt_dim, uint32_t kt_dim) {
    engine().matmul_block(a, b, ia, ib, dst, transpose != 0, ct_dim, rt_dim, kt_dim);
    // One inner step, unpacked as the LLK does (llk_unpack_AB_matmul.h): the operand along the block's shorter
    // side is held, two tiles at a time in the two banks of its source register (A's rt_dim tiles when
    // ct_dim >= rt_dim, else B's ct_dim), and for each pair the other operand's tiles along the longer side
    // stream past once: held + ceil(held / 2) x streamed tiles. Then rt_dim x ct_dim tile matmuls.
    const bool hold_a = ct_dim >= rt_dim;
    const uint64_t held = hold_a ? rt_dim : ct_dim;
    const uint64_t streamed = (held + 1) / 2 * (hold_a ? ct_dim : rt_dim);
    const uint64_t unpacked =
        hold_a ? held * tile_bytes(a) + streamed * tile_bytes(b) : held * tile_bytes(b) + streamed * tile_bytes(a);
    const auto fidelity = static_cast<uint32_t>(config().math_fidelity);
    time().unpack_math(instance(), unpacked,
                       static_cast<uint64_t>(rt_dim) * ct_dim * time().arch().matmul_cycles(fidelity));
}
void c_binary(ttnn_moe_emu::BinaryOp op, ttnn_moe_emu::Broadcast bcast, uint32_t a, uint32_t b, uint32_t ia,
              uint32_t ib, uint32_t dst) {
    engine().binary_tiles(static_cast<numerics::BinaryOp>(op), static_cast<numerics::Broadcast>(bcast), a, b, ia, ib,
                          dst, instance().binary_acc_to_dest);
    // An FPU multiply takes one pass per fidelity phase; add and sub one.
    const uint32_t phases = op == ttnn_moe_emu::BinaryOp::Mul
                                ? timing::ArchParams::fidelity_phases(static_cast<uint32_t>(config().math_fidelity))
                                : 1;
    time().unpack_math(instance(), tile_bytes(a) + tile_bytes(b), phases * time().arch().eltwise_tile_cycles);
}
void c_unary(ttnn_moe_emu::UnaryOp op, uint32_t dst) {
    engine().unary_tile(static_cast<numerics::UnaryOp>(op), dst);
    time().math_only(instance(), time().arch().sfpu_tile_cycles.at(static_cast<size_t>(op)));
}
void c_binary_dst(ttnn_moe_emu::BinaryOp op, uint32_t idst0, uint32_t idst1, uint32_t odst) {
    engine().binary_dst_tiles(static_cast<numerics::BinaryOp>(op), idst0, idst1, odst);
    time().math_only(instance(), time().arch().sfpu_binary_tile_cycles);
}
void c_pack(uint32_t dst, uint32_t cb, uint32_t out_index, uint32_t out_of_order) {
    engine().pack_tile(dst, cb, out_of_order ? std::optional<uint32_t>(out_index) : std::nullopt);
    time().pack(instance(), tile_bytes(cb));
}
// tilize / untilize: n tiles (of the tiled CB's size) through unpack, a datacopy each, and pack.
void time_block(uint32_t tiled_cb, uint32_t n) {
    const uint64_t bytes = static_cast<uint64_t>(n) * tile_bytes(tiled_cb);
    time().unpack_math(instance(), bytes, static_cast<uint64_t>(n) * time().arch().datacopy_tile_cycles);
    time().pack(instance(), bytes);
}
void c_tilize(uint32_t in, uint32_t n, uint32_t out) {
    engine().tilize_block(in, n, out);
    time_block(out, n);
}
void c_untilize(uint32_t in, uint32_t n, uint32_t out) {
    engine().untilize_block(in, n, out);
    time_block(in, n);
}
// The packer untilizes on its way out of DST: the pack of each tile, no extra math.
void c_pack_untilize_dest(uint32_t cb, uint32_t block_rt, uint32_t block_ct, uint32_t full_ct, uint32_t c_index) {
    engine().pack_untilize_dest(cb, block_rt, block_ct, full_ct, c_index);
    const uint64_t tiles = static_cast<uint64_t>(block_rt) * block_ct;
    time().pack(instance(), tiles * numerics::TILE_ELEMENTS * numerics::element_bytes(services::cb(cb).format));
}

void c_transpose(uint32_t cb, uint32_t tile, uint32_t dst) {
    engine().transpose_tile(cb, tile, dst);
    // The unpacker transposes within faces on the way to DST and the A2D move swaps faces: a datacopy.
    time().unpack_math(instance(), tile_bytes(cb), time().arch().datacopy_tile_cycles);
}
// unary_bcast: the unpacker broadcasts into SrcB and a B2D datacopy moves it to DST.
void c_unary_bcast(ttnn_moe_emu::Broadcast bcast, uint32_t cb, uint32_t tile, uint32_t dst) {
    engine().unary_bcast_tile(static_cast<numerics::Broadcast>(bcast), cb, tile, dst);
    time().unpack_math(instance(), tile_bytes(cb), time().arch().datacopy_tile_cycles);
}
void c_binary_acc_to_dest(uint32_t enable) {
    engine();
    instance().binary_acc_to_dest = enable != 0;
}
void c_reduce(uint32_t dim, uint32_t cb, uint32_t cb_scaler, uint32_t tile, uint32_t scaler_tile, uint32_t dst) {
    if (dim > 2) fail("reduce_tile: unknown ReduceDim " + std::to_string(dim));
    engine().reduce_tile(static_cast<ComputeEngine::ReduceDim>(dim), cb, cb_scaler, tile, scaler_tile, dst);
    // The FPU reduces with a matrix multiply by the scaler tile (MVMUL / GAPOOL): a tile matmul's cost.
    const auto fidelity = static_cast<uint32_t>(config().math_fidelity);
    time().unpack_math(instance(), tile_bytes(cb) + tile_bytes(cb_scaler), time().arch().matmul_cycles(fidelity));
}
// Compare-and-swap steps of each stage's network over the slab (ckernel_sfpu_topk.h): the local sort
// runs phases 0..end_phase with phase p taking p + 1 steps, a merge one step, a rebuild logk steps.
uint64_t topk_steps(uint32_t stage, int32_t p0, int32_t p2) {
    if (stage == 0) return static_cast<uint64_t>(p0 + 1) * (p0 + 2) / 2;
    if (stage == 1) return 1;
    return static_cast<uint64_t>(p2);
}
void c_topk(uint32_t stage, uint32_t idst, int32_t idir, int32_t p0, int32_t p1, int32_t p2, int32_t p3) {
    if (stage > 2) fail("topk: unknown stage " + std::to_string(stage));
    engine().topk(static_cast<ComputeEngine::TopkStage>(stage), idst, idir, p0, p1, p2, p3);
    time().math_only(instance(), topk_steps(stage, p0, p2) * time().arch().sfpu_topk_step_cycles);
}

void c_pack_relu_config(uint32_t mode, uint32_t threshold) {
    // tt-metal's ReluType: 0 NO_RELU, 1 ZERO_RELU, 2 MIN_THRESHOLD_RELU, 3 MAX_THRESHOLD_RELU.
    if (mode > 1) {
        fail("pack_relu_config with a threshold ReLU (mode " + std::to_string(mode) + ", threshold " +
             std::to_string(threshold) + ") is not emulated");
    }
    engine().set_pack_relu(mode == 1);
}

void c_fill(uint32_t dst, uint32_t bits) {
    engine().fill_tile(dst, std::bit_cast<float>(bits));
    time().math_only(instance(), time().arch().sfpu_fill_tile_cycles);
}
// SFPU work through the LLK: one SFPU instruction per cycle (isa VectorUnit.md, as sfpu_tile_cycles assumes),
// counted by the kernel's sfpi as it runs, on the thread that issued it.
float* c_sfpu_dest(uint32_t* tiles) {
    ComputeEngine& e = engine();
    *tiles = e.dst_capacity();
    return e.sfpu_dest("SFPU call");
}
void c_sfpu_done(uint32_t tiles_loaded, uint32_t tiles_stored, uint64_t instructions) {
    ComputeEngine& e = engine();
    e.sfpu_done(tiles_loaded, tiles_stored);
    time().sfpu(instance(), e.held_by_packer(), instructions);
}
void c_tensix_instruction(ttnn_moe_emu::TensixInstruction op, uint32_t a, uint32_t b, uint32_t c) {
    using ttnn_moe_emu::TensixInstruction;
    constexpr uint32_t kMathPackSemaphore = 1u << 1;  // semaphore::t6_sem(MATH_PACK)
    constexpr uint32_t kStallOnZero = 1;
    constexpr uint32_t kDestTargetRegCfgMathOffset = 1;  // DEST_TARGET_REG_CFG_MATH_Offset_ADDR32
    ComputeEngine& e = engine();
    switch (op) {
        case TensixInstruction::SemWait:
            if (b != kMathPackSemaphore || c != kStallOnZero)
                fail("TTI_SEMWAIT on semaphore mask " + std::to_string(b) + " with condition " + std::to_string(c) +
                     " is not modelled (only the packer's wait on MATH_PACK, STALL_ON_ZERO)");
            e.packer_wait_for_math();
            time().dst_wait(instance());
            return;
        case TensixInstruction::SetC16:
            if (a != kDestTargetRegCfgMathOffset)
                fail("TT_SETC16 of configuration register " + std::to_string(a) + " (value " + std::to_string(b) +
                     ") is not modelled (only DEST_TARGET_REG_CFG_MATH_Offset_ADDR32)");
            e.set_sfpu_dest_offset(b);
            return;
        case TensixInstruction::ZeroAcc:
            e.zero_dest();
            time().math_only(instance(), time().arch().datacopy_tile_cycles * e.dst_capacity());
            return;
    }
    fail("unknown Tensix instruction " + std::to_string(static_cast<uint32_t>(op)));
}
uint32_t c_packer_dest_offset() {
    return engine().packer_dest_offset();
}

void c_pack_l1_acc(uint32_t enable) {
    engine().set_pack_l1_acc(enable != 0);
}

}  // namespace

void fill_compute_services(ttnn_moe_emu::Services& t) {
    t.compute_hw_startup = &c_startup;
    t.matmul_init = &c_matmul_init;
    t.tile_regs_acquire = &c_acquire;
    t.tile_regs_commit = &c_commit;
    t.tile_regs_wait = &c_wait;
    t.tile_regs_release = &c_release;
    t.copy_tile = &c_copy;
    t.matmul_tiles = &c_matmul;
    t.matmul_block = &c_matmul_block;
    t.binary_tiles = &c_binary;
    t.unary_tile = &c_unary;
    t.binary_dst_tiles = &c_binary_dst;
    t.pack_tile = &c_pack;
    t.tilize_block = &c_tilize;
    t.untilize_block = &c_untilize;
    t.pack_untilize_dest = &c_pack_untilize_dest;
    t.pack_relu_config = &c_pack_relu_config;
    t.pack_l1_acc = &c_pack_l1_acc;
    t.transpose_tile = &c_transpose;
    t.unary_bcast_tile = &c_unary_bcast;
    t.binary_acc_to_dest = &c_binary_acc_to_dest;
    t.reduce_tile = &c_reduce;
    t.topk = &c_topk;
    t.fill_tile = &c_fill;
    t.sfpu_dest = &c_sfpu_dest;
    t.sfpu_done = &c_sfpu_done;
    t.tensix_instruction = &c_tensix_instruction;
    t.packer_dest_offset = &c_packer_dest_offset;
}
}  // namespace services

}  // namespace ttnn_moe::emu
