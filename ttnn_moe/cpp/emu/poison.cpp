#include "emu/poison.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

#include "emu/error.hpp"

namespace ttnn_moe::emu::poison {

namespace detail {
bool g_enabled = [] {
    const char* value = std::getenv("TTNN_MOE_POISON");
    return value && std::strcmp(value, "1") == 0;
}();
}  // namespace detail

void set_enabled(bool on) {
    detail::g_enabled = on;
}

void fill(uint8_t* data, size_t bytes) {
    const uint32_t pattern = kPattern;
    size_t i = 0;
    for (; i + 4 <= bytes; i += 4) std::memcpy(data + i, &pattern, 4);
    std::memcpy(data + i, &pattern, bytes - i);
}

uint8_t* map_shadow(size_t bytes) {
    void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) throw EmuError("poison mode: cannot map a shadow of " + std::to_string(bytes) + " bytes");
    return static_cast<uint8_t*>(mem);
}

void unmap_shadow(uint8_t* shadow, size_t bytes) {
    if (shadow) munmap(shadow, bytes);
}

int64_t first_unwritten(const uint8_t* data, const uint8_t* shadow, size_t bytes) {
    if (!shadow) return -1;
    const uint8_t* clear = static_cast<const uint8_t*>(std::memchr(shadow, 0, bytes));
    while (clear) {
        const size_t i = static_cast<size_t>(clear - shadow);
        // A byte still holding its pattern word was not stored to by the kernel either.
        const uintptr_t word = reinterpret_cast<uintptr_t>(data + i) & ~uintptr_t{3};
        if (std::memcmp(reinterpret_cast<const void*>(word), &kPattern, 4) == 0) return static_cast<int64_t>(i);
        const size_t next = i + 1;
        if (next >= bytes) break;
        clear = static_cast<const uint8_t*>(std::memchr(shadow + next, 0, bytes - next));
    }
    return -1;
}

}  // namespace ttnn_moe::emu::poison
