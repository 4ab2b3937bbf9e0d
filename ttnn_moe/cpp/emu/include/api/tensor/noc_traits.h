// noc_traits_t for tensor pages: Noc::async_read/async_write with a
// TensorAccessor and {.page_id, .offset_bytes} (0.81.1).
#pragma once

#include "api/dataflow/noc.h"
#include "api/tensor/tensor_accessor.h"

// A page of a TensorAccessor, or of one behind an AbstractTensorAccessorWrapper.
template <typename Accessor>
struct AccessorPageNocTraits {
    struct src_args_type {
        uint32_t page_id{};
        uint32_t offset_bytes = 0;
    };
    struct dst_args_type {
        uint32_t page_id{};
        uint32_t offset_bytes = 0;
    };
    template <Noc::AddressType address_type>
    static uint64_t src_addr(const Accessor& src, const Noc& noc, const src_args_type& args) {
        static_assert(address_type == Noc::AddressType::NOC, "a tensor page is not local L1");
        return src.get_noc_addr(args.page_id, args.offset_bytes, noc.get_noc_id());
    }
    template <Noc::AddressType address_type>
    static uint64_t dst_addr(const Accessor& dst, const Noc& noc, const dst_args_type& args) {
        static_assert(address_type == Noc::AddressType::NOC, "a tensor page is not local L1");
        return dst.get_noc_addr(args.page_id, args.offset_bytes, noc.get_noc_id());
    }
};

template <typename Args>
struct noc_traits_t<TensorAccessor<Args>> : AccessorPageNocTraits<TensorAccessor<Args>> {};

template <>
struct noc_traits_t<AbstractTensorAccessorWrapper> : AccessorPageNocTraits<AbstractTensorAccessorWrapper> {};

template <>
struct noc_traits_t<tensor_accessor::Page> {
    struct src_args_type {
        uint32_t offset_bytes = 0;
    };
    struct dst_args_type {
        uint32_t offset_bytes = 0;
    };
    template <Noc::AddressType address_type>
    static uint64_t src_addr(const tensor_accessor::Page& src, const Noc&, const src_args_type& args) {
        return src.noc_addr() + args.offset_bytes;
    }
    template <Noc::AddressType address_type>
    static uint64_t dst_addr(const tensor_accessor::Page& dst, const Noc&, const dst_args_type& args) {
        return dst.noc_addr() + args.offset_bytes;
    }
};
