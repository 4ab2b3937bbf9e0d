// TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>: reads a tensor's distribution
// from the compile-time args in tt-metal 0.81.1's encoding. Word 0 is the
// ArgsConfig bit set (Sharded 1, IsDram 2, RuntimeRank 4, RuntimeNumBanks 8,
// RuntimeTensorShape 16, RuntimeShardShape 32, RuntimeBankCoords 64,
// RuntimePageSize 128); then the aligned page size (unless RuntimePageSize
// puts it in the common runtime args, which sharded tensors never do); a
// sharded tensor then has its rank, bank count (top bit: shard-contiguous
// banks), tensor and shard shapes in pages and the banks' NOC coordinates,
// two to a word ((x << 8 | y) of bank 2k in the low half), each possibly
// runtime. The emulator addresses interleaved tensors and L1-sharded ones whose
// distribution is all compile-time; the others are parsed so offsets of
// following args stay right, and fail when accessed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <utility>

#include "api/compile_time_args.h"

template <typename T>
T get_common_arg_val(int arg_idx);

namespace tensor_accessor {
inline constexpr std::size_t UNKNOWN = static_cast<std::size_t>(-1);
inline constexpr uint32_t ShardContiguousBit = 1u << 31;
constexpr uint32_t unpack_num_banks(uint32_t packed) {
    return packed & ~ShardContiguousBit;
}
constexpr bool unpack_is_shard_contiguous(uint32_t packed) {
    return (packed & ShardContiguousBit) != 0;
}
enum class ArgConfig : uint8_t {
    None = 0,
    Sharded = 1 << 0,
    IsDram = 1 << 1,
    RuntimeRank = 1 << 2,
    RuntimeNumBanks = 1 << 3,
    RuntimeTensorShape = 1 << 4,
    RuntimeShardShape = 1 << 5,
    RuntimeBankCoords = 1 << 6,
    RuntimePageSize = 1 << 7,
};
}  // namespace tensor_accessor

template <std::size_t CTA_OFFSET, std::size_t CRTA_OFFSET = tensor_accessor::UNKNOWN>
struct TensorAccessorArgs {
    static constexpr uint32_t config = get_compile_time_arg_val(CTA_OFFSET);
    static constexpr bool has(tensor_accessor::ArgConfig flag) { return (config & static_cast<uint32_t>(flag)) != 0; }

    static constexpr bool is_sharded = has(tensor_accessor::ArgConfig::Sharded);
    static constexpr bool is_dram = has(tensor_accessor::ArgConfig::IsDram);
    static constexpr bool rank_is_crta = has(tensor_accessor::ArgConfig::RuntimeRank);
    static constexpr bool num_banks_is_crta = has(tensor_accessor::ArgConfig::RuntimeNumBanks);
    static constexpr bool tensor_shape_is_crta = has(tensor_accessor::ArgConfig::RuntimeTensorShape);
    static constexpr bool shard_shape_is_crta = has(tensor_accessor::ArgConfig::RuntimeShardShape);
    static constexpr bool bank_coords_is_crta = has(tensor_accessor::ArgConfig::RuntimeBankCoords);
    static constexpr bool page_size_is_crta = has(tensor_accessor::ArgConfig::RuntimePageSize);

    static_assert(!is_sharded || !page_size_is_crta, "a sharded tensor's page size is never a runtime arg");
    static constexpr uint32_t AlignedPageSizeCTAOffset = CTA_OFFSET + 1;
    static constexpr uint32_t AlignedPageSize = [] {
        if constexpr (page_size_is_crta) {
            return 0u;
        } else {
            return get_compile_time_arg_val(AlignedPageSizeCTAOffset);
        }
    }();

    // Sharded layout of the compile-time words after the config and page size words.
    static constexpr uint32_t RankCTAOffset = CTA_OFFSET + 2;
    static constexpr uint32_t NumBanksCTAOffset = RankCTAOffset + (rank_is_crta ? 0 : 1);
    static constexpr uint32_t RankCT = [] {
        if constexpr (!is_sharded || rank_is_crta) {
            return 0u;
        } else {
            return get_compile_time_arg_val(RankCTAOffset);
        }
    }();
    static constexpr uint32_t NumBanksRawCT = [] {
        if constexpr (!is_sharded || num_banks_is_crta) {
            return 0u;
        } else {
            return get_compile_time_arg_val(NumBanksCTAOffset);
        }
    }();
    static constexpr uint32_t NumBanksCT = tensor_accessor::unpack_num_banks(NumBanksRawCT);
    static constexpr bool is_shard_contiguous = tensor_accessor::unpack_is_shard_contiguous(NumBanksRawCT);
    // Every part of the distribution in the compile-time args (what the emulator addresses).
    static constexpr bool distribution_is_compile_time =
        !rank_is_crta && !num_banks_is_crta && !tensor_shape_is_crta && !shard_shape_is_crta && !bank_coords_is_crta;
    static constexpr uint32_t TensorShapeCTAOffset = NumBanksCTAOffset + (num_banks_is_crta ? 0 : 1);
    static constexpr uint32_t ShardShapeCTAOffset = TensorShapeCTAOffset + (tensor_shape_is_crta ? 0 : RankCT);
    static constexpr uint32_t BankCoordsCTAOffset = ShardShapeCTAOffset + (shard_shape_is_crta ? 0 : RankCT);
    static constexpr uint32_t NumArgsCT =
        is_sharded
            ? BankCoordsCTAOffset + (bank_coords_is_crta ? 0 : (NumBanksCT + 1) / 2) - static_cast<uint32_t>(CTA_OFFSET)
            : (page_size_is_crta ? 1u : 2u);

    constexpr TensorAccessorArgs() : crta_offset_rt_(0) {}
    constexpr explicit TensorAccessorArgs(uint32_t crta_offset) : crta_offset_rt_(crta_offset) {}

    constexpr uint32_t crta_offset() const {
        if constexpr (CRTA_OFFSET != tensor_accessor::UNKNOWN) {
            return static_cast<uint32_t>(CRTA_OFFSET);
        } else {
            return crta_offset_rt_;
        }
    }
    constexpr uint32_t get_aligned_page_size() const {
        if constexpr (!page_size_is_crta) {
            return AlignedPageSize;
        } else {
            return get_common_arg_val<uint32_t>(crta_offset());
        }
    }
    static constexpr uint32_t num_compile_time_args() { return NumArgsCT; }
    static constexpr uint32_t next_compile_time_args_offset() {
        return static_cast<uint32_t>(CTA_OFFSET) + num_compile_time_args();
    }
    constexpr uint32_t num_common_runtime_args() const {
        if constexpr (!is_sharded) {
            return page_size_is_crta ? 1 : 0;
        } else {
            // Rank and bank count come first when runtime; shapes and coordinates need their values.
            uint32_t n = 0;
            const uint32_t rank = rank_is_crta ? get_common_arg_val<uint32_t>(crta_offset()) : RankCT;
            n += rank_is_crta;
            const uint32_t banks =
                num_banks_is_crta ? tensor_accessor::unpack_num_banks(get_common_arg_val<uint32_t>(crta_offset() + n))
                                  : NumBanksCT;
            n += num_banks_is_crta;
            n += tensor_shape_is_crta ? rank : 0;
            n += shard_shape_is_crta ? rank : 0;
            n += bank_coords_is_crta ? (banks + 1) / 2 : 0;
            return n;
        }
    }
    constexpr uint32_t next_common_runtime_args_offset() const { return crta_offset() + num_common_runtime_args(); }

private:
    uint32_t crta_offset_rt_;
};

namespace tensor_accessor::detail {
template <uint32_t TENSOR_IDX, uint32_t CTA_OFFSET>
constexpr uint32_t cta_offset_of() {
    if constexpr (TENSOR_IDX == 0) {
        return CTA_OFFSET;
    } else {
        return TensorAccessorArgs<cta_offset_of<TENSOR_IDX - 1, CTA_OFFSET>()>::next_compile_time_args_offset();
    }
}
template <uint32_t CTA_OFFSET, uint32_t... I>
constexpr auto make_args_tuple(std::integer_sequence<uint32_t, I...>) {
    return std::make_tuple(TensorAccessorArgs<cta_offset_of<I, CTA_OFFSET>()>()...);
}
}  // namespace tensor_accessor::detail

template <uint32_t NUM_TENSORS, uint32_t CTA_OFFSET>
constexpr auto make_tensor_accessor_args_tuple() {
    return tensor_accessor::detail::make_args_tuple<CTA_OFFSET>(std::make_integer_sequence<uint32_t, NUM_TENSORS>());
}
