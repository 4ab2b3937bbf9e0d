// SFPI, the SFPU's vector programming interface (the header Tenstorrent's RISC-V toolchain ships), on the
// host: the Wormhole vector unit as 32 lanes over the DST tiles of the running SFPU call.
//
// - Registers. vFloat, vInt and vUInt are one 32-bit value per lane (fp32, two's complement, unsigned);
//   as<T>() / reinterpret<T>() reinterpret the bits.
// - DST addressing (tt-isa-documentation SFPLOAD/SFPSTORE): dst_reg[i] is the address 2 i plus the Dst
//   read/write counter (dst_reg++ adds 2); an address selects four DST rows (addr & ~3) and their even
//   (addr & 2 == 0) or odd columns, lane l at row + l / 8, column 2 (l % 8) (+1). DST rows are 16 wide,
//   64 per tile (four 16x16 faces), so one face is 8 steps and one tile 32 (dst_tile_size_sfpi).
// - Loads read what DST holds (bf16 values in a 16-bit DST, fp32 with fp32_dest_acc_en). Stores into a
//   16-bit DST convert as SFPSTORE does: denormals flush to zero and the mantissa is truncated to bf16,
//   which is why the LLK rounds explicitly (convert<vFloat16b>) before storing.
// - Predication: v_if / v_elseif / v_else / v_endif (nested), v_and, v_block. Comparisons give a lane
//   mask; assignments to a register, compound assignments and DST stores change only the enabled lanes.
// - Arithmetic is fp32 with denormal inputs and results flushed to zero (the vector unit has no
//   denormals). Each vector operation counts one SFPU instruction (the time model's unit).
// What is not here: the LUT instructions (vLut*, lut), raw LReg access (l_reg) and the stochastic rounding
// modes; headers that use them are replaced (see emu README, "SFPU").
#pragma once

#include <bit>
#include <cstdint>
#include <string>

#include "ttnn_moe_emu/kernel_common.h"

#define sfpi_inline inline __attribute__((always_inline))

namespace sfpi {

inline constexpr int SFP_DESTREG_STRIDE = 2;
enum class RoundMode { Nearest, Stochastic };
enum class ExponentMode { Unbiased, Biased };

namespace emu {

inline constexpr unsigned LANES = 32;
inline constexpr uint32_t ALL_LANES = 0xFFFFFFFFu;
inline constexpr uint32_t ROWS_PER_TILE = 64;
inline constexpr uint32_t TILE_ELEMENTS = 1024;

// The vector unit of the running SFPU call (set by the LLK call, ttnn_moe_emu/sfpu_llk.h). A call runs to
// completion without yielding, so one state per kernel build and host thread serves every core that runs it.
struct Machine {
    float* dest = nullptr;    // DST tile 0 of the addressed half, tiles of 32x32 row-major values
    uint32_t dest_tiles = 0;  // tiles the SFPU may address
    bool fp32_dest = false;
    uint32_t dst_counter = 0;  // the Dst read/write counter, in DST rows
    uint32_t enabled = ALL_LANES;
    uint32_t tiles_loaded = 0;  // bit t: DST tile t was read / written by this call
    uint32_t tiles_stored = 0;
    uint64_t instructions = 0;
    float programmable[3] = {0.0f, 0.0f, 0.0f};  // vConstFloatPrgm0..2 (kept between calls, as the LRegs keep them)
    int32_t programmable_int[3] = {0, 0, 0};
};
inline thread_local Machine machine;

inline void count(uint64_t n = 1) {
    machine.instructions += n;
}

inline float flush(float x) {
    const uint32_t bits = std::bit_cast<uint32_t>(x);
    return (bits & 0x7F800000u) == 0 ? std::bit_cast<float>(bits & 0x80000000u) : x;
}

// The DST element lane `lane` of an SFPLOAD/SFPSTORE at row address `addr` reaches.
inline float* dest_element(uint32_t addr, unsigned lane) {
    if (machine.dest == nullptr) ttnn_moe_emu::fail("sfpi: dst_reg used outside an SFPU call (SFPU_UNARY_CALL, ...)");
    const uint32_t row = (addr & ~3u) + lane / 8;
    const uint32_t column = (lane & 7) * 2 + ((addr >> 1) & 1);
    const uint32_t tile = row / ROWS_PER_TILE;
    if (tile >= machine.dest_tiles) {
        const std::string message = "sfpi: dst_reg reaches DST row " + std::to_string(row) + " (tile " +
                                    std::to_string(tile) + "), past the " + std::to_string(machine.dest_tiles) +
                                    " tiles DST holds";
        ttnn_moe_emu::fail(message.c_str());
    }
    const uint32_t face = (row % ROWS_PER_TILE) / 16;
    const uint32_t face_row = row % 16;
    return machine.dest + tile * TILE_ELEMENTS + ((face >> 1) * 16 + face_row) * 32 + (face & 1) * 16 + column;
}

inline float to_bf16_truncated(float x) {
    uint32_t bits = std::bit_cast<uint32_t>(x);
    if ((bits & 0x7F800000u) == 0) bits &= 0x80000000u;
    return std::bit_cast<float>(bits & 0xFFFF0000u);
}

// Round to nearest even; NaN stays NaN (its quiet bit survives the truncation).
inline float to_bf16_nearest(float x) {
    const uint32_t bits = std::bit_cast<uint32_t>(x);
    if ((bits & 0x7F800000u) == 0x7F800000u) {
        const uint32_t quiet = (bits & 0x007FFFFFu) != 0 ? 0x00400000u : 0u;
        return std::bit_cast<float>((bits & 0xFFFF0000u) | quiet);
    }
    const uint32_t rounded = bits + 0x7FFFu + ((bits >> 16) & 1);
    return flush(std::bit_cast<float>(rounded & 0xFFFF0000u));
}

}  // namespace emu

struct vCond {
    uint32_t mask = 0;
};
inline vCond operator&&(vCond a, vCond b) {
    return {a.mask & b.mask};
}
inline vCond operator||(vCond a, vCond b) {
    return {a.mask | b.mask};
}
inline vCond operator!(vCond a) {
    return {~a.mask};
}

// One 32-bit value per lane; the derived register type gives the interpretation (its operators).
template <typename Derived>
struct vBase {
    uint32_t bits[emu::LANES] = {};

    // Writes only the enabled lanes (predication), as every SFPU instruction does.
    void assign(const vBase& other) {
        for (unsigned l = 0; l < emu::LANES; ++l)
            if (emu::machine.enabled >> l & 1) bits[l] = other.bits[l];
    }
    template <typename T>
    T as() const {
        T out;
        for (unsigned l = 0; l < emu::LANES; ++l) out.bits[l] = bits[l];
        return out;
    }
};

struct vInt;
struct vUInt;

struct vFloat : vBase<vFloat> {
    vFloat() = default;
    vFloat(float value) {
        emu::count();
        const uint32_t b = std::bit_cast<uint32_t>(emu::flush(value));
        for (uint32_t& lane : bits) lane = b;
    }
    vFloat(const vFloat&) = default;
    vFloat& operator=(const vFloat& other) {
        emu::count();
        assign(other);
        return *this;
    }
    float lane(unsigned l) const { return std::bit_cast<float>(bits[l]); }
    void set_lane(unsigned l, float v) { bits[l] = std::bit_cast<uint32_t>(v); }
    vFloat& operator+=(const vFloat& o);
    vFloat& operator-=(const vFloat& o);
    vFloat& operator*=(const vFloat& o);
};

template <typename Derived, typename Lane>
struct vIntBase : vBase<Derived> {
    vIntBase() = default;
    vIntBase(Lane value) {
        emu::count();
        for (uint32_t& lane : this->bits) lane = static_cast<uint32_t>(value);
    }
    Lane lane(unsigned l) const { return static_cast<Lane>(this->bits[l]); }
};

struct vInt : vIntBase<vInt, int32_t> {
    using vIntBase::vIntBase;
    vInt(const vInt&) = default;
    vInt& operator=(const vInt& other) {
        emu::count();
        assign(other);
        return *this;
    }
};
struct vUInt : vIntBase<vUInt, uint32_t> {
    using vIntBase::vIntBase;
    vUInt(const vUInt&) = default;
    vUInt& operator=(const vUInt& other) {
        emu::count();
        assign(other);
        return *this;
    }
};

template <typename T, typename V>
T as(const V& v) {
    return v.template as<T>();
}
template <typename T, typename V>
T reinterpret(const V& v) {
    return v.template as<T>();
}

namespace emu {
template <typename V, typename F>
V lanewise(const V& a, const V& b, F f) {
    count();
    V out;
    for (unsigned l = 0; l < LANES; ++l) out.bits[l] = f(a.bits[l], b.bits[l]);
    return out;
}
template <typename V, typename F>
V lanewise(const V& a, F f) {
    count();
    V out;
    for (unsigned l = 0; l < LANES; ++l) out.bits[l] = f(a.bits[l]);
    return out;
}
template <typename V, typename F>
vCond compare(const V& a, const V& b, F f) {
    count();
    vCond c;
    for (unsigned l = 0; l < LANES; ++l)
        if (f(a.bits[l], b.bits[l])) c.mask |= 1u << l;
    return c;
}
inline float as_float(uint32_t b) {
    return flush(std::bit_cast<float>(b));
}
inline uint32_t as_bits(float f) {
    return std::bit_cast<uint32_t>(flush(f));
}
}  // namespace emu

// ---- vFloat arithmetic and comparisons
inline vFloat operator+(const vFloat& a, const vFloat& b) {
    return emu::lanewise(a, b,
                         [](uint32_t x, uint32_t y) { return emu::as_bits(emu::as_float(x) + emu::as_float(y)); });
}
inline vFloat operator-(const vFloat& a, const vFloat& b) {
    return emu::lanewise(a, b,
                         [](uint32_t x, uint32_t y) { return emu::as_bits(emu::as_float(x) - emu::as_float(y)); });
}
inline vFloat operator*(const vFloat& a, const vFloat& b) {
    return emu::lanewise(a, b,
                         [](uint32_t x, uint32_t y) { return emu::as_bits(emu::as_float(x) * emu::as_float(y)); });
}
inline vFloat operator-(const vFloat& a) {
    return emu::lanewise(a, [](uint32_t x) { return x ^ 0x80000000u; });
}
inline vFloat& vFloat::operator+=(const vFloat& o) {
    return *this = *this + o;
}
inline vFloat& vFloat::operator-=(const vFloat& o) {
    return *this = *this - o;
}
inline vFloat& vFloat::operator*=(const vFloat& o) {
    return *this = *this * o;
}
#define SFPI_EMU_FLOAT_COMPARE(OP)                                                                              \
    inline vCond operator OP(const vFloat& a, const vFloat& b) {                                                \
        return emu::compare(a, b, [](uint32_t x, uint32_t y) { return emu::as_float(x) OP emu::as_float(y); }); \
    }
SFPI_EMU_FLOAT_COMPARE(<)
SFPI_EMU_FLOAT_COMPARE(<=)
SFPI_EMU_FLOAT_COMPARE(>)
SFPI_EMU_FLOAT_COMPARE(>=)
SFPI_EMU_FLOAT_COMPARE(==)
SFPI_EMU_FLOAT_COMPARE(!=)
#undef SFPI_EMU_FLOAT_COMPARE

// ---- integer arithmetic, bitwise operations, shifts and comparisons (vInt signed, vUInt unsigned)
#define SFPI_EMU_INT_OPS(V, LANE)                                                                                      \
    inline V operator+(const V& a, const V& b) {                                                                       \
        return emu::lanewise(a, b, [](uint32_t x, uint32_t y) { return x + y; });                                      \
    }                                                                                                                  \
    inline V operator-(const V& a, const V& b) {                                                                       \
        return emu::lanewise(a, b, [](uint32_t x, uint32_t y) { return x - y; });                                      \
    }                                                                                                                  \
    inline V operator&(const V& a, const V& b) {                                                                       \
        return emu::lanewise(a, b, [](uint32_t x, uint32_t y) { return x & y; });                                      \
    }                                                                                                                  \
    inline V operator|(const V& a, const V& b) {                                                                       \
        return emu::lanewise(a, b, [](uint32_t x, uint32_t y) { return x | y; });                                      \
    }                                                                                                                  \
    inline V operator^(const V& a, const V& b) {                                                                       \
        return emu::lanewise(a, b, [](uint32_t x, uint32_t y) { return x ^ y; });                                      \
    }                                                                                                                  \
    inline V operator~(const V& a) {                                                                                   \
        return emu::lanewise(a, [](uint32_t x) { return ~x; });                                                        \
    }                                                                                                                  \
    inline V operator-(const V& a) {                                                                                   \
        return emu::lanewise(a, [](uint32_t x) { return 0u - x; });                                                    \
    }                                                                                                                  \
    inline V operator<<(const V& a, unsigned n) {                                                                      \
        return emu::lanewise(a, [n](uint32_t x) { return n >= 32 ? 0u : x << n; });                                    \
    }                                                                                                                  \
    inline V operator>>(const V& a, unsigned n) {                                                                      \
        return emu::lanewise(a, [n](uint32_t x) {                                                                      \
            return static_cast<uint32_t>(n >= 32 ? static_cast<LANE>(x) >> 31 : static_cast<LANE>(x) >> n);            \
        });                                                                                                            \
    }                                                                                                                  \
    inline V& operator+=(V& a, const V& b) {                                                                           \
        return a = a + b;                                                                                              \
    }                                                                                                                  \
    inline V& operator-=(V& a, const V& b) {                                                                           \
        return a = a - b;                                                                                              \
    }                                                                                                                  \
    inline V& operator&=(V& a, const V& b) {                                                                           \
        return a = a & b;                                                                                              \
    }                                                                                                                  \
    inline V& operator|=(V& a, const V& b) {                                                                           \
        return a = a | b;                                                                                              \
    }                                                                                                                  \
    inline V& operator^=(V& a, const V& b) {                                                                           \
        return a = a ^ b;                                                                                              \
    }                                                                                                                  \
    inline V& operator<<=(V& a, unsigned n) {                                                                          \
        return a = a << n;                                                                                             \
    }                                                                                                                  \
    inline V& operator>>=(V& a, unsigned n) {                                                                          \
        return a = a >> n;                                                                                             \
    }                                                                                                                  \
    inline vCond operator<(const V& a, const V& b) {                                                                   \
        return emu::compare(a, b, [](uint32_t x, uint32_t y) { return static_cast<LANE>(x) < static_cast<LANE>(y); }); \
    }                                                                                                                  \
    inline vCond operator<=(const V& a, const V& b) {                                                                  \
        return emu::compare(a, b,                                                                                      \
                            [](uint32_t x, uint32_t y) { return static_cast<LANE>(x) <= static_cast<LANE>(y); });      \
    }                                                                                                                  \
    inline vCond operator>(const V& a, const V& b) {                                                                   \
        return b < a;                                                                                                  \
    }                                                                                                                  \
    inline vCond operator>=(const V& a, const V& b) {                                                                  \
        return b <= a;                                                                                                 \
    }                                                                                                                  \
    inline vCond operator==(const V& a, const V& b) {                                                                  \
        return emu::compare(a, b, [](uint32_t x, uint32_t y) { return x == y; });                                      \
    }                                                                                                                  \
    inline vCond operator!=(const V& a, const V& b) {                                                                  \
        return emu::compare(a, b, [](uint32_t x, uint32_t y) { return x != y; });                                      \
    }
SFPI_EMU_INT_OPS(vInt, int32_t)
SFPI_EMU_INT_OPS(vUInt, uint32_t)
#undef SFPI_EMU_INT_OPS

// ---- DST access
struct DestRegRef {
    uint32_t index;  // dst_reg[index]

    uint32_t address() const { return SFP_DESTREG_STRIDE * index + emu::machine.dst_counter; }
    vFloat load() const {
        emu::count();
        vFloat out;
        const uint32_t addr = address();
        for (unsigned l = 0; l < emu::LANES; ++l) out.set_lane(l, *emu::dest_element(addr, l));
        emu::machine.tiles_loaded |= 1u << ((addr & ~3u) / emu::ROWS_PER_TILE);
        return out;
    }
    template <typename V>
    void store(const vBase<V>& v) const {
        emu::count();
        const uint32_t addr = address();
        for (unsigned l = 0; l < emu::LANES; ++l) {
            if (!(emu::machine.enabled >> l & 1)) continue;
            const float value = std::bit_cast<float>(v.bits[l]);
            *emu::dest_element(addr, l) = emu::machine.fp32_dest ? value : emu::to_bf16_truncated(value);
        }
        emu::machine.tiles_stored |= 1u << ((addr & ~3u) / emu::ROWS_PER_TILE);
    }
    operator vFloat() const { return load(); }
    const DestRegRef& operator=(const vFloat& v) const {
        store(v);
        return *this;
    }
    const DestRegRef& operator=(const vInt& v) const {
        store(v);
        return *this;
    }
    const DestRegRef& operator=(const vUInt& v) const {
        store(v);
        return *this;
    }
    const DestRegRef& operator=(float v) const { return *this = vFloat(v); }
    const DestRegRef& operator=(const DestRegRef& other) const { return *this = other.load(); }
};

struct DestReg {
    DestRegRef operator[](uint32_t index) const { return {index}; }
    void operator++(int) const { *this += 1; }
    void operator++() const { *this += 1; }
    void operator+=(uint32_t steps) const {
        emu::count();
        emu::machine.dst_counter += SFP_DESTREG_STRIDE * steps;
    }
};
inline constexpr DestReg dst_reg;

// A bfloat16 immediate (SFPLOADI of 16 bits): the value's top 16 bits.
struct sFloat16b {
    float value;
    sFloat16b(float f) : value(std::bit_cast<float>(std::bit_cast<uint32_t>(f) & 0xFFFF0000u)) {}
    operator vFloat() const { return vFloat(value); }
};

// ---- constant registers
inline const vFloat vConst0 = 0.0f;
inline const vFloat vConst1 = 1.0f;
inline const vFloat vConstNeg1 = -1.0f;

// A programmable constant register: assigned in an init, read by later calls.
template <unsigned I>
struct ProgrammableFloat {
    const ProgrammableFloat& operator=(float value) const {
        emu::machine.programmable[I] = emu::flush(value);
        return *this;
    }
    operator vFloat() const { return vFloat(emu::machine.programmable[I]); }
};
template <unsigned I>
struct ProgrammableInt {
    const ProgrammableInt& operator=(int32_t value) const {
        emu::machine.programmable_int[I] = value;
        return *this;
    }
    operator vInt() const { return vInt(emu::machine.programmable_int[I]); }
};
inline constexpr ProgrammableFloat<0> vConstFloatPrgm0;
inline constexpr ProgrammableFloat<1> vConstFloatPrgm1;
inline constexpr ProgrammableFloat<2> vConstFloatPrgm2;
inline constexpr ProgrammableInt<0> vConstIntPrgm0;
inline constexpr ProgrammableInt<1> vConstIntPrgm1;
inline constexpr ProgrammableInt<2> vConstIntPrgm2;

// ---- field intrinsics (sign, exponent, mantissa of fp32 lanes)
inline vFloat setsgn(const vFloat& v, int sign) {
    return emu::lanewise(v, [sign](uint32_t x) { return (x & 0x7FFFFFFFu) | (sign ? 0x80000000u : 0u); });
}
inline vFloat setsgn(const vFloat& v, const vFloat& sign_of) {
    return emu::lanewise(v, sign_of, [](uint32_t x, uint32_t s) { return (x & 0x7FFFFFFFu) | (s & 0x80000000u); });
}
inline vFloat copysgn(const vFloat& v, const vFloat& sign_of) {
    return setsgn(v, sign_of);
}
// Sign and exponent of `v`, mantissa of `mantissa_of`.
inline vFloat copyman(const vFloat& v, const vFloat& mantissa_of) {
    return emu::lanewise(v, mantissa_of, [](uint32_t x, uint32_t m) { return (x & 0xFF800000u) | (m & 0x007FFFFFu); });
}
inline vFloat setexp(const vFloat& v, const vInt& biased_exponent) {
    return emu::lanewise(v, biased_exponent.as<vFloat>(),
                         [](uint32_t x, uint32_t e) { return (x & 0x807FFFFFu) | ((e & 0xFFu) << 23); });
}
inline vFloat setexp(const vFloat& v, const vUInt& biased_exponent) {
    return setexp(v, biased_exponent.as<vInt>());
}
inline vFloat setexp(const vFloat& v, int32_t biased_exponent) {
    return setexp(v, vInt(biased_exponent));
}
inline vFloat setman(const vFloat& v, const vInt& mantissa) {
    return emu::lanewise(v, mantissa.as<vFloat>(),
                         [](uint32_t x, uint32_t m) { return (x & 0xFF800000u) | (m & 0x007FFFFFu); });
}
inline vFloat setman(const vFloat& v, int32_t mantissa) {
    return setman(v, vInt(mantissa));
}
// The exponent field: unbiased (minus 127) by default, as stored with ExponentMode::Biased.
inline vInt exexp(const vFloat& v, ExponentMode mode = ExponentMode::Unbiased) {
    const uint32_t bias = mode == ExponentMode::Biased ? 0 : 127;
    return emu::lanewise(v, [bias](uint32_t x) { return ((x >> 23) & 0xFFu) - bias; }).as<vInt>();
}
inline vInt exexp_nodebias(const vFloat& v) {
    return exexp(v, ExponentMode::Biased);
}
// The mantissa with its hidden one (exman8) or without (exman9).
inline vInt exman8(const vFloat& v) {
    return emu::lanewise(v, [](uint32_t x) { return (x & 0x007FFFFFu) | 0x00800000u; }).as<vInt>();
}
inline vInt exman9(const vFloat& v) {
    return emu::lanewise(v, [](uint32_t x) { return x & 0x007FFFFFu; }).as<vInt>();
}
// Adds `delta` to the exponent field.
inline vFloat addexp(const vFloat& v, int32_t delta) {
    return emu::lanewise(v, [delta](uint32_t x) {
        const uint32_t e = (((x >> 23) & 0xFFu) + static_cast<uint32_t>(delta)) & 0xFFu;
        return (x & 0x807FFFFFu) | (e << 23);
    });
}
inline vFloat abs(const vFloat& v) {
    return setsgn(v, 0);
}
inline vInt abs(const vInt& v) {
    return emu::lanewise(v, [](uint32_t x) { return static_cast<int32_t>(x) < 0 ? 0u - x : x; });
}
inline vFloat max(const vFloat& a, const vFloat& b) {
    return emu::lanewise(a, b, [](uint32_t x, uint32_t y) { return emu::as_float(x) < emu::as_float(y) ? y : x; });
}
inline vFloat min(const vFloat& a, const vFloat& b) {
    return emu::lanewise(a, b, [](uint32_t x, uint32_t y) { return emu::as_float(y) < emu::as_float(x) ? y : x; });
}
inline vInt lz(const vInt& v) {
    return emu::lanewise(v, [](uint32_t x) { return static_cast<uint32_t>(std::countl_zero(x)); });
}

// ---- conversions
struct vFloat16b {};  // convert<vFloat16b>: an fp32 value rounded to bfloat16
template <typename To>
vFloat convert(const vFloat& v, RoundMode mode = RoundMode::Nearest);
template <>
inline vFloat convert<vFloat16b>(const vFloat& v, RoundMode mode) {
    if (mode != RoundMode::Nearest) ttnn_moe_emu::fail("sfpi::convert<vFloat16b>: stochastic rounding is not emulated");
    return emu::lanewise(
        v, [](uint32_t x) { return std::bit_cast<uint32_t>(emu::to_bf16_nearest(std::bit_cast<float>(x))); });
}
inline vFloat float_to_fp16b(const vFloat& v, RoundMode mode = RoundMode::Nearest) {
    return convert<vFloat16b>(v, mode);
}
// Two's complement integer to fp32, rounded to nearest even.
inline vFloat int32_to_float(const vInt& v, int = 0) {
    return emu::lanewise(v.as<vFloat>(),
                         [](uint32_t x) { return emu::as_bits(static_cast<float>(static_cast<int32_t>(x))); });
}

namespace emu {
// Predication: a v_if block narrows the enabled lanes and restores them at v_endif.
class CondScope {
public:
    CondScope() : saved_(machine.enabled) {}
    ~CondScope() { machine.enabled = saved_; }
    CondScope(const CondScope&) = delete;
    CondScope& operator=(const CondScope&) = delete;
    void if_(vCond c) {
        count();
        machine.enabled = saved_ & c.mask;
        taken_ = machine.enabled;
    }
    void elseif_(vCond c) {
        count();
        machine.enabled = saved_ & ~taken_ & c.mask;
        taken_ |= machine.enabled;
    }
    void else_() {
        count();
        machine.enabled = saved_ & ~taken_;
    }
    void and_(vCond c) {
        count();
        machine.enabled &= c.mask;
        taken_ = machine.enabled;
    }

private:
    uint32_t saved_;
    uint32_t taken_ = 0;
};
}  // namespace emu

}  // namespace sfpi

#define v_if(cond)                            \
    {                                         \
        ::sfpi::emu::CondScope sfpi_cc_scope; \
        sfpi_cc_scope.if_(cond);
#define v_elseif(cond) sfpi_cc_scope.elseif_(cond);
#define v_else sfpi_cc_scope.else_();
#define v_endif }
#define v_block \
    {           \
        ::sfpi::emu::CondScope sfpi_cc_scope;
#define v_endblock }
#define v_and(cond) sfpi_cc_scope.and_(cond)
