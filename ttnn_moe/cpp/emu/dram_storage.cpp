#include "emu/dram_storage.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "emu/error.hpp"

namespace ttnn_moe::emu {

namespace {

const char* const kHowToChange =
    " (TTNN_MOE_DRAM_DIR chooses the directory; TTNN_MOE_DRAM_FILES=0 keeps DRAM buffers in memory)";

DramFileSettings settings_from_environment() {
    DramFileSettings s;
    if (const char* value = std::getenv("TTNN_MOE_DRAM_FILES")) {
        if (std::strcmp(value, "0") != 0 && std::strcmp(value, "1") != 0) {
            throw EmuError(std::string("TTNN_MOE_DRAM_FILES must be 0 or 1, got '") + value + "'");
        }
        s.enabled = value[0] == '1';
    }
    const char* dir = std::getenv("TTNN_MOE_DRAM_DIR");
    if (!dir || !*dir) dir = std::getenv("TMPDIR");
    s.directory = dir && *dir ? dir : "/tmp";
    return s;
}

// Everything below is shared by the devices of a process; programs may run on several threads.
std::mutex g_mutex;
bool g_settings_read = false;
DramFileSettings g_settings;
std::vector<DramStorage*> g_file_backed;
uint64_t g_releases = 0;
std::atomic<uint64_t> g_accessed{0};  // bytes noted since the last release
std::atomic<uint64_t> g_budget{DramFileSettings{}.resident_budget_bytes};

// Callers hold g_mutex.
const DramFileSettings& settings_locked() {
    if (!g_settings_read) {
        g_settings = settings_from_environment();
        g_budget = g_settings.resident_budget_bytes;
        g_settings_read = true;
    }
    return g_settings;
}

void release_locked() {
    // MADV_DONTNEED on a shared file mapping only unmaps: dirty pages stay in the page cache and
    // are written back to the file, never lost.
    for (const DramStorage* s : g_file_backed) madvise(s->data(), s->size(), MADV_DONTNEED);
    g_accessed = 0;
    ++g_releases;
}

// An open descriptor of a new file without a name in `dir`.
int open_unnamed_file(const std::string& dir) {
    int fd = open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR)) return fd;
    // A file system without O_TMPFILE: a named file, unlinked at once.
    std::string path = dir + "/ttnn_moe_dram.XXXXXX";
    fd = mkostemp(path.data(), O_CLOEXEC);
    if (fd >= 0) unlink(path.c_str());
    return fd;
}

uint8_t* map_file(size_t bytes, const std::string& dir) {
    const int fd = open_unnamed_file(dir);
    if (fd < 0) {
        throw EmuError("DRAM buffer: cannot create a " + std::to_string(bytes) + "-byte backing file in '" + dir +
                       "': " + std::strerror(errno) + kHowToChange);
    }
    // Reserve the blocks now: a full disk found later would fault a kernel's write.
    if (const int err = posix_fallocate(fd, 0, static_cast<off_t>(bytes)); err != 0) {
        close(fd);
        throw EmuError("DRAM buffer: '" + dir + "' cannot hold a " + std::to_string(bytes) +
                       "-byte backing file: " + std::strerror(err) + kHowToChange);
    }
    void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const int map_errno = errno;
    close(fd);  // the mapping keeps the file
    if (mem == MAP_FAILED) {
        throw EmuError("DRAM buffer: cannot map its " + std::to_string(bytes) + "-byte backing file in '" + dir +
                       "': " + std::strerror(map_errno));
    }
    return static_cast<uint8_t*>(mem);
}

}  // namespace

DramFileSettings dram_file_settings() {
    std::lock_guard<std::mutex> lock(g_mutex);
    return settings_locked();
}

void set_dram_file_settings(const DramFileSettings& settings) {
    if (settings.resident_budget_bytes == 0) throw std::invalid_argument("resident_budget_bytes must be > 0, got 0");
    if (settings.directory.empty())
        throw std::invalid_argument("the directory of DRAM backing files must not be empty");
    std::lock_guard<std::mutex> lock(g_mutex);
    g_settings = settings;
    g_settings_read = true;
    g_budget = settings.resident_budget_bytes;
}

DramFileStats dram_file_stats() {
    std::lock_guard<std::mutex> lock(g_mutex);
    DramFileStats stats;
    stats.buffers = g_file_backed.size();
    for (const DramStorage* s : g_file_backed) stats.bytes += s->size();
    stats.releases = g_releases;
    return stats;
}

void release_dram_files() {
    std::lock_guard<std::mutex> lock(g_mutex);
    release_locked();
}

DramStorage::DramStorage(size_t bytes) : bytes_(bytes) {
    std::lock_guard<std::mutex> lock(g_mutex);
    const DramFileSettings& s = settings_locked();
    if (s.enabled && bytes >= s.threshold_bytes) {
        data_ = map_file(bytes, s.directory);
        file_backed_ = true;
        g_file_backed.push_back(this);
        return;
    }
    void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) throw EmuError("DRAM allocate: cannot map " + std::to_string(bytes) + " bytes");
    data_ = static_cast<uint8_t*>(mem);
}

DramStorage::~DramStorage() {
    if (file_backed_) {
        std::lock_guard<std::mutex> lock(g_mutex);
        g_file_backed.erase(std::find(g_file_backed.begin(), g_file_backed.end(), this));
    }
    munmap(data_, bytes_);
}

void DramStorage::note_file_access(size_t bytes) {
    if (g_accessed.fetch_add(bytes, std::memory_order_relaxed) + bytes >= g_budget.load(std::memory_order_relaxed)) {
        release_dram_files();
    }
}

}  // namespace ttnn_moe::emu
