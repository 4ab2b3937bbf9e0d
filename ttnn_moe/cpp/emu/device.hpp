// An emulated device (grid of worker cores, DRAM, counters) and a mesh of them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "emu/counters.hpp"
#include "emu/dram.hpp"
#include "emu/fabric/topology.hpp"
#include "emu/l1_buffers.hpp"

namespace ttnn_moe::emu {

struct NocCoord {
    uint32_t x = 0;
    uint32_t y = 0;
};

class Device {
public:
    Device(uint32_t id, uint32_t grid_x, uint32_t grid_y);

    uint32_t id() const { return id_; }
    uint32_t grid_x() const { return grid_x_; }
    uint32_t grid_y() const { return grid_y_; }
    Dram& dram() { return dram_; }
    L1Buffers& l1_buffers() { return l1_buffers_; }
    // Frees a DRAM buffer and forgets its traffic record: a later buffer at the same address is
    // another tensor, and records of freed buffers would otherwise pile up over a long run.
    void deallocate(uint32_t address) {
        dram_.deallocate(address);
        counters_.dram_buffers.erase(address);
    }

    // Worker NOC coordinates (physical-like: the DRAM columns and the
    // ethernet rows are skipped) <-> logical core coordinates.
    NocCoord worker_core_from_logical_core(uint32_t x, uint32_t y) const;
    // Logical core of a worker NOC coordinate, or nullopt when none lives there.
    std::optional<std::pair<uint32_t, uint32_t>> logical_core_from_noc(uint32_t noc_x, uint32_t noc_y) const;
    static NocCoord dram_bank_noc(uint32_t bank);
    // The DRAM bank at a NOC coordinate, or -1.
    static int dram_bank_from_noc(uint32_t noc_x, uint32_t noc_y);

    Counters& counters() { return counters_; }
    void reset_counters() { counters_ = Counters{}; }
    // The fabric of the mesh this device belongs to (null for a lone device); its id is its chip id.
    const std::shared_ptr<fabric::MeshFabric>& fabric() const { return fabric_; }
    void set_fabric(std::shared_ptr<fabric::MeshFabric> f) { fabric_ = std::move(f); }

private:
    uint32_t id_;
    uint32_t grid_x_;
    uint32_t grid_y_;
    Dram dram_;
    L1Buffers l1_buffers_;
    Counters counters_;
    std::shared_ptr<fabric::MeshFabric> fabric_;
    std::vector<int32_t> logical_x_of_noc_x_;  // -1 where no worker column
    std::vector<int32_t> logical_y_of_noc_y_;
};

// R x C devices, ids row-major from 0.
class Mesh {
public:
    Mesh(uint32_t rows, uint32_t cols, uint32_t grid_x, uint32_t grid_y);
    uint32_t rows() const { return rows_; }
    uint32_t cols() const { return cols_; }
    uint32_t num_devices() const { return rows_ * cols_; }
    std::shared_ptr<Device> device(uint32_t row, uint32_t col) const;
    const std::vector<std::shared_ptr<Device>>& devices() const { return devices_; }
    fabric::MeshFabric& fabric() { return *fabric_; }

private:
    uint32_t rows_;
    uint32_t cols_;
    std::vector<std::shared_ptr<Device>> devices_;
    std::shared_ptr<fabric::MeshFabric> fabric_;
};

}  // namespace ttnn_moe::emu
