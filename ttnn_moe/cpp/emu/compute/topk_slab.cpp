#include "emu/compute/topk_slab.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ttnn_moe::emu::topk {

namespace {

constexpr uint32_t TILE_DIM = 32;

struct Entry {
    float value;
    uint32_t index;
};

// a before b in a decreasing run: a larger (NaN largest; -0.0 == +0.0, so zeros are ties).
bool larger(float a, float b) {
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
    return a > b;
}

float& value_at(Slab& slab, uint32_t position, uint32_t column) {
    return slab.values[position / TILE_DIM][(position % TILE_DIM) * TILE_DIM + column];
}
uint32_t& index_at(Slab& slab, uint32_t position, uint32_t column) {
    return slab.indices[position / TILE_DIM][(position % TILE_DIM) * TILE_DIM + column];
}

// Sorts positions [first, first + count) of every column; stable, so ties keep their position order.
void sort_run(Slab& slab, uint32_t first, uint32_t count, bool decreasing) {
    std::array<Entry, SLAB_POSITIONS> run{};
    for (uint32_t column = 0; column < TILE_DIM; ++column) {
        for (uint32_t i = 0; i < count; ++i)
            run[i] = {value_at(slab, first + i, column), index_at(slab, first + i, column)};
        if (decreasing) {
            std::stable_sort(run.begin(), run.begin() + count,
                             [](const Entry& a, const Entry& b) { return larger(a.value, b.value); });
        } else {
            std::stable_sort(run.begin(), run.begin() + count,
                             [](const Entry& a, const Entry& b) { return larger(b.value, a.value); });
        }
        for (uint32_t i = 0; i < count; ++i) {
            value_at(slab, first + i, column) = run[i].value;
            index_at(slab, first + i, column) = run[i].index;
        }
    }
}

void require_run_length(int k, const char* stage) {
    if (k < 1 || k > static_cast<int>(SLAB_POSITIONS) || (k & (k - 1)) != 0)
        throw std::invalid_argument(std::string(stage) + ": k=" + std::to_string(k) +
                                    " must be a power of two from 1 to 64 (the 64 positions of a slab)");
}

void require_direction(int idir, const char* stage) {
    if (idir != 0 && idir != 1)
        throw std::invalid_argument(std::string(stage) + ": idir=" + std::to_string(idir) +
                                    " must be 0 (decreasing) or 1 (increasing)");
}

}  // namespace

void local_sort(Slab slab, int idir, int end_phase, int start_phase) {
    require_direction(idir, "topk_local_sort");
    if (end_phase < 0 || end_phase > 5)
        throw std::invalid_argument("topk_local_sort: i_end_phase=" + std::to_string(end_phase) +
                                    " must be 0..5 (runs of 2..64 positions)");
    if (start_phase != 0)
        throw std::invalid_argument("topk_local_sort: i_start_phase=" + std::to_string(start_phase) +
                                    " (a partial network, for K > 64) is not emulated; only i_start_phase=0");
    const uint32_t run = 2u << end_phase;
    for (uint32_t j = 0; j < SLAB_POSITIONS / run; ++j) sort_run(slab, j * run, run, (idir == 0) != (j % 2 == 1));
}

void merge(Slab slab, int idir, int m_iter, int k) {
    require_direction(idir, "topk_merge");
    require_run_length(k, "topk_merge");
    if (m_iter < 0 || m_iter > 9)
        throw std::invalid_argument("topk_merge: m_iter=" + std::to_string(m_iter) + " must be 0..9");
    const uint32_t runs = SLAB_POSITIONS / k;
    const uint32_t distance = 1u << m_iter;
    std::array<Entry, SLAB_POSITIONS> both{};
    for (uint32_t first = 0; first + distance < runs; first += 2 * distance) {
        const uint32_t a = first * k, b = (first + distance) * k;
        for (uint32_t column = 0; column < TILE_DIM; ++column) {
            for (uint32_t i = 0; i < uint32_t(k); ++i) {
                both[i] = {value_at(slab, a + i, column), index_at(slab, a + i, column)};
                both[k + i] = {value_at(slab, b + i, column), index_at(slab, b + i, column)};
            }
            const auto order = [idir](const Entry& x, const Entry& y) {
                return idir == 0 ? larger(x.value, y.value) : larger(y.value, x.value);
            };
            std::stable_sort(both.begin(), both.begin() + 2 * k, order);
            // The first run keeps the winners in idir's order, the partner the rest in the other order.
            for (uint32_t i = 0; i < uint32_t(k); ++i) {
                value_at(slab, a + i, column) = both[i].value;
                index_at(slab, a + i, column) = both[i].index;
                value_at(slab, b + i, column) = both[2 * k - 1 - i].value;
                index_at(slab, b + i, column) = both[2 * k - 1 - i].index;
            }
        }
    }
}

void rebuild(Slab slab, int idir, int m_iter, int k, int logk, bool skip_second) {
    require_direction(idir, "topk_rebuild");
    require_run_length(k, "topk_rebuild");
    if (logk < 0 || (1 << logk) != k)
        throw std::invalid_argument("topk_rebuild: logk=" + std::to_string(logk) +
                                    " is not log2(k) for k=" + std::to_string(k));
    if (m_iter < 0 || m_iter > 9)
        throw std::invalid_argument("topk_rebuild: m_iter=" + std::to_string(m_iter) + " must be 0..9");
    const uint32_t runs = SLAB_POSITIONS / k;
    const uint32_t stride = 2u << m_iter;
    uint32_t nth = 0;
    for (uint32_t r = 0; r < runs; r += stride, ++nth) {
        const uint32_t first = r * k;
        if (skip_second && first >= TILE_DIM) break;
        sort_run(slab, first, k, (idir == 0) != (nth % 2 == 1));
    }
}

}  // namespace ttnn_moe::emu::topk
