// The emulator's dataflow kernel API (tt-metal 0.81.1 names and signatures):
// runtime args, circular buffers, NOC addressing, transfers, barriers and
// semaphores. Address arithmetic runs here; transfers, CB bookkeeping and
// waits go through the services table to the runtime.
#pragma once

#include <cstdint>
#include <type_traits>

#include "api/alignment.h"
#include "api/compile_time_args.h"
#include "api/debug/assert.h"
#include "api/debug/dprint.h"
#include "api/debug/kernel_profiler.hpp"
#include "api/debug/waypoint.h"
#include "api/tensor/tensor_accessor.h"
#include "emu_kernel_config.h"
#include "internal/circular_buffer_interface.h"
#include "ttnn_moe_emu/kernel_args.h"
#include "ttnn_moe_emu/kernel_common.h"

// ---------------------------------------------------------------- circular buffers

FORCE_INLINE void cb_reserve_back(int32_t operand, int32_t num_pages) {
    ttnn_moe_emu::services->cb_reserve_back(static_cast<uint32_t>(operand), static_cast<uint32_t>(num_pages));
}
FORCE_INLINE void cb_push_back(const int32_t operand, const int32_t num_pages) {
    ttnn_moe_emu::services->cb_push_back(static_cast<uint32_t>(operand), static_cast<uint32_t>(num_pages));
}
FORCE_INLINE void cb_wait_front(int32_t operand, int32_t num_pages) {
    ttnn_moe_emu::services->cb_wait_front(static_cast<uint32_t>(operand), static_cast<uint32_t>(num_pages));
}
FORCE_INLINE void cb_pop_front(int32_t operand, int32_t num_pages) {
    ttnn_moe_emu::services->cb_pop_front(static_cast<uint32_t>(operand), static_cast<uint32_t>(num_pages));
}
FORCE_INLINE bool cb_pages_reservable_at_back(int32_t operand, int32_t num_pages) {
    return ttnn_moe_emu::services->cb_pages_reservable_at_back(static_cast<uint32_t>(operand),
                                                               static_cast<uint32_t>(num_pages)) != 0;
}
FORCE_INLINE bool cb_pages_available_at_front(int32_t operand, int32_t num_pages) {
    return ttnn_moe_emu::services->cb_pages_available_at_front(static_cast<uint32_t>(operand),
                                                               static_cast<uint32_t>(num_pages)) != 0;
}
FORCE_INLINE uint32_t get_write_ptr(uint32_t operand) {
    return ttnn_moe_emu::services->cb_write_ptr(operand);
}
FORCE_INLINE uint32_t get_read_ptr(uint32_t operand) {
    return ttnn_moe_emu::services->cb_read_ptr(operand);
}

// Compile-time CB facts (the real build generates these tables per kernel).
constexpr inline std::int32_t get_tile_size(const std::int32_t operand) {
    return static_cast<std::int32_t>(ttnn_moe_emu_config::cb_tile_size[operand]);
}
constexpr inline uint32_t get_tile_hw(const std::int32_t operand) {
    return static_cast<uint32_t>(ttnn_moe_emu_config::cb_tile_r_dim[operand]) *
           ttnn_moe_emu_config::cb_tile_c_dim[operand];
}
constexpr inline uint32_t get_tile_num_faces(const std::int32_t operand) {
    return get_tile_hw(operand) >= 1024 ? 4u : get_tile_hw(operand) / 256u;
}
constexpr inline DataFormat get_dataformat(const std::int32_t operand) {
    return static_cast<DataFormat>(ttnn_moe_emu_config::cb_format[operand]);
}

// ---------------------------------------------------------------- NOC addresses

FORCE_INLINE uint64_t get_noc_addr(uint32_t noc_x, uint32_t noc_y, uint32_t addr, uint8_t noc = noc_index) {
    return ttnn_moe_emu::noc_xy_addr(noc_x, noc_y, addr);
}
FORCE_INLINE std::uint64_t get_noc_addr(std::uint32_t addr, uint8_t noc = noc_index) {
    return ttnn_moe_emu::noc_xy_addr(my_x[noc], my_y[noc], addr);
}
FORCE_INLINE std::uint64_t get_noc_addr_helper(std::uint32_t noc_xy, std::uint32_t addr) {
    return (static_cast<uint64_t>(noc_xy) << NOC_ADDR_LOCAL_BITS) | addr;
}
// Multicast rectangle: [36, 42) x_end, [42, 48) y_end, [48, 54) x_start, [54, 60) y_start.
FORCE_INLINE uint64_t get_noc_multicast_addr(uint32_t noc_x_start, uint32_t noc_y_start, uint32_t noc_x_end,
                                             uint32_t noc_y_end, uint32_t addr, uint8_t noc = noc_index) {
    return (static_cast<uint64_t>(noc_y_start) << 54) | (static_cast<uint64_t>(noc_x_start) << 48) |
           (static_cast<uint64_t>(noc_y_end) << 42) | (static_cast<uint64_t>(noc_x_end) << 36) | addr;
}

template <bool DRAM>
FORCE_INLINE uint64_t get_noc_addr_from_bank_id(uint32_t bank_id, uint32_t bank_address_offset,
                                                uint8_t noc = noc_index) {
    if constexpr (DRAM) {
        if (bank_id >= NUM_DRAM_BANKS) ttnn_moe_emu::fail("get_noc_addr_from_bank_id: DRAM bank id out of range");
        return ttnn_moe_emu::noc_xy_addr(ttnn_moe_emu::dram_bank_x(bank_id), ttnn_moe_emu::dram_bank_y(bank_id),
                                         bank_address_offset);
    } else {
        if (bank_id >= ttnn_moe_emu::services->num_l1_banks()) {
            ttnn_moe_emu::fail("get_noc_addr_from_bank_id<false>: L1 bank id out of range");
        }
        return ttnn_moe_emu::l1_bank_noc_addr(bank_id, bank_address_offset);
    }
}

namespace interleaved_addr_gen {
template <bool DRAM>
FORCE_INLINE uint64_t bank_noc_addr(uint32_t id, uint32_t bank_base_address, uint32_t aligned_page_size,
                                    uint32_t offset) {
    if constexpr (!DRAM) ttnn_moe_emu::fail("L1-interleaved address generators are not emulated");
    const uint32_t bank = id % NUM_DRAM_BANKS;
    return ttnn_moe_emu::noc_xy_addr(ttnn_moe_emu::dram_bank_x(bank), ttnn_moe_emu::dram_bank_y(bank),
                                     bank_base_address + (id / NUM_DRAM_BANKS) * aligned_page_size + offset);
}
}  // namespace interleaved_addr_gen

namespace ttnn_moe_emu {
// Bank stride of interleaved pages: the page size rounded up to its memory's bank
// alignment (DRAM_ALIGNMENT, L1_ALIGNMENT), as the address generators lay pages out.
template <bool DRAM>
constexpr uint32_t aligned_page_bytes(uint32_t page_size) {
    return align_power_of_2(page_size, DRAM ? DRAM_ALIGNMENT : L1_ALIGNMENT);
}
// The same for a power-of-2 page size given as its log2.
template <bool DRAM>
constexpr uint32_t aligned_log2_page_bytes(uint32_t log2_page_size) {
    constexpr uint32_t log2_alignment = DRAM ? 5u : 4u;  // log2(DRAM_ALIGNMENT), log2(L1_ALIGNMENT)
    return log2_page_size > log2_alignment ? log2_page_size : log2_alignment;
}
}  // namespace ttnn_moe_emu

template <bool DRAM>
struct InterleavedAddrGen {
    static constexpr bool is_dram = DRAM;
    uint32_t bank_base_address;
    const uint32_t page_size;
    const uint32_t aligned_page_size = ttnn_moe_emu::aligned_page_bytes<DRAM>(page_size);

    FORCE_INLINE std::uint64_t get_noc_addr(const uint32_t id, const uintptr_t offset = 0,
                                            uint8_t noc = noc_index) const {
        return interleaved_addr_gen::bank_noc_addr<DRAM>(id, bank_base_address, aligned_page_size,
                                                         static_cast<uint32_t>(offset));
    }
};

template <bool DRAM>
struct InterleavedPow2AddrGen {
    static constexpr bool is_dram = DRAM;
    const uint32_t bank_base_address;
    const uint32_t log_base_2_of_page_size;
    const uint32_t aligned_log_base_2_of_page_size =
        ttnn_moe_emu::aligned_log2_page_bytes<DRAM>(log_base_2_of_page_size);

    FORCE_INLINE std::uint64_t get_noc_addr(const uint32_t id, const uint32_t offset = 0,
                                            uint8_t noc = noc_index) const {
        return interleaved_addr_gen::bank_noc_addr<DRAM>(id, bank_base_address, 1u << aligned_log_base_2_of_page_size,
                                                         offset);
    }
};

template <bool DRAM, uint32_t tile_hw = 1024>
struct InterleavedAddrGenFast {
    static constexpr bool is_dram = DRAM;
    uint32_t bank_base_address;
    uint32_t page_size;
    DataFormat data_format;

    FORCE_INLINE std::uint64_t get_noc_addr(const uint32_t id, const uint32_t offset = 0,
                                            uint8_t noc = noc_index) const {
        return interleaved_addr_gen::bank_noc_addr<DRAM>(id, bank_base_address,
                                                         ttnn_moe_emu::aligned_page_bytes<DRAM>(page_size), offset);
    }
};

template <bool DRAM>
struct InterleavedPow2AddrGenFast {
    static constexpr bool is_dram = DRAM;
    uint32_t bank_base_address;
    const uint32_t log_base_2_of_page_size;
    const uint32_t aligned_log_base_2_of_page_size =
        ttnn_moe_emu::aligned_log2_page_bytes<DRAM>(log_base_2_of_page_size);

    FORCE_INLINE std::uint64_t get_noc_addr(const uint32_t id, const uint32_t offset = 0,
                                            uint8_t noc = noc_index) const {
        return interleaved_addr_gen::bank_noc_addr<DRAM>(id, bank_base_address, 1u << aligned_log_base_2_of_page_size,
                                                         offset);
    }
};

template <typename AddrGen>
FORCE_INLINE uint64_t get_noc_addr(const uint32_t id, const AddrGen& addrgen, uint32_t offset = 0,
                                   uint8_t noc = noc_index,
                                   decltype(std::declval<AddrGen>().get_noc_addr(0u))* resolver = nullptr) {
    return addrgen.get_noc_addr(id, offset, noc);
}

namespace ttnn_moe_emu {
// Bytes per page of an address generator, as tt-metal's page helpers pick it.
template <typename AddrGen>
uint32_t page_size_of(const AddrGen& addrgen) {
    if constexpr (requires { addrgen.get_aligned_page_size(); }) {
        return addrgen.get_aligned_page_size();
    } else if constexpr (requires { addrgen.page_size; }) {
        return addrgen.page_size;
    } else {
        return 1u << addrgen.log_base_2_of_page_size;
    }
}
}  // namespace ttnn_moe_emu

// ---------------------------------------------------------------- transfers

template <bool enable_noc_tracing = true>
FORCE_INLINE void noc_async_read_one_packet(uint64_t src_noc_addr, uint32_t dst_local_l1_addr, uint32_t size,
                                            uint8_t noc = noc_index, uint32_t read_req_vc = NOC_UNICAST_WRITE_VC) {
    ttnn_moe_emu::services->noc_read(src_noc_addr, dst_local_l1_addr, size);
}

template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, bool enable_noc_tracing = true>
inline void noc_async_read(uint64_t src_noc_addr, uint32_t dst_local_l1_addr, uint32_t size, uint8_t noc = noc_index,
                           uint32_t read_req_vc = NOC_UNICAST_WRITE_VC) {
    ttnn_moe_emu::services->noc_read(src_noc_addr, dst_local_l1_addr, size);
}

template <bool enable_noc_tracing = true, bool posted = false>
FORCE_INLINE void noc_async_write_one_packet(std::uint32_t src_local_l1_addr, std::uint64_t dst_noc_addr,
                                             std::uint32_t size, uint8_t noc = noc_index,
                                             uint32_t vc = NOC_UNICAST_WRITE_VC) {
    ttnn_moe_emu::services->noc_write(src_local_l1_addr, dst_noc_addr, size);
}

template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, bool enable_noc_tracing = true, bool posted = false>
inline void noc_async_write(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size, uint8_t noc = noc_index,
                            uint32_t vc = NOC_UNICAST_WRITE_VC) {
    ttnn_moe_emu::services->noc_write(src_local_l1_addr, dst_noc_addr, size);
}

template <bool enable_noc_tracing = true>
FORCE_INLINE void noc_async_write_multicast_one_packet(std::uint32_t src_local_l1_addr,
                                                       std::uint64_t dst_noc_addr_multicast, std::uint32_t size,
                                                       std::uint32_t num_dests, bool linked = false,
                                                       uint8_t noc = noc_index) {
    ttnn_moe_emu::services->noc_write_multicast(src_local_l1_addr, dst_noc_addr_multicast, size, num_dests, 0);
}

template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1>
inline void noc_async_write_multicast(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast, uint32_t size,
                                      uint32_t num_dests, bool linked = false, uint8_t noc = noc_index,
                                      uint8_t vc = NOC_MULTICAST_WRITE_VC) {
    ttnn_moe_emu::services->noc_write_multicast(src_local_l1_addr, dst_noc_addr_multicast, size, num_dests, 0);
}

inline void noc_async_write_multicast_loopback_src(std::uint32_t src_local_l1_addr,
                                                   std::uint64_t dst_noc_addr_multicast, std::uint32_t size,
                                                   std::uint32_t num_dests, bool linked = false,
                                                   uint8_t noc = noc_index) {
    ttnn_moe_emu::services->noc_write_multicast(src_local_l1_addr, dst_noc_addr_multicast, size, num_dests, 1);
}

template <typename AddrGen, bool enable_noc_tracing = true>
FORCE_INLINE void noc_async_read_page(const uint32_t id, const AddrGen& addrgen, uint32_t dst_local_l1_addr,
                                      uint32_t offset = 0, uint8_t noc = noc_index) {
    noc_async_read(addrgen.get_noc_addr(id, offset, noc), dst_local_l1_addr, ttnn_moe_emu::page_size_of(addrgen), noc);
}

template <typename AddrGen>
FORCE_INLINE void noc_async_read_tile(const uint32_t id, const AddrGen& addrgen, uint32_t dst_local_l1_addr,
                                      uint32_t offset = 0, uint8_t noc = noc_index) {
    noc_async_read_page(id, addrgen, dst_local_l1_addr, offset, noc);
}

template <typename AddrGen, bool enable_noc_tracing = true, bool posted = false>
FORCE_INLINE void noc_async_write_page(const uint32_t id, const AddrGen& addrgen, uint32_t src_local_l1_addr,
                                       uint32_t size = 0, uint32_t offset = 0, uint8_t noc = noc_index) {
    const uint32_t bytes = size ? size : ttnn_moe_emu::page_size_of(addrgen);
    noc_async_write(src_local_l1_addr, addrgen.get_noc_addr(id, offset, noc), bytes, noc);
}

template <typename AddrGen>
FORCE_INLINE void noc_async_write_tile(const uint32_t id, const AddrGen& addrgen, uint32_t src_local_l1_addr,
                                       uint8_t noc = noc_index) {
    noc_async_write_page(id, addrgen, src_local_l1_addr, 0, 0, noc);
}

// Transfers complete when issued: barriers only count as API calls.
FORCE_INLINE void noc_async_read_barrier(uint8_t noc = noc_index) {
    ttnn_moe_emu::services->noc_barrier(ttnn_moe_emu::Barrier::Read);
}
FORCE_INLINE void noc_async_write_barrier(uint8_t noc = noc_index) {
    ttnn_moe_emu::services->noc_barrier(ttnn_moe_emu::Barrier::Write);
}
FORCE_INLINE void noc_async_writes_flushed(uint8_t noc = noc_index) {
    ttnn_moe_emu::services->noc_barrier(ttnn_moe_emu::Barrier::WritesFlushed);
}
FORCE_INLINE void noc_async_posted_writes_flushed(uint8_t noc = noc_index) {
    ttnn_moe_emu::services->noc_barrier(ttnn_moe_emu::Barrier::WritesFlushed);
}
FORCE_INLINE void noc_async_atomic_barrier(uint8_t noc_idx = noc_index) {
    ttnn_moe_emu::services->noc_barrier(ttnn_moe_emu::Barrier::Atomic);
}
FORCE_INLINE void noc_async_full_barrier(uint8_t noc_idx = noc_index) {
    ttnn_moe_emu::services->noc_barrier(ttnn_moe_emu::Barrier::Full);
}

// ---------------------------------------------------------------- semaphores

template <ProgrammableCoreType type = ProgrammableCoreType::TENSIX>
FORCE_INLINE uintptr_t get_semaphore(uint32_t semaphore_id) {
    if (semaphore_id >= ttnn_moe_emu::L1_NUM_SEMAPHORES) ttnn_moe_emu::fail("get_semaphore: id out of range");
    return static_cast<uintptr_t>(ttnn_moe_emu::env().l1_base) + ttnn_moe_emu::L1_SEMAPHORE_BASE +
           semaphore_id * ttnn_moe_emu::L1_SEMAPHORE_STRIDE;
}

// sem_addr may be a bare L1 offset from the host (a global semaphore's address), as on the hardware.
FORCE_INLINE void noc_semaphore_wait(volatile tt_l1_ptr uint32_t* sem_addr, uint32_t val) {
    ttnn_moe_emu::services->wait_l1_value(ttnn_moe_emu::local_l1_pointer(sem_addr), val, 0, 0);
}
FORCE_INLINE void noc_semaphore_wait_min(volatile tt_l1_ptr uint32_t* sem_addr, uint32_t val) {
    ttnn_moe_emu::services->wait_l1_value(ttnn_moe_emu::local_l1_pointer(sem_addr), val, 1, 0);
}
// A plain L1 store on the device; through the services so that another RISC of the core waiting on the
// word depends on it in model time.
FORCE_INLINE void noc_semaphore_set(volatile tt_l1_ptr uint32_t* sem_addr, uint32_t val) {
    ttnn_moe_emu::services->store_l1_word(ttnn_moe_emu::local_l1_pointer(sem_addr), val, 0, 0);
}

template <bool posted = false>
FORCE_INLINE void noc_semaphore_inc(uint64_t addr, uint32_t incr, uint8_t noc_id = noc_index,
                                    uint8_t vc = NOC_UNICAST_WRITE_VC) {
    ttnn_moe_emu::services->noc_atomic_inc(addr, incr);
}

template <bool posted = false>
FORCE_INLINE void noc_semaphore_inc_multicast(uint64_t addr, uint32_t incr, uint32_t num_dests,
                                              uint8_t noc_id = noc_index, uint8_t vc = NOC_MULTICAST_WRITE_VC) {
    ttnn_moe_emu::services->noc_atomic_inc_multicast(addr, incr, num_dests);
}

inline void noc_semaphore_set_remote(std::uint32_t src_local_l1_addr, std::uint64_t dst_noc_addr,
                                     uint8_t noc = noc_index) {
    ttnn_moe_emu::services->noc_write(src_local_l1_addr, dst_noc_addr, 4);
}

inline void noc_semaphore_set_multicast(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast, uint32_t num_dests,
                                        bool linked = false, uint8_t noc = noc_index,
                                        uint8_t vc = NOC_MULTICAST_WRITE_VC) {
    ttnn_moe_emu::services->noc_write_multicast(src_local_l1_addr, dst_noc_addr_multicast, 4, num_dests, 0);
}

inline void noc_semaphore_set_multicast_loopback_src(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast,
                                                     uint32_t num_dests, bool linked = false, uint8_t noc = noc_index,
                                                     uint8_t vc = NOC_MULTICAST_WRITE_VC) {
    ttnn_moe_emu::services->noc_write_multicast(src_local_l1_addr, dst_noc_addr_multicast, 4, num_dests, 1);
}

enum class InlineWriteDst : uint8_t { DEFAULT = 0, L1 = 1, REG = 2 };

template <InlineWriteDst dst_type = InlineWriteDst::DEFAULT, bool posted = false, bool flush = true>
FORCE_INLINE void noc_inline_dw_write(uint64_t addr, uint32_t val, uint8_t be = 0xF, uint8_t noc = noc_index,
                                      uint8_t vc = NOC_UNICAST_WRITE_VC, uint32_t customized_src_addr = 0) {
    ttnn_moe_emu::services->noc_inline_write(addr, val, be);
}

// ---------------------------------------------------------------- stateful NOC commands

// tt-metal programs a command buffer's registers once (..._set_state, noc_async_read_set_trid) and issues
// transfers that reuse them (..._with_state). The emulated registers are the kernel's (KernelEnv::noc_cmd_bufs),
// per NOC and command buffer; a with_state call on a buffer no set_state programmed is an error.
inline constexpr uint32_t write_cmd_buf = 0;
inline constexpr uint32_t read_cmd_buf = 1;
inline constexpr uint32_t write_reg_cmd_buf = 2;
inline constexpr uint32_t write_at_cmd_buf = 3;
inline constexpr uint32_t NOC_MAX_TRANSACTION_ID = 0xF;

namespace ttnn_moe_emu {
inline NocCmdBuf& noc_cmd_buf(uint8_t noc, uint32_t buf) {
    if (noc > 1) fail("stateful NOC call: noc must be 0 or 1");
    if (buf >= NOC_NUM_CMD_BUFS) fail("stateful NOC call: command buffer out of range (0..3)");
    return env().noc_cmd_bufs[noc][buf];
}
inline const NocCmdBuf& programmed_cmd_buf(uint8_t noc, uint32_t buf, const char* what) {
    const NocCmdBuf& b = noc_cmd_buf(noc, buf);
    if (!b.programmed) fail(what);
    return b;
}
// The coordinate bits of a NOC address: everything above the local address, which a with_state call replaces.
constexpr uint64_t noc_coordinates(uint64_t noc_addr) {
    return noc_addr & ~((uint64_t{1} << NOC_LOCAL_BITS) - 1);
}
inline uint32_t checked_trid(uint32_t trid, const char* what) {
    if (trid > NOC_MAX_TRANSACTION_ID) fail(what);
    return trid;
}
}  // namespace ttnn_moe_emu

template <bool use_vc = false>
FORCE_INLINE void noc_async_read_one_packet_set_state(uint64_t src_noc_addr, uint32_t size, const uint32_t vc = 0,
                                                      uint8_t noc = noc_index) {
    if (size > NOC_MAX_BURST_SIZE) {
        ttnn_moe_emu::fail("noc_async_read_one_packet_set_state: size exceeds one packet (NOC_MAX_BURST_SIZE)");
    }
    ttnn_moe_emu::NocCmdBuf& b = ttnn_moe_emu::noc_cmd_buf(noc, read_cmd_buf);
    b.targ = src_noc_addr;
    b.len = size;
    b.programmed = 1;
}

// Reads len bytes from the programmed source node at local address src_local_l1_addr.
template <bool inc_num_issued = true, bool use_vc = false>
FORCE_INLINE void noc_async_read_one_packet_with_state(uint32_t src_local_l1_addr, uint32_t dst_local_l1_addr,
                                                       const uint32_t vc = 0, uint8_t noc = noc_index) {
    const ttnn_moe_emu::NocCmdBuf& b = ttnn_moe_emu::programmed_cmd_buf(
        noc, read_cmd_buf, "noc_async_read_one_packet_with_state before noc_async_read_one_packet_set_state");
    ttnn_moe_emu::services->noc_read(ttnn_moe_emu::noc_coordinates(b.targ) | src_local_l1_addr, dst_local_l1_addr,
                                     b.len);
}

FORCE_INLINE void noc_async_read_set_trid(uint32_t trid = 0, uint8_t noc = noc_index) {
    ttnn_moe_emu::noc_cmd_buf(noc, read_cmd_buf).trid =
        ttnn_moe_emu::checked_trid(trid, "noc_async_read_set_trid: transaction id out of range (0..15)");
}

// The source is src_base_addr + src_addr on the programmed node; the read carries the id noc_async_read_set_trid
// set (the hardware tags it with the command buffer's packet tag; `trid` only paces the issue there).
template <bool skip_ptr_update = false, bool skip_cmdbuf_chk = false>
FORCE_INLINE void noc_async_read_one_packet_with_state_with_trid(uint32_t src_base_addr, uint32_t src_addr,
                                                                 uint32_t dest_addr, uint32_t trid = 0,
                                                                 uint8_t noc = noc_index) {
    const ttnn_moe_emu::NocCmdBuf& b = ttnn_moe_emu::programmed_cmd_buf(
        noc, read_cmd_buf, "noc_async_read_one_packet_with_state_with_trid before noc_async_read_one_packet_set_state");
    ttnn_moe_emu::checked_trid(trid, "noc_async_read_one_packet_with_state_with_trid: transaction id out of range");
    ttnn_moe_emu::services->noc_read_with_trid(ttnn_moe_emu::noc_coordinates(b.targ) | (src_base_addr + src_addr),
                                               dest_addr, b.len, b.trid);
}

FORCE_INLINE void noc_async_read_barrier_with_trid(uint32_t trid, uint8_t noc = noc_index) {
    ttnn_moe_emu::services->noc_read_barrier_with_trid(
        ttnn_moe_emu::checked_trid(trid, "noc_async_read_barrier_with_trid: transaction id out of range (0..15)"));
}

template <bool posted = false>
FORCE_INLINE void noc_async_write_one_packet_set_state(uint64_t dst_noc_addr, uint32_t size, uint8_t noc = noc_index,
                                                       uint8_t vc = NOC_UNICAST_WRITE_VC) {
    if (size > NOC_MAX_BURST_SIZE) {
        ttnn_moe_emu::fail("noc_async_write_one_packet_set_state: size exceeds one packet (NOC_MAX_BURST_SIZE)");
    }
    ttnn_moe_emu::NocCmdBuf& b = ttnn_moe_emu::noc_cmd_buf(noc, write_cmd_buf);
    b.ret = dst_noc_addr;
    b.len = size;
    b.programmed = 1;
}

// Writes len bytes to the programmed destination node at local address dst_local_l1_addr.
template <bool posted = false>
FORCE_INLINE void noc_async_write_one_packet_with_state(uint32_t src_local_l1_addr, uint32_t dst_local_l1_addr,
                                                        uint8_t noc = noc_index) {
    const ttnn_moe_emu::NocCmdBuf& b = ttnn_moe_emu::programmed_cmd_buf(
        noc, write_cmd_buf, "noc_async_write_one_packet_with_state before noc_async_write_one_packet_set_state");
    ttnn_moe_emu::services->noc_write(src_local_l1_addr, ttnn_moe_emu::noc_coordinates(b.ret) | dst_local_l1_addr,
                                      b.len);
}

template <bool posted = false, bool set_val = false>
FORCE_INLINE void noc_inline_dw_write_set_state(uint64_t addr, uint32_t val = 0, uint8_t be = 0xF,
                                                uint8_t cmd_buf = write_at_cmd_buf, uint8_t noc = noc_index,
                                                uint8_t vc = NOC_UNICAST_WRITE_VC) {
    ttnn_moe_emu::NocCmdBuf& b = ttnn_moe_emu::noc_cmd_buf(noc, cmd_buf);
    b.targ = addr;
    b.len = be;
    if constexpr (set_val) b.data = val;
    b.programmed = 1;
}

// Writes the programmed value (or `val`, update_val) to the programmed address (its local part replaced by
// `addr`, update_addr_lo).
template <bool update_addr_lo = false, bool update_counter = true, bool posted = false, bool update_addr_hi = false,
          bool update_val = false, InlineWriteDst dst_type = InlineWriteDst::DEFAULT>
FORCE_INLINE void noc_inline_dw_write_with_state(uint32_t val, uint32_t addr = 0, uint8_t cmd_buf = write_at_cmd_buf,
                                                 uint8_t noc = noc_index) {
    static_assert(!(update_addr_lo && update_addr_hi),
                  "noc_inline_dw_write_with_state: update the low or high address");
    static_assert(!update_addr_hi, "noc_inline_dw_write_with_state: update_addr_hi is not emulated");
    ttnn_moe_emu::NocCmdBuf& b = ttnn_moe_emu::noc_cmd_buf(noc, cmd_buf);
    if (!b.programmed) ttnn_moe_emu::fail("noc_inline_dw_write_with_state before noc_inline_dw_write_set_state");
    if constexpr (update_addr_lo) {
        b.targ = ttnn_moe_emu::noc_coordinates(b.targ) | addr;
        b.len = 0xF;
    }
    if constexpr (update_val) b.data = val;
    ttnn_moe_emu::services->noc_inline_write(b.targ, b.data, b.len);
}

// On the hardware the writes carry the write command buffer's transaction id. The emulator does not tag writes
// (they leave when issued), so the per-id write barriers wait for, and release the sources of, all of the
// kernel's writes: a superset of the id's.
FORCE_INLINE void noc_async_write_set_trid(uint32_t trid = 0, uint8_t noc = noc_index) {
    ttnn_moe_emu::noc_cmd_buf(noc, write_cmd_buf).trid =
        ttnn_moe_emu::checked_trid(trid, "noc_async_write_set_trid: transaction id out of range (0..15)");
}
FORCE_INLINE void noc_async_write_barrier_with_trid(uint32_t trid, uint8_t noc = noc_index) {
    ttnn_moe_emu::checked_trid(trid, "noc_async_write_barrier_with_trid: transaction id out of range (0..15)");
    ttnn_moe_emu::services->noc_barrier(ttnn_moe_emu::Barrier::Write);
}
FORCE_INLINE void noc_async_write_flushed_with_trid(uint32_t trid, uint8_t noc = noc_index) {
    ttnn_moe_emu::checked_trid(trid, "noc_async_write_flushed_with_trid: transaction id out of range (0..15)");
    ttnn_moe_emu::services->noc_barrier(ttnn_moe_emu::Barrier::WritesFlushed);
}
