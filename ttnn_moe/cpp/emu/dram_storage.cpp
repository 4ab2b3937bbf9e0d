#include "emu/dram_storage.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
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
    if (const char* value = std::getenv("TTNN_MOE_DRAM_DISK_BUDGET")) {
        char* end = nullptr;
        s.disk_budget_bytes = std::strtoull(value, &end, 10);
        if (!*value || *end) {
            throw EmuError(std::string("TTNN_MOE_DRAM_DISK_BUDGET must be a byte count, got '") + value + "'");
        }
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
std::atomic<uint64_t> g_disk_budget{0};
std::atomic<uint64_t> g_reserved{0};  // bytes reserved by the live backing files

// Callers hold g_mutex.
const DramFileSettings& settings_locked() {
    if (!g_settings_read) {
        g_settings = settings_from_environment();
        g_budget = g_settings.resident_budget_bytes;
        g_disk_budget = g_settings.disk_budget_bytes;
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

// Bytes of a backing file reserved at once, on the first write into them. Small: a buffer's pages lie bank by bank
// (bank-major), so the few rows written into a worst-case (capacity, H) buffer touch a chunk in each of the 12
// banks' spans; a full layer's 10 GB of weights, written once, take 160k reservations of this size.
constexpr size_t kReserveChunk = size_t{64} << 10;
constexpr size_t kChunksPerWord = 64;

// Each backing file keeps its descriptor (to reserve its blocks), and a QUAD holds a thousand of
// them: the soft limit of open files goes up to the hard one, once.
void allow_open_files_up_to_hard_limit() {
    static const bool raised = [] {
        rlimit limit{};
        if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return false;
        limit.rlim_cur = limit.rlim_max;
        return setrlimit(RLIMIT_NOFILE, &limit) == 0;
    }();
    (void)raised;
}

// A sparse file of `bytes` mapped whole; its descriptor in `fd`.
uint8_t* map_file(size_t bytes, const std::string& dir, int& fd) {
    allow_open_files_up_to_hard_limit();
    fd = open_unnamed_file(dir);
    if (fd < 0) {
        throw EmuError("DRAM buffer: cannot create a " + std::to_string(bytes) + "-byte backing file in '" + dir +
                       "': " + std::strerror(errno) + kHowToChange);
    }
    if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
        const int err = errno;
        close(fd);
        throw EmuError("DRAM buffer: cannot size a " + std::to_string(bytes) + "-byte backing file in '" + dir +
                       "': " + std::strerror(err) + kHowToChange);
    }
    void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mem == MAP_FAILED) {
        const int err = errno;
        close(fd);
        throw EmuError("DRAM buffer: cannot map its " + std::to_string(bytes) + "-byte backing file in '" + dir +
                       "': " + std::strerror(err));
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
    g_disk_budget = settings.disk_budget_bytes;
}

DramFileStats dram_file_stats() {
    std::lock_guard<std::mutex> lock(g_mutex);
    DramFileStats stats;
    stats.buffers = g_file_backed.size();
    for (const DramStorage* s : g_file_backed) stats.bytes += s->size();
    stats.releases = g_releases;
    stats.reserved_bytes = g_reserved.load();
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
        data_ = map_file(bytes, s.directory, fd_);
        directory_ = s.directory;
        const size_t words = ((bytes + kReserveChunk - 1) / kReserveChunk + kChunksPerWord - 1) / kChunksPerWord;
        reserved_.reset(new std::atomic<uint64_t>[words]());
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
    if (fd_ >= 0) close(fd_);
    g_reserved -= reserved_bytes_.load();
}

void DramStorage::reserve_chunks(size_t offset, size_t bytes) {
    if (bytes == 0) return;
    const size_t last = (offset + bytes - 1) / kReserveChunk;
    for (size_t chunk = offset / kReserveChunk; chunk <= last; ++chunk) {
        std::atomic<uint64_t>& word = reserved_[chunk / kChunksPerWord];
        const uint64_t bit = uint64_t{1} << (chunk % kChunksPerWord);
        if (word.load(std::memory_order_acquire) & bit) continue;
        // Two threads may both reserve a chunk: reserving twice is harmless.
        const size_t start = chunk * kReserveChunk;
        const size_t length = std::min(kReserveChunk, bytes_ - start);
        const uint64_t budget = g_disk_budget.load(std::memory_order_relaxed);
        if (budget != 0 && g_reserved.load(std::memory_order_relaxed) + length > budget) {
            throw EmuError("DRAM buffer: the bytes written at offset " + std::to_string(start) + " of a " +
                           std::to_string(bytes_) + "-byte backing file in '" + directory_ +
                           "' would take the backing files past their disk budget of " + std::to_string(budget) +
                           " bytes (TTNN_MOE_DRAM_DISK_BUDGET; " + std::to_string(g_reserved.load()) + " reserved)" +
                           kHowToChange);
        }
        if (const int err = posix_fallocate(fd_, static_cast<off_t>(start), static_cast<off_t>(length)); err != 0) {
            throw EmuError("DRAM buffer: '" + directory_ + "' has no room for the bytes written at offset " +
                           std::to_string(start) + " of a " + std::to_string(bytes_) +
                           "-byte backing file: " + std::strerror(err) + kHowToChange);
        }
        if (!(word.fetch_or(bit, std::memory_order_acq_rel) & bit)) {
            reserved_bytes_ += length;
            g_reserved += length;
        }
    }
}

void DramStorage::note_file_access(size_t bytes) {
    if (g_accessed.fetch_add(bytes, std::memory_order_relaxed) + bytes >= g_budget.load(std::memory_order_relaxed)) {
        release_dram_files();
    }
}

}  // namespace ttnn_moe::emu
