#include "emu/device.hpp"

#include <stdexcept>
#include <string>

#include "emu/device_params.hpp"

namespace ttnn_moe::emu {

namespace {
// NOC coordinate of logical index i when the coordinates in `skip` hold no worker.
uint32_t skip_coordinates(uint32_t i, const uint32_t (&skip)[2]) {
    uint32_t c = 0;
    for (uint32_t seen = 0;; ++c) {
        if (c == skip[0] || c == skip[1]) continue;
        if (seen++ == i) return c;
    }
}

void check_grid(uint32_t grid_x, uint32_t grid_y) {
    // Leave room in the 6-bit NOC coordinates for the skipped columns/rows.
    if (grid_x == 0 || grid_y == 0 || grid_x > 60 || grid_y > 60) {
        throw std::invalid_argument("device grid must be between 1x1 and 60x60, got " + std::to_string(grid_x) + "x" +
                                    std::to_string(grid_y));
    }
}
}  // namespace

Device::Device(uint32_t id, uint32_t grid_x, uint32_t grid_y)
    : id_(id), grid_x_(grid_x), grid_y_(grid_y), l1_buffers_(grid_x, grid_y) {
    check_grid(grid_x, grid_y);
    logical_x_of_noc_x_.assign(params::NOC_COORD_MASK + 1, -1);
    logical_y_of_noc_y_.assign(params::NOC_COORD_MASK + 1, -1);
    for (uint32_t x = 0; x < grid_x; ++x) logical_x_of_noc_x_[skip_coordinates(x, params::DRAM_NOC_X)] = x;
    for (uint32_t y = 0; y < grid_y; ++y) logical_y_of_noc_y_[skip_coordinates(y, params::NON_WORKER_NOC_Y)] = y;
}

NocCoord Device::worker_core_from_logical_core(uint32_t x, uint32_t y) const {
    if (x >= grid_x_ || y >= grid_y_) {
        throw std::invalid_argument("logical core (" + std::to_string(x) + ", " + std::to_string(y) +
                                    ") is outside the " + std::to_string(grid_x_) + "x" + std::to_string(grid_y_) +
                                    " grid");
    }
    return {skip_coordinates(x, params::DRAM_NOC_X), skip_coordinates(y, params::NON_WORKER_NOC_Y)};
}

std::optional<std::pair<uint32_t, uint32_t>> Device::logical_core_from_noc(uint32_t noc_x, uint32_t noc_y) const {
    if (noc_x > params::NOC_COORD_MASK || noc_y > params::NOC_COORD_MASK) return std::nullopt;
    const int32_t x = logical_x_of_noc_x_[noc_x];
    const int32_t y = logical_y_of_noc_y_[noc_y];
    if (x < 0 || y < 0) return std::nullopt;
    return std::make_pair(static_cast<uint32_t>(x), static_cast<uint32_t>(y));
}

// Banks 0-5 on NOC column 0, banks 6-11 on column 5, at odd rows.
NocCoord Device::dram_bank_noc(uint32_t bank) {
    return {params::DRAM_NOC_X[bank / 6], 1 + 2 * (bank % 6)};
}

int Device::dram_bank_from_noc(uint32_t noc_x, uint32_t noc_y) {
    int column = noc_x == params::DRAM_NOC_X[0] ? 0 : noc_x == params::DRAM_NOC_X[1] ? 1 : -1;
    if (column < 0 || noc_y % 2 == 0 || noc_y > 11) return -1;
    return column * 6 + static_cast<int>((noc_y - 1) / 2);
}

Mesh::Mesh(uint32_t rows, uint32_t cols, uint32_t grid_x, uint32_t grid_y) : rows_(rows), cols_(cols) {
    if (rows == 0 || cols == 0 || rows * cols > 4000) {
        throw std::invalid_argument("mesh shape must be at least 1x1 and at most 4000 devices, got " +
                                    std::to_string(rows) + "x" + std::to_string(cols));
    }
    fabric_ = std::make_shared<fabric::MeshFabric>(rows, cols);
    for (uint32_t i = 0; i < rows * cols; ++i) {
        devices_.push_back(std::make_shared<Device>(i, grid_x, grid_y));
        devices_.back()->set_fabric(fabric_);
    }
}

std::shared_ptr<Device> Mesh::device(uint32_t row, uint32_t col) const {
    if (row >= rows_ || col >= cols_) {
        throw std::invalid_argument("mesh coordinate (" + std::to_string(row) + ", " + std::to_string(col) +
                                    ") is outside the " + std::to_string(rows_) + "x" + std::to_string(cols_) +
                                    " mesh");
    }
    return devices_[row * cols_ + col];
}

}  // namespace ttnn_moe::emu
