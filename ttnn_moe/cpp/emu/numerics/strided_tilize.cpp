#include "emu/numerics/strided_tilize.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "emu/numerics/numerics.hpp"

namespace ttnn_moe::emu::numerics {

namespace {

template <typename Element>
inline float value_of(Element element) {
    if constexpr (sizeof(Element) == 2) {
        return bf16_bits_to_float(element);
    } else {
        return element;
    }
}

// The 32x32 tile whose first element is `corner`, as row-major floats; reads run along the
// source's contiguous dim (a transposed source is read column by column).
template <typename Element>
void gather_tile(const Element* corner, ptrdiff_t row_stride, ptrdiff_t col_stride, float* tile) {
    if (row_stride == 1 && col_stride != 1) {
        for (uint32_t c = 0; c < TILE_DIM; ++c) {
            const Element* column = corner + c * col_stride;
            for (uint32_t r = 0; r < TILE_DIM; ++r) tile[r * TILE_DIM + c] = value_of(column[r]);
        }
        return;
    }
    for (uint32_t r = 0; r < TILE_DIM; ++r) {
        const Element* row = corner + r * row_stride;
        for (uint32_t c = 0; c < TILE_DIM; ++c) tile[r * TILE_DIM + c] = value_of(row[c * col_stride]);
    }
}

template <typename Element>
void tilize_range(DataFormat format, const StridedMatrices& m, uint8_t* dst, size_t first, size_t last) {
    const size_t tile_rows = m.rows / TILE_DIM, tile_cols = m.cols / TILE_DIM;
    const size_t page = tile_bytes(format);
    const auto* base = static_cast<const Element*>(m.data);
    alignas(64) float tile[TILE_ELEMENTS];
    for (size_t t = first; t < last; ++t) {
        const size_t b = t / (tile_rows * tile_cols);
        const size_t tr = t / tile_cols % tile_rows;
        const size_t tc = t % tile_cols;
        const Element* corner = base + ptrdiff_t(b) * m.batch_stride + ptrdiff_t(tr * TILE_DIM) * m.row_stride +
                                ptrdiff_t(tc * TILE_DIM) * m.col_stride;
        gather_tile(corner, m.row_stride, m.col_stride, tile);
        pack_tile(format, tile, dst + t * page);
    }
}

}  // namespace

void tilize_strided(DataFormat format, const StridedMatrices& source, void* dst, unsigned threads) {
    if (!is_supported_format(format) || is_integer_format(format))
        throw std::invalid_argument(std::string("tilize_strided: ") + format_name(format) +
                                    " is not a float format (Float32, Float16_b, Float16, Bfp8_b, Bfp4_b)");
    if (source.rows % TILE_DIM != 0 || source.cols % TILE_DIM != 0)
        throw std::invalid_argument("tilize_strided: rows and cols must be multiples of 32, got (" +
                                    std::to_string(source.rows) + ", " + std::to_string(source.cols) + ")");
    const size_t tiles = source.batch * (source.rows / TILE_DIM) * (source.cols / TILE_DIM);
    auto run = [&](size_t first, size_t last) {
        auto* out = static_cast<uint8_t*>(dst);
        if (source.element == StridedMatrices::Element::Bfloat16Bits)
            tilize_range<uint16_t>(format, source, out, first, last);
        else
            tilize_range<float>(format, source, out, first, last);
    };
    threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(tiles / 64 + 1)));
    const size_t chunk = (tiles + threads - 1) / threads;
    std::vector<std::thread> workers;
    for (unsigned t = 1; t < threads; ++t)
        workers.emplace_back(run, std::min(tiles, t * chunk), std::min(tiles, (t + 1) * chunk));
    run(0, std::min(tiles, chunk));
    for (auto& worker : workers) worker.join();
}

}  // namespace ttnn_moe::emu::numerics
