// Host stand-in for <sfpi.h>, the SFPU vector-programming header that ships with
// Tenstorrent's RISC-V toolchain (SFPI), not with the ttnn wheel.
//
// The conformance check parses compute kernels together with the real LLK SFPU
// headers, which are written against SFPI. Nothing here computes: it only gives
// every name those headers use a declaration of the right kind (type, function,
// constant, macro) so that they parse. Every vector type accepts and converts to
// every other, operators and intrinsics accept any operands. The check is about
// the kernel API above this layer; SFPU arithmetic is the emulator's business.
#pragma once

#include <cstdint>
#include <type_traits>

#define sfpi_inline inline __attribute__((always_inline))

namespace sfpi {

enum class DataLayout { Default, F32, FSrcB, I32, SM32, M32, U16, U32, I16, U8, I8 };
enum class RoundMode { Nearest, NearestStochastic, Stochastic, Truncate };
enum class ExponentMode { Biased, Unbiased, Debiased };
enum class MantissaMode { ImplicitOne, NoImplicitOne, Pad8, Pad9 };
enum class ShiftMode { Logical, Arithmetic };
enum class LutSign { Retain, Update };
enum class LRegs { LReg0, LReg1, LReg2, LReg3, LReg4, LReg5, LReg6, LReg7, LRegCount };

struct VectorBase {};

template <typename T>
inline constexpr bool is_vector_v = std::is_base_of_v<VectorBase, std::decay_t<T>>;

// One shape for every SFPU register type (Kind only keeps the aliases distinct types).
template <int Kind>
struct Vector : VectorBase {
    Vector() = default;
    template <typename T, typename... More>
    Vector(const T&, const More&...) {}
    template <typename T>
    Vector& operator=(const T&) {
        return *this;
    }

    template <typename T, std::enable_if_t<is_vector_v<T>, int> = 0>
    T as() const {
        return T{};
    }
    template <DataLayout Layout>
    Vector& as() {
        return *this;
    }
    template <DataLayout Layout>
    const Vector& as() const {
        return *this;
    }

    unsigned get() const { return 0; }
    void in_use() const {}
    // Addressing mode and/or data layout of a DST access.
    template <typename... A>
    Vector& mode(const A&...) {
        return *this;
    }
    template <DataLayout Layout, typename... A>
    Vector& mode(const A&...) {
        return *this;
    }

    template <typename T>
    Vector& operator+=(const T&) {
        return *this;
    }
    template <typename T>
    Vector& operator-=(const T&) {
        return *this;
    }
    template <typename T>
    Vector& operator*=(const T&) {
        return *this;
    }
    template <typename T>
    Vector& operator&=(const T&) {
        return *this;
    }
    template <typename T>
    Vector& operator|=(const T&) {
        return *this;
    }
    template <typename T>
    Vector& operator^=(const T&) {
        return *this;
    }
    template <typename T>
    Vector& operator<<=(const T&) {
        return *this;
    }
    template <typename T>
    Vector& operator>>=(const T&) {
        return *this;
    }
    Vector& operator++() { return *this; }
    Vector operator++(int) { return *this; }
    Vector& operator--() { return *this; }
    Vector operator--(int) { return *this; }
    Vector operator-() const { return *this; }
    Vector operator~() const { return *this; }
    Vector operator!() const { return *this; }
    // A comparison result is a lane predicate; v_if tests it.
    explicit operator bool() const { return true; }
};

using vFloat = Vector<0>;
using vInt = Vector<1>;
using vUInt = Vector<2>;
using vBool = Vector<3>;
using vFloat16a = Vector<4>;
using vFloat16b = Vector<5>;
using vUInt8 = Vector<6>;
using vUInt16 = Vector<7>;
using vSMag = Vector<8>;
using vSMag8 = Vector<9>;
using vSMag16 = Vector<10>;
using vMag = Vector<11>;
using vLut16ss = Vector<12>;
using vLut16ii = Vector<13>;
using vLut8si = Vector<14>;
using vLut = Vector<15>;
using sFloat16a = Vector<16>;
using sFloat16b = Vector<17>;

template <typename A, typename B>
using vector_result_t = std::enable_if_t<is_vector_v<A> || is_vector_v<B>, vFloat>;

#define SFPI_STANDIN_BINARY_OPERATOR(op)                    \
    template <typename A, typename B>                       \
    vector_result_t<A, B> operator op(const A&, const B&) { \
        return {};                                          \
    }
SFPI_STANDIN_BINARY_OPERATOR(+)
SFPI_STANDIN_BINARY_OPERATOR(-)
SFPI_STANDIN_BINARY_OPERATOR(*)
SFPI_STANDIN_BINARY_OPERATOR(/)
SFPI_STANDIN_BINARY_OPERATOR(&)
SFPI_STANDIN_BINARY_OPERATOR(|)
SFPI_STANDIN_BINARY_OPERATOR(^)
SFPI_STANDIN_BINARY_OPERATOR(<<)
SFPI_STANDIN_BINARY_OPERATOR(>>)
SFPI_STANDIN_BINARY_OPERATOR(<)
SFPI_STANDIN_BINARY_OPERATOR(<=)
SFPI_STANDIN_BINARY_OPERATOR(>)
SFPI_STANDIN_BINARY_OPERATOR(>=)
SFPI_STANDIN_BINARY_OPERATOR(==)
SFPI_STANDIN_BINARY_OPERATOR(!=)
SFPI_STANDIN_BINARY_OPERATOR(&&)
SFPI_STANDIN_BINARY_OPERATOR(||)
#undef SFPI_STANDIN_BINARY_OPERATOR

// The window onto the DST register (indexed by row group, advanced per iteration).
struct DestRegWindow {
    vFloat& operator[](int) const {
        static vFloat row;
        return row;
    }
    const DestRegWindow& operator++() const { return *this; }
    const DestRegWindow& operator++(int) const { return *this; }
    const DestRegWindow& operator+=(int) const { return *this; }
};
inline constexpr DestRegWindow dst_reg{};

// The SFPU's local registers.
struct LocalRegisterFile {
    vFloat& operator[](LRegs) const {
        static vFloat reg;
        return reg;
    }
    vFloat& operator[](int) const {
        static vFloat reg;
        return reg;
    }
};
inline constexpr LocalRegisterFile l_reg{};

// Hardware constants and programmable constant registers.
inline vFloat vConst0, vConst1, vConstNeg1, vConst0p8373, vConstFloatPrgm0, vConstFloatPrgm1, vConstFloatPrgm2,
    vConstIntPrgm0, vConstIntPrgm1, vConstIntPrgm2, vConstTileId;

// Marks a region of high register pressure for the register allocator.
struct lreg_pressure {};

// Intrinsic wrappers: any operands, a vector result; explicit template arguments
// (a result type, a layout or a mode) are accepted in the positions SFPI takes them.
#define SFPI_STANDIN_INTRINSIC(name)                \
    template <typename R = vFloat, typename... A>   \
    sfpi_inline vFloat name(const A&...) {          \
        return {};                                  \
    }                                               \
    template <auto Mode, typename... A>             \
    sfpi_inline vFloat name(const A&...) {          \
        return {};                                  \
    }                                               \
    template <auto Mode, auto Mode2, typename... A> \
    sfpi_inline vFloat name(const A&...) {          \
        return {};                                  \
    }
SFPI_STANDIN_INTRINSIC(as)
SFPI_STANDIN_INTRINSIC(reinterpret)
SFPI_STANDIN_INTRINSIC(convert)
SFPI_STANDIN_INTRINSIC(abs)
SFPI_STANDIN_INTRINSIC(copysgn)
SFPI_STANDIN_INTRINSIC(exexp)
SFPI_STANDIN_INTRINSIC(exexp_nodebias)
SFPI_STANDIN_INTRINSIC(exman)
SFPI_STANDIN_INTRINSIC(exman8)
SFPI_STANDIN_INTRINSIC(exman9)
SFPI_STANDIN_INTRINSIC(setexp)
SFPI_STANDIN_INTRINSIC(setman)
SFPI_STANDIN_INTRINSIC(setsgn)
SFPI_STANDIN_INTRINSIC(setsgn2)
SFPI_STANDIN_INTRINSIC(addexp)
SFPI_STANDIN_INTRINSIC(copyman)
SFPI_STANDIN_INTRINSIC(min)
SFPI_STANDIN_INTRINSIC(max)
SFPI_STANDIN_INTRINSIC(clamp)
SFPI_STANDIN_INTRINSIC(symmetric_clamp)
SFPI_STANDIN_INTRINSIC(shft)
SFPI_STANDIN_INTRINSIC(lut)
SFPI_STANDIN_INTRINSIC(lut2)
SFPI_STANDIN_INTRINSIC(lut_sign)
SFPI_STANDIN_INTRINSIC(lut2_sign)
SFPI_STANDIN_INTRINSIC(is_inf)
SFPI_STANDIN_INTRINSIC(is_nan)
SFPI_STANDIN_INTRINSIC(is_finite)
SFPI_STANDIN_INTRINSIC(is_pos)
SFPI_STANDIN_INTRINSIC(is_neg)
SFPI_STANDIN_INTRINSIC(nearby)
SFPI_STANDIN_INTRINSIC(approx_recip)
SFPI_STANDIN_INTRINSIC(int32_to_float)
SFPI_STANDIN_INTRINSIC(float_to_fp16a)
SFPI_STANDIN_INTRINSIC(float_to_fp16b)
SFPI_STANDIN_INTRINSIC(float_to_uint8)
SFPI_STANDIN_INTRINSIC(float_to_int8)
SFPI_STANDIN_INTRINSIC(float_to_uint16)
SFPI_STANDIN_INTRINSIC(float_to_int16)
SFPI_STANDIN_INTRINSIC(subvec_shflror1)
SFPI_STANDIN_INTRINSIC(subvec_shflshr1)
SFPI_STANDIN_INTRINSIC(subvec_transp)
SFPI_STANDIN_INTRINSIC(vec_swap)
SFPI_STANDIN_INTRINSIC(vec_min_max)
#undef SFPI_STANDIN_INTRINSIC

// min_max yields both results (auto [lo, hi] = min_max(a, b)).
struct VectorPair {
    vFloat min;
    vFloat max;
};
template <typename... A>
sfpi_inline VectorPair min_max(const A&...) {
    return {};
}

// Instruction modifier immediates used by the LLK SFPU code. Values are distinct
// (they appear as switch labels); they are never encoded into instructions here.
inline constexpr int SFP_DESTREG_STRIDE = 2;
inline constexpr int SFPABS_MOD1_INT = 1;
inline constexpr int SFPCAST_MOD1_INT32_TO_FP32_RNE = 2;
inline constexpr int SFPCAST_MOD1_SM32_TO_FP32_RNE = 3;
inline constexpr int SFPENCC_IMM12_BOTH = 4;
inline constexpr int SFPENCC_MOD1_EI_RI = 5;
inline constexpr int SFPENCC_MOD1_EU_R1 = 6;
inline constexpr int SFPEXEXP_MOD1_SET_CC_COMP_EXP = 7;
inline constexpr int SFPEXEXP_MOD1_SET_CC_SGN_EXP = 8;
inline constexpr int SFPEXMAN_MOD1_PAD9 = 9;
inline constexpr int SFPIADD_MOD1_ARG_2SCOMP_LREG_DST = 10;
inline constexpr int SFPIADD_MOD1_ARG_IMM = 11;
inline constexpr int SFPIADD_MOD1_CC_GTE0 = 12;
inline constexpr int SFPIADD_MOD1_CC_LT0 = 13;
inline constexpr int SFPIADD_MOD1_CC_NONE = 14;
inline constexpr int SFPLOADI_MOD0_FLOATA = 15;
inline constexpr int SFPLOADI_MOD0_FLOATB = 16;
inline constexpr int SFPLOADI_MOD0_LOWER = 17;
inline constexpr int SFPLOADI_MOD0_SHORT = 18;
inline constexpr int SFPLOADI_MOD0_UPPER = 19;
inline constexpr int SFPLOADI_MOD0_USHORT = 20;
inline constexpr int SFPLOAD_MOD0_FMT_SRCB = 21;
inline constexpr int SFPLZ_MOD1_CC_NE0 = 22;
inline constexpr int SFPMAD_MOD1_INDIRECT_VA = 23;
inline constexpr int SFPMAD_MOD1_OFFSET_NONE = 24;
inline constexpr int SFPMOV_MOD1_NEGATE = 25;
inline constexpr int SFPSETCC_MOD1_LREG_EQ0 = 26;
inline constexpr int SFPSETCC_MOD1_LREG_GTE0 = 27;
inline constexpr int SFPSETCC_MOD1_LREG_LT0 = 28;
inline constexpr int SFPSETCC_MOD1_LREG_NE0 = 29;
inline constexpr int SFPSETEXP_MOD1_ARG_EXPONENT = 30;
inline constexpr int SFPSETSGN_MOD1_ARG_IMM = 31;
inline constexpr int SFPSHFT2_MOD1_SHFT_IMM = 32;
inline constexpr int SFPSHFT2_MOD1_SHFT_LREG = 33;
inline constexpr int SFPSHFT2_MOD1_SUBVEC_SHFLROR1 = 34;
inline constexpr int SFPSHFT_MOD1_ARG_IMM = 35;
inline constexpr int SFPSTOCHRND_MOD1_FP32_TO_FP16B = 36;
inline constexpr int SFPSTOCHRND_MOD1_FP32_TO_INT16 = 37;
inline constexpr int SFPSTOCHRND_MOD1_FP32_TO_INT8 = 38;
inline constexpr int SFPSTOCHRND_MOD1_FP32_TO_UINT16 = 39;
inline constexpr int SFPSTOCHRND_MOD1_FP32_TO_UINT8 = 40;
inline constexpr int SFPSTOCHRND_RND_EVEN = 41;
inline constexpr int SFPSTORE_MOD0_FMT_LO16 = 42;
inline constexpr int SFPSTORE_MOD0_FMT_SRCB = 43;
inline constexpr int SFPSWAP_MOD1_SWAP = 44;
inline constexpr int SFPSWAP_MOD1_VEC_MIN_MAX = 45;
// Blackhole's approximate reciprocal / exponential instruction (SFPARECIP).
inline constexpr int SFPARECIP_MOD1_RECIP = 46;
inline constexpr int SFPARECIP_MOD1_EXP = 47;

}  // namespace sfpi

// The raw builtins of the SFPI compiler that a few LLK kernels call directly: multiply-add, and
// Blackhole's lane-wise greater-than (SFPGT, in the binary SFPU ops' division path).
#define __builtin_rvtt_sfpmad(...) (::sfpi::vFloat{}.get())
#define __builtin_rvtt_sfpgt(...) (::sfpi::vFloat{}.get())

// Lane predication blocks: v_if (cond) { ... } v_elseif (cond) { ... } v_else { ... } v_endif;
#define v_if(cond) \
    {              \
        if (static_cast<bool>(cond)) {
#define v_elseif(cond) \
    }                  \
    else if (static_cast<bool>(cond)) {
#define v_else \
    }          \
    else {
#define v_endif \
    }           \
    }
#define v_and(cond) ((void)(cond))
