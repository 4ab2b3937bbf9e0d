#include "emu/timing/timeline.hpp"

#include <algorithm>
#include <iterator>

namespace ttnn_moe::emu::timing {

std::vector<Timeline::Interval>::const_iterator Timeline::first_starting_after(uint64_t t) const {
    // Searched from the end, in steps that double: a transfer is usually ready shortly before the
    // last booked interval, so only the last few (cache-hot) intervals are visited, where a binary
    // search over the whole history (up to kMaxIntervals) would miss the cache at every step.
    auto hi = busy_.cend();
    size_t step = 1;
    while (static_cast<size_t>(hi - busy_.cbegin()) > step && (hi - step)->first > t) {
        hi -= step;
        step *= 2;
    }
    const auto lo = static_cast<size_t>(hi - busy_.cbegin()) > step ? hi - step : busy_.cbegin();
    return std::upper_bound(lo, hi, t, [](uint64_t value, const Interval& interval) { return value < interval.first; });
}

uint64_t Timeline::earliest(uint64_t ready, uint64_t duration) const {
    // Most transfers are ready after everything booked so far: no gap to search.
    if (ready >= end_) return ready;
    uint64_t t = ready;
    auto it = first_starting_after(t);
    if (it != busy_.begin()) t = std::max(t, std::prev(it)->second);
    while (it != busy_.end() && it->first < t + std::max<uint64_t>(duration, 1)) {
        t = std::max(t, it->second);
        ++it;
    }
    return t;
}

void Timeline::reserve(uint64_t start, uint64_t duration) {
    if (duration == 0) return;
    busy_cycles_ += duration;
    uint64_t s = start, e = start + duration;
    // The usual case, a reservation at or after the last busy interval: extend it or append.
    if (busy_.empty() || s > end_) {
        busy_.emplace_back(s, e);
        end_ = e;
        compact();
        return;
    }
    if (s == end_) {
        busy_.back().second = e;
        end_ = e;
        return;
    }
    // The intervals [first, last) that touch [s, e] merge into one.
    auto first = busy_.begin() + (first_starting_after(s) - busy_.cbegin());
    // An interval starting at s itself also merges: step back over starts equal to s and over one
    // earlier interval that reaches s.
    while (first != busy_.begin() && std::prev(first)->first >= s) --first;
    if (first != busy_.begin() && std::prev(first)->second >= s) --first;
    auto last = first;
    while (last != busy_.end() && last->first <= e) ++last;
    if (first != last) {
        s = std::min(s, first->first);
        e = std::max(e, std::prev(last)->second);
        *first = {s, e};
        busy_.erase(first + 1, last);
    } else {
        busy_.insert(first, {s, e});
    }
    end_ = busy_.back().second;
    compact();
}

void Timeline::compact() {
    if (busy_.size() > kMaxIntervals) {
        const auto half = busy_.begin() + static_cast<long>(busy_.size() / 2);
        const Interval merged{busy_.front().first, std::prev(half)->second};
        busy_.erase(busy_.begin() + 1, half);
        busy_.front() = merged;
    }
}

uint64_t earliest_common(uint64_t ready, uint64_t duration, Timeline* const* timelines, size_t count) {
    uint64_t t = ready;
    for (;;) {
        uint64_t next = t;
        for (size_t i = 0; i < count; ++i) next = timelines[i]->earliest(next, duration);
        if (next == t) return t;
        t = next;
    }
}

}  // namespace ttnn_moe::emu::timing
