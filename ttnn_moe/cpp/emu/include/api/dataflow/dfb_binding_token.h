// The `dfb::name` tokens of kernel_bindings_generated.h: a dataflow buffer (circular buffer) id,
// usable wherever an id is (`DataflowBuffer b(dfb::in0)`, `constexpr uint32_t id = dfb::out`).
#pragma once

#include <cstdint>

struct DFBBindingToken {
    explicit constexpr DFBBindingToken(uint16_t id) noexcept : id_(id) {}
    constexpr operator uint32_t() const noexcept { return id_; }

private:
    uint16_t id_;
};
