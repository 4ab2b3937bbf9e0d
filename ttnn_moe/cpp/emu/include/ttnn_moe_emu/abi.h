// The kernel ABI of the emulator: what a JIT-built kernel .so and the runtime
// in ttnn_moe._C share. A kernel .so exports
//   extern "C" void ttnn_moe_emu_kernel_entry(const ttnn_moe_emu::Services*);
// which stores the table and calls kernel_main(). Every device API call of a
// kernel forwards through this table, so the heavy work runs in _C (-O3) and
// the kernel side stays header-only. Bump ABI_VERSION on any layout change.
#pragma once

#include <cstdint>

namespace ttnn_moe_emu {

struct FabricServices;  // ttnn_moe_emu/fabric_abi.h

inline constexpr uint32_t ABI_VERSION = 17;

// L1 layout shared by runtime and kernels: semaphore i lives at
// L1_SEMAPHORE_BASE + i * L1_SEMAPHORE_STRIDE (one L1 alignment unit each).
inline constexpr uint32_t L1_SEMAPHORE_BASE = 0x18000;
// Bytes of one core's L1 (device_params.hpp's L1_SIZE; kernels tell an L1 offset from a host address by it).
inline constexpr uint32_t L1_SIZE_BYTES = 1464 * 1024;
inline constexpr uint32_t L1_SEMAPHORE_STRIDE = 16;
inline constexpr uint32_t L1_NUM_SEMAPHORES = 16;
// The mailboxes from a data-movement kernel to the TRISCs (ckernel::mailbox_write / mailbox_read), after
// the semaphores: word 0 counts the compute kernel's reads (which TRISC reads next), then per TRISC
// (UNPACK, MATH, PACK) a write count, a read count and L1_MAILBOX_DEPTH data words.
inline constexpr uint32_t L1_MAILBOX_BASE = L1_SEMAPHORE_BASE + L1_NUM_SEMAPHORES * L1_SEMAPHORE_STRIDE;
inline constexpr uint32_t L1_MAILBOX_DEPTH = 4;
inline constexpr uint32_t L1_MAILBOX_WORDS = 2 + L1_MAILBOX_DEPTH;
inline constexpr uint32_t NUM_CIRCULAR_BUFFERS = 32;  // Wormhole
// The fabric packet header pool of the device memory map (dev_mem_map.h's MEM_PACKET_HEADER_POOL_*; Wormhole:
// 16 headers of 144 bytes, half of them for each data-movement RISC), after the mailboxes and below the CBs, so
// nothing a program places lands there. PacketHeaderPool keeps its allocation state in the state block before
// it (a built kernel serves every core that runs it, so that state cannot live in the kernel's statics): per RISC
// the next free byte of its half, the number of routes and per route its first header's offset and size.
inline constexpr uint32_t PACKET_HEADER_MAX_BYTES = 144;
inline constexpr uint32_t NUM_PACKET_HEADERS = 16;
inline constexpr uint32_t NUM_DM_PROCESSORS = 2;
inline constexpr uint32_t PACKET_HEADER_ROUTES_PER_RISC = NUM_PACKET_HEADERS / NUM_DM_PROCESSORS;
inline constexpr uint32_t L1_PACKET_HEADER_POOL_STATE_BASE = 0x18200;
inline constexpr uint32_t L1_PACKET_HEADER_POOL_STATE_WORDS_PER_RISC = 2 + 2 * PACKET_HEADER_ROUTES_PER_RISC;
inline constexpr uint32_t L1_PACKET_HEADER_POOL_BASE = 0x18300;
inline constexpr uint32_t L1_PACKET_HEADER_POOL_SIZE = PACKET_HEADER_MAX_BYTES * NUM_PACKET_HEADERS;
static_assert(L1_MAILBOX_BASE + 4 * (1 + 3 * L1_MAILBOX_WORDS) <= L1_PACKET_HEADER_POOL_STATE_BASE);
static_assert(L1_PACKET_HEADER_POOL_STATE_BASE + 4 * NUM_DM_PROCESSORS * L1_PACKET_HEADER_POOL_STATE_WORDS_PER_RISC <=
              L1_PACKET_HEADER_POOL_BASE);
static_assert(L1_PACKET_HEADER_POOL_BASE % 16 == 0 && L1_PACKET_HEADER_POOL_SIZE % 16 == 0);

// The registers of a NOC command buffer that tt-metal's stateful NOC calls program once (..._set_state,
// noc_async_read_set_trid) and later transfers reuse (..._with_state): api/dataflow/dataflow_api.h.
struct NocCmdBuf {
    uint64_t targ;        // NOC_TARG_ADDR: a read's source, an inline write's destination (coordinates + address)
    uint64_t ret;         // NOC_RET_ADDR: a write's destination (coordinates + address)
    uint32_t len;         // NOC_AT_LEN_BE: bytes per transfer; an inline write's byte enable
    uint32_t data;        // NOC_AT_DATA: an inline write's value
    uint32_t trid;        // NOC_PACKET_TAG: the transaction id of the reads (writes) it issues
    uint32_t programmed;  // nonzero once a set_state call has programmed it
};
inline constexpr uint32_t NOC_NUM_CMD_BUFS = 4;

// Per kernel instance (one kernel on one core), owned by the runtime.
struct KernelEnv {
    const uint32_t* runtime_args;
    uint32_t num_runtime_args;
    const uint32_t* common_args;
    uint32_t num_common_args;
    uint8_t noc_x[2];  // my_x[noc] / my_y[noc]: this core's NOC coordinates
    uint8_t noc_y[2];
    uint32_t logical_x;
    uint32_t logical_y;
    uint32_t l1_base;    // host address of this core's L1 byte 0 (below 4 GiB)
    uint64_t api_calls;  // busy counter, incremented by the runtime
    // Each RISC programs its own command buffers (per NOC), so each kernel instance has its own.
    NocCmdBuf noc_cmd_bufs[2][NOC_NUM_CMD_BUFS];
};

// What a CB query returns (cb_info).
enum class CbField : uint32_t { PageSize = 0, NumPages = 1, TotalSize = 2, Configured = 3 };

// A kernel's view of one CB, laid out as tt-metal's LocalCBInterface
// (get_local_cb_interface). Addresses, sizes and the page size are in bytes on
// the data movement processors and in 16-byte units on TRISC (cb_addr_shift).
struct CbInterface {
    uint32_t fifo_size;
    uint32_t fifo_limit;  // fifo start + fifo_size
    uint32_t fifo_page_size;
    uint32_t fifo_num_pages;
    uint32_t fifo_rd_ptr;
    uint32_t fifo_wr_ptr;
    union {
        uint32_t tiles_acked_received_init;
        struct {
            uint16_t tiles_acked;
            uint16_t tiles_received;
        };
    };
    uint32_t fifo_wr_tile_ptr;
};

// Which barrier (noc_barrier).
enum class Barrier : uint32_t { Read = 0, Write = 1, WritesFlushed = 2, Atomic = 3, Full = 4 };

// Binary/unary ops and broadcasts of the compute services; values match
// ttnn_moe::emu::numerics::BinaryOp / Broadcast / UnaryOp.
enum class BinaryOp : uint32_t { Add = 0, Sub = 1, Mul = 2 };
enum class Broadcast : uint32_t { None = 0, Row = 1, Col = 2, Scalar = 3 };
enum class UnaryOp : uint32_t { Silu = 0, Sigmoid = 1, Exp = 2, Relu = 3, Recip = 4, Neg = 5 };
// Tensix instructions a compute kernel issues itself (ttnn_moe_emu/tensix_sync.h).
enum class TensixInstruction : uint32_t { SemWait = 0, SetC16 = 1, ZeroAcc = 2 };

struct Services {
    uint32_t abi_version;
    KernelEnv* const* current;  // *current is the running kernel's env

    // Errors: both throw (never return) an EmuError naming kernel and core.
    void (*fail)(const char* message);
    void (*arg_out_of_range)(uint32_t index, uint32_t is_common);

    // Circular buffers (dataflow and compute).
    void (*cb_reserve_back)(uint32_t cb, uint32_t num_pages);
    void (*cb_push_back)(uint32_t cb, uint32_t num_pages);
    void (*cb_wait_front)(uint32_t cb, uint32_t num_pages);
    void (*cb_pop_front)(uint32_t cb, uint32_t num_pages);
    uint32_t (*cb_pages_reservable_at_back)(uint32_t cb, uint32_t num_pages);
    uint32_t (*cb_pages_available_at_front)(uint32_t cb, uint32_t num_pages);
    uint32_t (*cb_write_ptr)(uint32_t cb);  // host address (fits 32 bits)
    uint32_t (*cb_read_ptr)(uint32_t cb);
    void (*cb_set_write_ptr)(uint32_t cb, uint32_t addr);
    void (*cb_set_read_ptr)(uint32_t cb, uint32_t addr);
    uint32_t (*cb_info)(uint32_t cb, CbField field);
    // The running kernel's CbInterface of `cb`, valid for the whole run. The
    // runtime refreshes it on every CB call of that kernel; a kernel that moves
    // fifo_rd_ptr / fifo_wr_ptr in it moves the CB's pointer.
    CbInterface* (*cb_interface)(uint32_t cb);

    // NOC. Local addresses are host addresses of the issuing core's L1 (or raw L1 offsets).
    void (*noc_read)(uint64_t src_noc_addr, uint32_t dst_local_addr, uint32_t size);
    void (*noc_write)(uint32_t src_local_addr, uint64_t dst_noc_addr, uint32_t size);
    void (*noc_write_multicast)(uint32_t src_local_addr, uint64_t dst_mcast_addr, uint32_t size, uint32_t num_dests,
                                uint32_t include_src);
    void (*noc_atomic_inc)(uint64_t dst_noc_addr, uint32_t incr);
    void (*noc_atomic_inc_multicast)(uint64_t dst_mcast_addr, uint32_t incr, uint32_t num_dests);
    void (*noc_inline_write)(uint64_t dst_noc_addr, uint32_t value, uint32_t byte_enable);
    void (*noc_barrier)(Barrier which);
    // A read tagged with a transaction id (0..15), and the barrier that waits for the reads of one id only.
    void (*noc_read_with_trid)(uint64_t src_noc_addr, uint32_t dst_local_addr, uint32_t size, uint32_t trid);
    void (*noc_read_barrier_with_trid)(uint32_t trid);

    // Blocks (yields) until *addr == value (at_least = 0) or *addr >= value (at_least = 1). `risc` is the
    // waiting TRISC of a compute kernel (0 UNPACK, 1 MATH, 2 PACK), 0 in a data-movement kernel.
    void (*wait_l1_value)(const volatile uint32_t* addr, uint32_t value, uint32_t at_least, uint32_t risc);
    // A local store of `value` into an L1 word another RISC of the core may wait on (noc_semaphore_set,
    // the Semaphore object's local updates, the mailbox counters), stamped with the storing RISC's clock
    // (`risc` as above). read_modify_write: the value was computed from the word's previous one.
    void (*store_l1_word)(volatile uint32_t* addr, uint32_t value, uint32_t risc, uint32_t read_modify_write);
    // Lets the other kernels run (spin loops on L1 call it).
    void (*yield)();

    // L1 banks of the running core's device (interleaved L1 tensors): how many, and bank b's NOC (y << 8) | x.
    uint32_t (*num_l1_banks)();
    uint32_t (*l1_bank_noc_xy)(uint32_t bank);

    // Compute (one context runs UNPACK, MATH and PACK).
    void (*compute_hw_startup)(uint32_t icb0, uint32_t icb1, uint32_t ocb);
    // matmul_init / matmul_block_init: the transpose flag later matmul_tiles calls use.
    void (*matmul_init)(uint32_t transpose);
    void (*tile_regs_acquire)();
    void (*tile_regs_commit)();
    void (*tile_regs_wait)();
    void (*tile_regs_release)();
    void (*copy_tile)(uint32_t cb, uint32_t tile_index, uint32_t dst);
    void (*matmul_tiles)(uint32_t cb_a, uint32_t cb_b, uint32_t ia, uint32_t ib, uint32_t dst);
    void (*matmul_block)(uint32_t cb_a, uint32_t cb_b, uint32_t ia, uint32_t ib, uint32_t dst, uint32_t transpose,
                         uint32_t ct_dim, uint32_t rt_dim, uint32_t kt_dim);
    void (*binary_tiles)(BinaryOp op, Broadcast bcast, uint32_t cb_a, uint32_t cb_b, uint32_t ia, uint32_t ib,
                         uint32_t dst);
    void (*unary_tile)(UnaryOp op, uint32_t dst);
    // SFPU binary op between two DST tiles: DST[odst] = DST[idst0] op DST[idst1].
    void (*binary_dst_tiles)(BinaryOp op, uint32_t idst0, uint32_t idst1, uint32_t odst);
    void (*pack_tile)(uint32_t dst, uint32_t cb, uint32_t out_tile_index, uint32_t out_of_order);
    void (*tilize_block)(uint32_t cb_in, uint32_t ntiles, uint32_t cb_out);
    void (*untilize_block)(uint32_t cb_in, uint32_t ntiles, uint32_t cb_out);
    // pack_untilize_dest: DST tiles (a block_rt x block_ct block) as row-major rows at cb's write pointer, rows
    // of full_ct tiles, the block in tile column block c_index.
    void (*pack_untilize_dest)(uint32_t cb, uint32_t block_rt, uint32_t block_ct, uint32_t full_ct, uint32_t c_index);
    // Packer ReLU (pack_relu_config): mode as tt-metal's ReluType (0 none, 1 zero, 2/3 thresholds), threshold bits.
    void (*pack_relu_config)(uint32_t mode, uint32_t threshold);
    // Packer L1 accumulation (pack_reconfig_l1_acc): later packs add to the tile already in the CB.
    void (*pack_l1_acc)(uint32_t enable);
    // SFPU fill (fill_tile, fill_tile_bitcast): every element of DST tile `dst` becomes the fp32 value of `bits`.
    void (*fill_tile)(uint32_t dst, uint32_t bits);

    // transpose_wh_tile: DST[dst] = cb[tile_index] transposed.
    void (*transpose_tile)(uint32_t cb, uint32_t tile_index, uint32_t dst);
    // unary_bcast<bcast>: DST[dst] = cb[tile_index] with its row 0, column 0 or element (0, 0) broadcast.
    void (*unary_bcast_tile)(Broadcast bcast, uint32_t cb, uint32_t tile_index, uint32_t dst);
    // The FPU binary init's acc_to_dest: later add_tiles / sub_tiles add their result to DST.
    void (*binary_acc_to_dest)(uint32_t enable);
    // reduce_tile (SUM / AVG) along `dim` (0 row, 1 col, 2 scalar, tt-metal's ReduceDim), accumulating into DST.
    void (*reduce_tile)(uint32_t dim, uint32_t cb, uint32_t cb_scaler, uint32_t tile_index, uint32_t scaler_index,
                        uint32_t dst);
    // A bitonic top-k stage (0 local sort, 1 merge, 2 rebuild) on the DST slab at idst (api/compute/topk.h).
    void (*topk)(uint32_t stage, uint32_t idst, int32_t idir, int32_t p0, int32_t p1, int32_t p2, int32_t p3);

    // SFPU work through the LLK (ttnn_moe_emu/sfpu_llk.h): DST tile 0 of the half the issuing thread's SFPU
    // addresses (32x32 row-major fp32 values per tile) and, in *tiles, how many tiles it may address; then, when
    // the call is done, the DST tiles it read and wrote (bit t: tile t) and the SFPU instructions it issued.
    float* (*sfpu_dest)(uint32_t* tiles);
    void (*sfpu_done)(uint32_t tiles_loaded, uint32_t tiles_stored, uint64_t instructions);
    // The DST hand-off instructions (SEMWAIT: stall, semaphore mask, condition; SETC16: register, value).
    void (*tensix_instruction)(TensixInstruction op, uint32_t a, uint32_t b, uint32_t c);
    // packer::get_packer_dest_offset(): the DST row offset of the half the packer holds.
    uint32_t (*packer_dest_offset)();

    // tt-fabric worker connections (emu/fabric).
    const FabricServices* fabric;
};

}  // namespace ttnn_moe_emu
