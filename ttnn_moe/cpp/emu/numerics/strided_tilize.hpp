// Host tilize straight from a strided source: a (batch, rows, cols) view of float32 values or of
// bfloat16 bit patterns, any element strides (a transposed torch tensor as it is), to tile pages
// in a float format, on several threads. This is how large weights become device pages without
// an intermediate contiguous float copy.
#pragma once

#include <cstddef>
#include <cstdint>

#include "program/program_descriptor.hpp"

namespace ttnn_moe::emu::numerics {

struct StridedMatrices {
    enum class Element : uint8_t { Float32, Bfloat16Bits };
    const void* data = nullptr;
    Element element = Element::Float32;
    size_t batch = 1, rows = 0, cols = 0;  // rows and cols multiples of 32
    // In elements, not bytes; negative strides are allowed.
    ptrdiff_t batch_stride = 0, row_stride = 0, col_stride = 1;
};

// Tile pages of every matrix (row-major tile order, batch after batch) into dst, which holds
// batch * rows/32 * cols/32 tiles of `format` (a float format: Float32, Float16_b, Float16,
// Bfp8_b, Bfp4_b). Rounds exactly as pack_tile does; the bytes do not depend on `threads`.
void tilize_strided(program::DataFormat format, const StridedMatrices& source, void* dst, unsigned threads);

}  // namespace ttnn_moe::emu::numerics
