// tt-metal 0.81.1's CoreLocalMem<T>: a typed pointer into this core's L1
// (indexing, arithmetic, comparisons), usable on data-movement cores as a
// local L1 NOC endpoint (source or destination at address + offset_bytes)
// and as the target of Noc::async_write_zeros. scoped_lock (cache locking
// on parts with an L1 data cache) is a no-op lock here: emulated L1 has no
// cache. Emulated L1 addresses are host addresses below 4 GiB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "ttnn_moe_emu/kernel_common.h"
#if !defined(COMPILE_FOR_TRISC)
#include "api/dataflow/noc.h"
#endif

template <typename T, typename AddressType = uintptr_t>
class CoreLocalMem {
    using difference_type = std::ptrdiff_t;
    static_assert(std::is_integral_v<AddressType> && std::is_unsigned_v<AddressType>,
                  "AddressType must be an unsigned integral type");

public:
    CoreLocalMem(AddressType address) : address_(address) {}
    CoreLocalMem(T* ptr) : address_(reinterpret_cast<AddressType>(ptr)) {}

    T* get_unsafe_ptr() const { return reinterpret_cast<T*>(ttnn_moe_emu::local_l1_address(address_)); }
    AddressType get_address() const { return address_; }

    T& operator[](uint32_t index) const { return get_unsafe_ptr()[index]; }
    T& operator*() const { return *get_unsafe_ptr(); }
    T* operator->() const { return get_unsafe_ptr(); }

    CoreLocalMem& operator+=(difference_type n) {
        address_ += n * sizeof(T);
        return *this;
    }
    CoreLocalMem& operator-=(difference_type n) {
        address_ -= n * sizeof(T);
        return *this;
    }
    CoreLocalMem& operator++() { return *this += 1; }
    CoreLocalMem& operator--() { return *this -= 1; }
    CoreLocalMem operator++(int) {
        CoreLocalMem before = *this;
        ++*this;
        return before;
    }
    CoreLocalMem operator--(int) {
        CoreLocalMem before = *this;
        --*this;
        return before;
    }
    CoreLocalMem operator+(difference_type n) const { return CoreLocalMem(address_ + n * sizeof(T)); }
    CoreLocalMem operator-(difference_type n) const { return CoreLocalMem(address_ - n * sizeof(T)); }
    difference_type operator-(const CoreLocalMem& other) const {
        return (static_cast<difference_type>(address_) - static_cast<difference_type>(other.address_)) /
               static_cast<difference_type>(sizeof(T));
    }

    struct ScopedLock {};
    [[nodiscard]] ScopedLock scoped_lock(size_t) const { return {}; }

    bool operator==(const CoreLocalMem& o) const { return address_ == o.address_; }
    bool operator!=(const CoreLocalMem& o) const { return address_ != o.address_; }
    bool operator<(const CoreLocalMem& o) const { return address_ < o.address_; }
    bool operator<=(const CoreLocalMem& o) const { return address_ <= o.address_; }
    bool operator>(const CoreLocalMem& o) const { return address_ > o.address_; }
    bool operator>=(const CoreLocalMem& o) const { return address_ >= o.address_; }
    explicit operator bool() const { return address_ != 0; }

private:
    AddressType address_;
};

#if !defined(COMPILE_FOR_TRISC)
template <typename T, typename AddressType>
struct noc_traits_t<CoreLocalMem<T, AddressType>> {
    struct src_args_type {
        AddressType offset_bytes = 0;
    };
    struct dst_args_type {
        AddressType offset_bytes = 0;
    };
    template <Noc::AddressType address_type>
    static uint32_t src_addr(const CoreLocalMem<T, AddressType>& src, const Noc&, const src_args_type& args) {
        static_assert(address_type == Noc::AddressType::LOCAL_L1, "CoreLocalMem is a local L1 source");
        return static_cast<uint32_t>(ttnn_moe_emu::local_l1_address(src.get_address() + args.offset_bytes));
    }
    template <Noc::AddressType address_type>
    static uint32_t dst_addr(const CoreLocalMem<T, AddressType>& dst, const Noc&, const dst_args_type& args) {
        static_assert(address_type == Noc::AddressType::LOCAL_L1, "CoreLocalMem is a local L1 destination");
        return static_cast<uint32_t>(ttnn_moe_emu::local_l1_address(dst.get_address() + args.offset_bytes));
    }
};
#endif
