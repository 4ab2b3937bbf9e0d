// TensorAccessor: page id -> NOC address of an interleaved tensor (page i in
// bank i % banks at base + (i / banks) * aligned_page_size). DRAM and
// L1-interleaved tensors are emulated; a sharded tensor's accessor builds and fails when addressed.
#pragma once

#include <cstdint>

#include "api/tensor/tensor_accessor_args.h"
#include "api/tensor/tensor_binding_token.h"
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
            ttnn_moe_emu::fail("TensorAccessor: sharded tensors are not emulated");
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
