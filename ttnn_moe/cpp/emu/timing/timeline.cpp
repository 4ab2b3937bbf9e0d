#include "emu/timing/timeline.hpp"

#include <algorithm>
#include <iterator>

namespace ttnn_moe::emu::timing {

uint64_t Timeline::earliest(uint64_t ready, uint64_t duration) const {
    uint64_t t = ready;
    auto it = busy_.upper_bound(t);
    if (it != busy_.begin()) {
        const auto before = std::prev(it);
        t = std::max(t, before->second);
    }
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
    auto it = busy_.lower_bound(s);
    if (it != busy_.begin()) {
        const auto before = std::prev(it);
        if (before->second >= s) {
            s = before->first;
            e = std::max(e, before->second);
            it = busy_.erase(before);
        }
    }
    while (it != busy_.end() && it->first <= e) {
        e = std::max(e, it->second);
        it = busy_.erase(it);
    }
    busy_.emplace(s, e);
    if (busy_.size() > kMaxIntervals) {
        auto last = std::next(busy_.begin(), static_cast<long>(busy_.size() / 2));
        const uint64_t merged_start = busy_.begin()->first;
        const uint64_t merged_end = std::prev(last)->second;
        busy_.erase(busy_.begin(), last);
        busy_.emplace(merged_start, merged_end);
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
