// A shared resource in model time (a DRAM bank, a core's NOC port, an Ethernet link
// direction): the intervals it is busy. A transfer takes the earliest gap at or after
// the time it is ready that is long enough, so a transfer the emulator issues later but
// that is ready earlier in model time is not queued behind the others (the emulator runs
// kernels round-robin, not in model-time order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ttnn_moe::emu::timing {

class Timeline {
public:
    // The earliest start >= ready of a free gap of `duration` cycles.
    uint64_t earliest(uint64_t ready, uint64_t duration) const;
    // Marks [start, start + duration) busy.
    void reserve(uint64_t start, uint64_t duration);
    uint64_t busy_cycles() const { return busy_cycles_; }

private:
    // Disjoint busy intervals (start, end), sorted by start. A flat vector, not a tree: transfers
    // mostly arrive in time order, so a reservation usually extends or appends the last interval
    // without allocating. Past kMaxIntervals the oldest half is merged into one interval (its gaps
    // count as busy): bounded memory, slightly pessimistic for very old gaps.
    static constexpr size_t kMaxIntervals = 1 << 16;
    using Interval = std::pair<uint64_t, uint64_t>;
    std::vector<Interval> busy_;
    // First interval whose start is > t (upper_bound on the starts).
    std::vector<Interval>::const_iterator first_starting_after(uint64_t t) const;
    // Past kMaxIntervals, merges the oldest half.
    void compact();
    uint64_t busy_cycles_ = 0;
    // The end of the last interval (0 when none), kept beside the vector: most queries need only
    // it, and the vector's last element is a cache miss of its own (a run has hundreds of timelines).
    uint64_t end_ = 0;
};

// The earliest start >= ready at which every timeline has `duration` free cycles.
uint64_t earliest_common(uint64_t ready, uint64_t duration, Timeline* const* timelines, size_t count);

}  // namespace ttnn_moe::emu::timing
