// The object-style NOC API of tt-metal 0.81.1: Noc::async_read / async_write
// between endpoints described by noc_traits_t<T> (TensorAccessor pages,
// DataflowBuffers, raw coordinates), barriers and flushes.
#pragma once

#include <cstdint>
#include <type_traits>

#include "api/dataflow/dataflow_api.h"

struct DataflowBufferArgs {
    uint32_t offset_bytes{};
};

template <typename T>
struct noc_traits_t {
    static_assert(sizeof(T) == 0, "NoC transactions are not supported for this type");
};

enum class NocOptions : uint32_t {
    DEFAULT = 0,
    TXN_ID = 1u << 0,
    POSTED = 1u << 1,
    CUSTOM_VC = 1u << 2,
    MCAST_INCL_SRC = 1u << 3,
    INLINE_L1 = 1u << 4,
    INLINE_REG = 1u << 5,
};

constexpr NocOptions operator|(NocOptions a, NocOptions b) noexcept {
    return static_cast<NocOptions>(static_cast<uint32_t>(a) | static_cast<uint32_t>(b));
}
constexpr bool has_flag(NocOptions opts, NocOptions flag) noexcept {
    return (static_cast<uint32_t>(opts) & static_cast<uint32_t>(flag)) != 0;
}

struct NocOptVals {
    uint32_t vc = NOC_UNICAST_WRITE_VC;
    uint32_t trid = 0;
};

class Noc {
public:
    enum class AddressType { NOC, LOCAL_L1 };
    static constexpr uint32_t INVALID_TXN_ID = 0xFFFFFFFF;

private:
    template <typename T>
    using src_args_t = typename noc_traits_t<T>::src_args_type;
    template <typename T>
    using dst_args_t = typename noc_traits_t<T>::dst_args_type;
    template <typename T>
    using dst_args_mcast_t = typename noc_traits_t<T>::dst_args_mcast_type;

public:
    static uint32_t l1_cached_view(uint32_t addr) { return addr; }

    Noc() : noc_id_(noc_index) {}
    explicit Noc(uint8_t noc_id) : noc_id_(noc_id) {}

    uint8_t get_noc_id() const { return noc_id_; }

    bool is_local_bank(uint32_t virtual_x, uint32_t virtual_y) const {
        return virtual_x == my_x[noc_id_] && virtual_y == my_y[noc_id_];
    }
    bool is_local_addr(const uint64_t noc_addr) const {
        const uint32_t x = static_cast<uint32_t>(noc_addr >> NOC_ADDR_LOCAL_BITS) & 0x3f;
        const uint32_t y = static_cast<uint32_t>(noc_addr >> (NOC_ADDR_LOCAL_BITS + NOC_ADDR_NODE_ID_BITS)) & 0x3f;
        return is_local_bank(x, y);
    }

    template <NocOptions opts = NocOptions::DEFAULT, uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1,
              bool enable_noc_tracing = true, typename Src, typename Dst>
    void async_read(const Src& src, const Dst& dst, uint32_t size_bytes, const src_args_t<Src>& src_args,
                    const dst_args_t<Dst>& dst_args, const NocOptVals& noc_opts = {}) const {
        const uint64_t src_addr = noc_traits_t<Src>::template src_addr<AddressType::NOC>(src, *this, src_args);
        const uint32_t dst_addr =
            static_cast<uint32_t>(noc_traits_t<Dst>::template dst_addr<AddressType::LOCAL_L1>(dst, *this, dst_args));
        ttnn_moe_emu::services->noc_read(src_addr, dst_addr, size_bytes);
    }

    template <NocOptions opts = NocOptions::DEFAULT, uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1,
              bool enable_noc_tracing = true, typename Src, typename Dst>
    void async_write(const Src& src, const Dst& dst, uint32_t size_bytes, const src_args_t<Src>& src_args,
                     const dst_args_t<Dst>& dst_args, const NocOptVals& noc_opts = {}) const {
        const uint32_t src_addr =
            static_cast<uint32_t>(noc_traits_t<Src>::template src_addr<AddressType::LOCAL_L1>(src, *this, src_args));
        const uint64_t dst_addr = noc_traits_t<Dst>::template dst_addr<AddressType::NOC>(dst, *this, dst_args);
        ttnn_moe_emu::services->noc_write(src_addr, dst_addr, size_bytes);
    }

    template <NocOptions opts = NocOptions::DEFAULT, uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1,
              bool enable_noc_tracing = true, typename Src, typename Dst>
    void async_write_multicast(const Src& src, const Dst& dst, uint32_t size_bytes, uint32_t num_dsts,
                               const src_args_t<Src>& src_args, const dst_args_mcast_t<Dst>& dst_args,
                               bool linked = false) const {
        const uint32_t src_addr =
            static_cast<uint32_t>(noc_traits_t<Src>::template src_addr<AddressType::LOCAL_L1>(src, *this, src_args));
        const uint64_t dst_addr = noc_traits_t<Dst>::template dst_addr_mcast<AddressType::NOC>(dst, *this, dst_args);
        ttnn_moe_emu::services->noc_write_multicast(src_addr, dst_addr, size_bytes, num_dsts,
                                                    has_flag(opts, NocOptions::MCAST_INCL_SRC) ? 1 : 0);
    }

    template <NocOptions opts = NocOptions::DEFAULT, typename Dst>
    void inline_dw_write(const Dst& dst, uint32_t val, const dst_args_t<Dst>& dst_args, uint8_t be = 0xF,
                         const NocOptVals& noc_opts = {}) const {
        const uint64_t dst_addr = noc_traits_t<Dst>::template dst_addr<AddressType::NOC>(dst, *this, dst_args);
        ttnn_moe_emu::services->noc_inline_write(dst_addr, val, be);
    }

    // Zeroes size_bytes of a local L1 endpoint (CircularBuffer, DataflowBuffer) at its write pointer. The
    // hardware streams zeros through the NOC; here they land at once, so the barrier has nothing to wait for.
    template <typename Dst>
    void async_write_zeros(const Dst& dst, uint32_t size_bytes, const dst_args_t<Dst>& args = {}) const {
        const uint32_t addr =
            static_cast<uint32_t>(noc_traits_t<Dst>::template dst_addr<AddressType::LOCAL_L1>(dst, *this, args));
        ttnn_moe_emu::zero_local_l1(addr, size_bytes);
    }
    void write_zeros_l1_barrier() const {}

    template <NocOptions opts = NocOptions::DEFAULT>
    void async_read_barrier(const NocOptVals& noc_opts = {}) const {
        noc_async_read_barrier(noc_id_);
    }
    template <NocOptions opts = NocOptions::DEFAULT>
    void async_write_barrier(const NocOptVals& noc_opts = {}) const {
        noc_async_write_barrier(noc_id_);
    }
    template <NocOptions opts = NocOptions::DEFAULT>
    void async_writes_flushed(const NocOptVals& noc_opts = {}) const {
        noc_async_writes_flushed(noc_id_);
    }
    void async_atomic_barrier() const { noc_async_atomic_barrier(noc_id_); }
    void async_full_barrier() const { noc_async_full_barrier(noc_id_); }

private:
    uint8_t noc_id_;
};
