#include "emu/fabric/topology.hpp"

#include <stdexcept>

namespace ttnn_moe::emu::fabric {

namespace {
bool vertical(Direction d) {
    return d == Direction::North || d == Direction::South;
}
}  // namespace

const char* topology_name(Topology t) {
    switch (t) {
        case Topology::Linear:
            return "Linear";
        case Topology::Ring:
            return "Ring";
        case Topology::Mesh:
            return "Mesh";
    }
    return "?";
}

const char* direction_name(Direction d) {
    switch (d) {
        case Direction::East:
            return "EAST";
        case Direction::West:
            return "WEST";
        case Direction::North:
            return "NORTH";
        case Direction::South:
            return "SOUTH";
    }
    return "?";
}

void MeshFabric::set_num_links(uint32_t n) {
    if (n == 0 || n > 4) throw std::invalid_argument("num_links must be 1..4, got " + std::to_string(n));
    num_links_ = n;
}

std::vector<std::pair<std::string, std::string>> MeshFabric::routing_defines() const {
    // ROUTING_MODE bits: 1D 0x1, 2D 0x2, LINE 0x8, RING 0x10, MESH 0x20, LOW_LATENCY 0x80.
    switch (topology_) {
        case Topology::Linear:
            return {{"ROUTING_MODE", "137"}};
        case Topology::Ring:
            return {{"ROUTING_MODE", "145"}};
        case Topology::Mesh:
            return {{"ROUTING_MODE", "162"}, {"FABRIC_2D", "1"}};
    }
    return {};
}

std::string MeshFabric::chip_name(uint32_t chip) const {
    return "chip " + std::to_string(chip) + " (" + std::to_string(chip / cols_) + ", " + std::to_string(chip % cols_) +
           ")";
}

uint32_t MeshFabric::line_length(Direction d) const {
    return vertical(d) ? rows_ : cols_;
}

std::optional<uint32_t> MeshFabric::neighbor(uint32_t chip, Direction d) const {
    int64_t r = chip / cols_, c = chip % cols_;
    const int64_t dr = d == Direction::North ? -1 : d == Direction::South ? 1 : 0;
    const int64_t dc = d == Direction::West ? -1 : d == Direction::East ? 1 : 0;
    r += dr;
    c += dc;
    if (topology_ == Topology::Ring) {
        // A ring closes every line of length > 2 (a 2-chip "ring" has one neighbour per side).
        r = (r + rows_) % rows_;
        c = (c + cols_) % cols_;
        if (static_cast<uint32_t>(r * cols_ + c) == chip) return std::nullopt;
    }
    if (r < 0 || c < 0 || r >= rows_ || c >= cols_) return std::nullopt;
    return static_cast<uint32_t>(r * cols_ + c);
}

std::optional<Direction> MeshFabric::first_hop(uint32_t src, uint32_t dst) const {
    const uint32_t sr = src / cols_, sc = src % cols_, dr = dst / cols_, dc = dst % cols_;
    if (src == dst) return std::nullopt;
    if (is_2d()) {
        if (sr != dr) return sr < dr ? Direction::South : Direction::North;
        return sc < dc ? Direction::East : Direction::West;
    }
    if (sr != dr && sc != dc) return std::nullopt;
    const bool along_column = sc == dc;
    const uint32_t n = along_column ? rows_ : cols_;
    const uint32_t from = along_column ? sr : sc, to = along_column ? dr : dc;
    bool positive = to > from;
    if (topology_ == Topology::Ring) {
        const uint32_t forward = (to + n - from) % n;  // hops going South/East
        positive = forward <= n - forward;             // the shorter way; ties go South/East
    }
    if (along_column) return positive ? Direction::South : Direction::North;
    return positive ? Direction::East : Direction::West;
}

std::optional<Direction> MeshFabric::connection_direction(uint32_t src, uint32_t dst, std::string& error) const {
    if (src >= num_chips() || dst >= num_chips()) {
        error = "chip id out of range for the " + std::to_string(rows_) + "x" + std::to_string(cols_) + " mesh";
        return std::nullopt;
    }
    if (src == dst) {
        error = "a fabric connection from " + chip_name(src) + " to itself (use the NOC on one device)";
        return std::nullopt;
    }
    auto d = first_hop(src, dst);
    if (!d) {
        error = chip_name(src) + " and " + chip_name(dst) + " share no row or column, which a " +
                topology_name(topology_) + " (1D) fabric needs";
    }
    return d;
}

std::vector<Hop> MeshFabric::route_hops(uint32_t src, Direction d, uint32_t hops, std::string& error) const {
    std::vector<Hop> path;
    if (hops == 0) {
        error = "a unicast route of 0 hops";
        return {};
    }
    if (topology_ == Topology::Ring && hops >= line_length(d)) {
        error = std::to_string(hops) + " hops " + direction_name(d) + " from " + chip_name(src) +
                " pass the source again on a ring of " + std::to_string(line_length(d)) + " chips";
        return {};
    }
    uint32_t at = src;
    for (uint32_t h = 0; h < hops; ++h) {
        auto next = neighbor(at, d);
        if (!next) {
            error = std::to_string(hops) + " hops " + direction_name(d) + " from " + chip_name(src) + " leave the " +
                    std::to_string(rows_) + "x" + std::to_string(cols_) + " mesh after " + std::to_string(h) + " hop" +
                    (h == 1 ? "" : "s") + " (at " + chip_name(at) + ")";
            return {};
        }
        path.push_back({at, *next});
        at = *next;
    }
    return path;
}

std::vector<Hop> MeshFabric::route_to_line_chip(uint32_t src, Direction d, uint32_t dst, std::string& error) const {
    if (dst >= num_chips()) {
        error = "destination chip " + std::to_string(dst) + " is outside the mesh";
        return {};
    }
    // Walk the line in direction d until dst (a ring comes back to src).
    uint32_t at = src;
    for (uint32_t h = 1; h <= line_length(d); ++h) {
        auto next = neighbor(at, d);
        if (!next || *next == src) break;
        at = *next;
        if (at == dst) return route_hops(src, d, h, error);
    }
    error = chip_name(dst) + " is not reachable going " + direction_name(d) + " from " + chip_name(src) +
            " (wrong direction for this connection)";
    return {};
}

std::vector<Hop> MeshFabric::route_2d(uint32_t src, Direction d, uint32_t dst, std::string& error) const {
    if (dst >= num_chips()) {
        error = "destination chip " + std::to_string(dst) + " is outside the " + std::to_string(rows_) + "x" +
                std::to_string(cols_) + " mesh";
        return {};
    }
    auto first = first_hop(src, dst);
    if (!first) {
        error = "destination " + chip_name(dst) + " is the source chip (use the NOC on one device)";
        return {};
    }
    if (*first != d) {
        error = "wrong direction: the route from " + chip_name(src) + " to " + chip_name(dst) + " starts " +
                direction_name(*first) + " (rows first, then columns) but the connection goes " + direction_name(d);
        return {};
    }
    std::vector<Hop> path;
    uint32_t at = src;
    while (at != dst) {
        const uint32_t next = *neighbor(at, *first_hop(at, dst));
        path.push_back({at, next});
        at = next;
    }
    return path;
}

}  // namespace ttnn_moe::emu::fabric
