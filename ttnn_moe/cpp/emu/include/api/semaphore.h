// The Semaphore object of Metal 2.0 data-movement kernels: a program semaphore named by its
// `sem::` binding token (or its id), with local waits and updates and NOC increments, sets and
// relays to the same semaphore on other cores. On Wormhole every data-movement binding is
// LOCAL_NONATOMIC: a plain word of L1 that remote cores reach through NOC atomics and writes.
#pragma once

#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/noc.h"
#include "api/dataflow/semaphore_binding_token.h"

#ifdef COMPILE_FOR_TRISC
#error "the emulated Semaphore object serves data-movement kernels only"
#endif

template <ProgrammableCoreType core_type = ProgrammableCoreType::TENSIX>
class Semaphore {
public:
    explicit Semaphore(SemaphoreBindingToken token) : Semaphore(checked_id(token)) {}
    explicit Semaphore(std::uint32_t semaphore_id) : address_(get_semaphore<core_type>(semaphore_id)) {}

    void up(std::uint32_t value) { ttnn_moe_emu::services->store_l1_word(word(), *word() + value, 0, 1); }
    // Blocks until the count covers `value`, then takes it.
    void down(std::uint32_t value) {
        noc_semaphore_wait_min(word(), value);
        ttnn_moe_emu::services->store_l1_word(word(), *word() - value, 0, 1);
    }
    void wait(std::uint32_t value) const { noc_semaphore_wait(word(), value); }
    void wait_min(std::uint32_t value) const { noc_semaphore_wait_min(word(), value); }
    void set(std::uint32_t value) { noc_semaphore_set(word(), value); }
    std::uint32_t value() const { return *word(); }

    // Atomic increment of this semaphore on core (noc_x, noc_y).
    void up(const Noc& noc, std::uint32_t noc_x, std::uint32_t noc_y, std::uint32_t value,
            std::uint8_t vc = NOC_UNICAST_WRITE_VC) {
        noc_semaphore_inc(get_noc_addr(noc_x, noc_y, local_offset(), noc.get_noc_id()), value, noc.get_noc_id(), vc);
    }
    // Writes this semaphore's value into dst_sem on core (noc_x, noc_y).
    template <ProgrammableCoreType dst_core_type = core_type>
    void relay_unicast(const Noc& noc, const Semaphore<dst_core_type>& dst_sem, std::uint32_t noc_x,
                       std::uint32_t noc_y) {
        noc_semaphore_set_remote(static_cast<std::uint32_t>(address_),
                                 get_noc_addr(noc_x, noc_y, dst_sem.local_offset(), noc.get_noc_id()),
                                 noc.get_noc_id());
    }
    // Writes this semaphore's value into the same semaphore on every core of the rectangle.
    template <NocOptions opts = NocOptions::DEFAULT>
    void set_multicast(const Noc& noc, std::uint32_t noc_x_start, std::uint32_t noc_y_start, std::uint32_t noc_x_end,
                       std::uint32_t noc_y_end, std::uint32_t num_dests, bool linked = false) {
        multicast_value<opts>(noc, local_offset(), noc_x_start, noc_y_start, noc_x_end, noc_y_end, num_dests, linked);
    }
    template <NocOptions opts = NocOptions::DEFAULT, ProgrammableCoreType dst_core_type = core_type>
    void relay_multicast(const Noc& noc, const Semaphore<dst_core_type>& dst_sem, std::uint32_t noc_x_start,
                         std::uint32_t noc_y_start, std::uint32_t noc_x_end, std::uint32_t noc_y_end,
                         std::uint32_t num_dests, bool linked = false) {
        multicast_value<opts>(noc, dst_sem.local_offset(), noc_x_start, noc_y_start, noc_x_end, noc_y_end, num_dests,
                              linked);
    }
    void inc_multicast(const Noc& noc, std::uint32_t noc_x_start, std::uint32_t noc_y_start, std::uint32_t noc_x_end,
                       std::uint32_t noc_y_end, std::uint32_t value, std::uint32_t num_dests) {
        noc_semaphore_inc_multicast(
            get_noc_multicast_addr(noc_x_start, noc_y_start, noc_x_end, noc_y_end, local_offset(), noc.get_noc_id()),
            value, num_dests, noc.get_noc_id());
    }

    // The semaphore's L1 offset, the same on every core of the program.
    std::uint32_t local_offset() const {
        return static_cast<std::uint32_t>(address_ - static_cast<std::uintptr_t>(ttnn_moe_emu::env().l1_base));
    }

private:
    static std::uint32_t checked_id(SemaphoreBindingToken token) {
        if (token.scope != SemScope::LOCAL_NONATOMIC) {
            ttnn_moe_emu::fail("Semaphore: Wormhole data-movement bindings are LOCAL_NONATOMIC");
        }
        return token.id;
    }
    volatile tt_l1_ptr std::uint32_t* word() const {
        return reinterpret_cast<volatile tt_l1_ptr std::uint32_t*>(address_);
    }
    template <NocOptions opts>
    void multicast_value(const Noc& noc, std::uint32_t dst_offset, std::uint32_t noc_x_start, std::uint32_t noc_y_start,
                         std::uint32_t noc_x_end, std::uint32_t noc_y_end, std::uint32_t num_dests, bool linked) {
        const std::uint64_t dst =
            get_noc_multicast_addr(noc_x_start, noc_y_start, noc_x_end, noc_y_end, dst_offset, noc.get_noc_id());
        const auto src = static_cast<std::uint32_t>(address_);
        if constexpr (has_flag(opts, NocOptions::MCAST_INCL_SRC)) {
            noc_semaphore_set_multicast_loopback_src(src, dst, num_dests, linked, noc.get_noc_id());
        } else {
            noc_semaphore_set_multicast(src, dst, num_dests, linked, noc.get_noc_id());
        }
    }

    std::uintptr_t address_;
};
