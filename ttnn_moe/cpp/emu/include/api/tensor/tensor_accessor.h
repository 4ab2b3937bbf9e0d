// TensorAccessor: page id -> NOC address. Interleaved (DRAM or L1): page i in
// bank i % banks at base + (i / banks) * aligned_page_size. ND-sharded in L1
// with a compile-time distribution: see sharded_noc_addr. Other sharded
// tensors' accessors build and fail when addressed.
#pragma once

#include <array>
#include <cstdint>
#include <tuple>
#include <utility>

#include "api/tensor/tensor_accessor_args.h"
#include "api/tensor/tensor_binding_token.h"
#include "ttnn_moe_emu/kernel_args.h"
#include "ttnn_moe_emu/kernel_common.h"

namespace tensor_accessor {

// One page of a tensor, as iteration yields it.
struct Page {
    uint64_t noc_addr_ = 0;
    uint32_t page_id_ = 0;
    uint64_t noc_addr() const { return noc_addr_; }
    uint32_t page_id() const { return page_id_; }
};

template <typename Accessor>
class Pages {
public:
    Pages(const Accessor& accessor, uint32_t start, uint32_t end) : accessor_(accessor), start_(start), end_(end) {}
    class iterator {
    public:
        iterator(const Accessor& a, uint32_t id) : accessor_(&a), id_(id) {}
        Page operator*() const { return Page{accessor_->get_noc_addr(id_), id_}; }
        iterator& operator++() {
            ++id_;
            return *this;
        }
        bool operator!=(const iterator& o) const { return id_ != o.id_; }
        bool operator==(const iterator& o) const { return id_ == o.id_; }

    private:
        const Accessor* accessor_;
        uint32_t id_;
    };
    iterator begin() const { return iterator(accessor_, start_); }
    iterator end() const { return iterator(accessor_, end_); }

private:
    const Accessor& accessor_;
    uint32_t start_;
    uint32_t end_;
};

}  // namespace tensor_accessor

template <typename Args>
struct TensorAccessor {
    static constexpr bool is_dram = Args::is_dram;
    static constexpr bool is_sharded = Args::is_sharded;
    // The distribution spec's kind, which kernels branch on at compile time; sharded tensors fail when
    // accessed, so nothing more of it is described.
    struct DSpec {
        static constexpr bool is_interleaved = !Args::is_sharded;
    };

    // A sharded accessor may be built (kernels build some they never use); addressing through it fails.
    TensorAccessor(const Args& args, uint32_t bank_base_address_in, uint32_t page_size_in)
        : bank_base_address(bank_base_address_in), aligned_page_size(page_size_in) {}
    TensorAccessor(const Args& args, uint32_t bank_base_address_in)
        : TensorAccessor(args, bank_base_address_in, args.get_aligned_page_size()) {}
    // From a Metal 2.0 binding token: the base address is the token's common runtime word.
    template <uint32_t CTA_OFFSET, uint32_t ADDR_CRTA_OFFSET>
    TensorAccessor(tensor_accessor::TensorBindingToken<CTA_OFFSET, ADDR_CRTA_OFFSET>)
        : TensorAccessor(Args{}, get_common_arg_val<uint32_t>(ADDR_CRTA_OFFSET / sizeof(uint32_t))) {}

    uint32_t get_aligned_page_size() const { return aligned_page_size; }
    constexpr uint32_t get_bank_base_address() const { return bank_base_address; }

    uint64_t get_noc_addr(uint32_t page_id, uint32_t offset = 0, uint8_t noc = noc_index) const {
        if constexpr (Args::is_sharded) {
            return sharded_noc_addr(page_id, offset);
        } else if constexpr (!Args::is_dram) {
            // L1 banks: one per worker core, pages at a stride of the page size rounded up to the L1 alignment.
            const uint32_t banks = ttnn_moe_emu::services->num_l1_banks();
            const uint32_t bank_stride = align_power_of_2<uint32_t>(aligned_page_size, L1_ALIGNMENT);
            return ttnn_moe_emu::l1_bank_noc_addr(page_id % banks,
                                                  bank_base_address + (page_id / banks) * bank_stride + offset);
        }
        const uint32_t bank = page_id % NUM_DRAM_BANKS;
        // Like the real interleaved accessor (InterleavedAddrGen), pages sit in a bank at a stride of the
        // page size rounded up to the DRAM alignment, whatever page size the kernel passed.
        const uint32_t bank_stride = align_power_of_2<uint32_t>(aligned_page_size, DRAM_ALIGNMENT);
        const uint32_t addr = bank_base_address + (page_id / NUM_DRAM_BANKS) * bank_stride + offset;
        return ttnn_moe_emu::noc_xy_addr(ttnn_moe_emu::dram_bank_x(bank), ttnn_moe_emu::dram_bank_y(bank), addr);
    }

    tensor_accessor::Pages<TensorAccessor> pages(uint32_t start_page_id, uint32_t end_page_id,
                                                 uint8_t noc = noc_index) const {
        return tensor_accessor::Pages<TensorAccessor>(*this, start_page_id, end_page_id);
    }

private:
    // ND sharding: the page's coordinate in the tensor (in pages, last dim fastest) gives its shard (row-major
    // over the grid of shards) and its place in the shard (row-major); shard s is on bank s % banks as that
    // bank's shard s / banks (shard-contiguous: a run of shards / banks shards per bank), a bank's shards back
    // to back from the base address, each shard_volume pages.
    uint64_t sharded_noc_addr(uint32_t page_id, uint32_t offset) const {
        if constexpr (Args::is_dram || !Args::distribution_is_compile_time) {
            ttnn_moe_emu::fail("TensorAccessor: only L1-sharded tensors with a compile-time distribution are emulated");
        } else {
            constexpr uint32_t rank = Args::RankCT;
            const auto& ct = kernel_compile_time_args;
            uint32_t coord[rank];
            uint32_t rest = page_id;
            for (uint32_t i = rank; i-- > 0;) {
                const uint32_t dim = ct[Args::TensorShapeCTAOffset + i];
                coord[i] = rest % dim;
                rest /= dim;
            }
            if (rest != 0) ttnn_moe_emu::fail("TensorAccessor: page id past the end of the sharded tensor");
            uint32_t shard = 0, in_shard = 0, shard_volume = 1, num_shards = 1;
            for (uint32_t i = 0; i < rank; ++i) {
                const uint32_t shard_dim = ct[Args::ShardShapeCTAOffset + i];
                const uint32_t grid_dim = (ct[Args::TensorShapeCTAOffset + i] + shard_dim - 1) / shard_dim;
                shard = shard * grid_dim + coord[i] / shard_dim;
                in_shard = in_shard * shard_dim + coord[i] % shard_dim;
                shard_volume *= shard_dim;
                num_shards *= grid_dim;
            }
            constexpr uint32_t banks = Args::NumBanksCT;
            uint32_t bank = shard % banks, shard_in_bank = shard / banks;
            if constexpr (Args::is_shard_contiguous) {
                const uint32_t per_bank = num_shards / banks;
                bank = shard / per_bank;
                shard_in_bank = shard % per_bank;
            }
            const uint32_t word = ct[Args::BankCoordsCTAOffset + bank / 2];
            const uint32_t xy = bank % 2 ? word >> 16 : word & 0xFFFF;
            const uint32_t addr =
                bank_base_address + (shard_in_bank * shard_volume + in_shard) * aligned_page_size + offset;
            return ttnn_moe_emu::noc_xy_addr((xy >> 8) & 0xFF, xy & 0xFF, addr);
        }
    }

    uint32_t bank_base_address = 0;
    uint32_t aligned_page_size = 0;
};

template <std::size_t A, std::size_t B>
TensorAccessor(const TensorAccessorArgs<A, B>&, uint32_t) -> TensorAccessor<TensorAccessorArgs<A, B>>;
template <std::size_t A, std::size_t B>
TensorAccessor(const TensorAccessorArgs<A, B>&, uint32_t, uint32_t) -> TensorAccessor<TensorAccessorArgs<A, B>>;
template <uint32_t C, uint32_t A>
TensorAccessor(tensor_accessor::TensorBindingToken<C, A>)
    -> TensorAccessor<typename tensor_accessor::TensorBindingToken<C, A>::args_t>;

namespace tensor_accessor::detail {
template <typename... Args, uint32_t... I>
auto make_tensor_accessor_tuple(const std::tuple<Args...>& args, uint32_t address_arg,
                                std::integer_sequence<uint32_t, I...>) {
    return std::make_tuple(TensorAccessor(std::get<I>(args), get_arg_val<uint32_t>(address_arg + I))...);
}
}  // namespace tensor_accessor::detail

// One accessor per args of the tuple, tensor i's base address in runtime arg address_arg + i.
template <typename... Args>
auto make_tensor_accessor_tuple(const std::tuple<Args...>& args, uint32_t address_arg) {
    return tensor_accessor::detail::make_tensor_accessor_tuple(args, address_arg,
                                                               std::make_integer_sequence<uint32_t, sizeof...(Args)>());
}

// Accessors of different types behind one type, so a kernel can pick one by a runtime index. Holds a
// pointer to the accessor: the accessor (its tuple) must outlive the wrapper.
class AbstractTensorAccessorWrapper {
public:
    AbstractTensorAccessorWrapper() = default;
    template <typename Accessor>
    AbstractTensorAccessorWrapper(const Accessor& accessor)
        : accessor_(&accessor), get_noc_addr_(+[](const void* a, uint32_t page_id, uint32_t offset, uint8_t noc) {
              return static_cast<const Accessor*>(a)->get_noc_addr(page_id, offset, noc);
          }) {}

    uint64_t get_noc_addr(uint32_t page_id, uint32_t offset = 0, uint8_t noc = noc_index) const {
        if (accessor_ == nullptr) {
            ttnn_moe_emu::fail("AbstractTensorAccessorWrapper: addressed through a default-constructed wrapper");
        }
        return get_noc_addr_(accessor_, page_id, offset, noc);
    }

private:
    const void* accessor_ = nullptr;
    uint64_t (*get_noc_addr_)(const void*, uint32_t, uint32_t, uint8_t) = nullptr;
};

template <typename... Accessors>
auto make_abstract_tensor_accessor_wrappers(const std::tuple<Accessors...>& accessors) {
    return std::apply(
        [](const auto&... each) {
            return std::array<AbstractTensorAccessorWrapper, sizeof...(Accessors)>{
                AbstractTensorAccessorWrapper(each)...};
        },
        accessors);
}
