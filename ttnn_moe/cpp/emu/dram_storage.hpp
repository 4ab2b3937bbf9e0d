// The host memory behind one DRAM buffer.
//
// Small buffers are anonymous memory (MAP_NORESERVE, committed where written). Buffers of at least
// a threshold size (device weights: a full-size model's routed experts are hundreds of MB per
// device) are a MAP_SHARED mapping of an unlinked file, so the kernel can write their pages back to
// the file and drop them instead of keeping every emulated device's DRAM resident. The file never
// has a name (O_TMPFILE), so nothing is left behind when the buffer goes away, on an error path or
// when the process dies.
//
// A file's disk blocks are reserved as its bytes are first written, 64 KiB at a time: a full-size
// layer's worst-case buffers (a QUAD prefill's (capacity, H) rows: 60 GB over 128 devices) hold a
// few percent of data, and a file mapped whole but reserved on write stays sparse elsewhere (its
// unwritten bytes read as zeros). A disk that fills up fails that write with an error naming the
// directory, never a SIGBUS in a kernel's store: every write to emulated DRAM goes through the
// emulator (host writes, NOC and fabric writes), which reserves before it copies.
//
// Resident pages of the file-backed storage are bounded: every access notes its byte count, and
// when the noted bytes since the last release pass a budget, all file-backed storage drops its
// page-table entries (MADV_DONTNEED; the data stays in the file and its page cache, and the next
// access maps it again). Contents, and so results and modeled time, are the same either way.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace ttnn_moe::emu {

struct DramFileSettings {
    bool enabled = true;                          // TTNN_MOE_DRAM_FILES=0 at start-up turns it off
    uint64_t threshold_bytes = 4ull << 20;        // buffers of at least this size are file-backed
    uint64_t resident_budget_bytes = 1ull << 30;  // bytes accessed between releases of resident pages
    uint64_t disk_budget_bytes = 0;               // TTNN_MOE_DRAM_DISK_BUDGET: most bytes reserved at once (0: any)
    std::string directory;                        // TTNN_MOE_DRAM_DIR, else $TMPDIR, else /tmp
};
DramFileSettings dram_file_settings();
// Applies to buffers allocated from now on (and to the budget at once).
void set_dram_file_settings(const DramFileSettings& settings);

struct DramFileStats {
    uint64_t buffers = 0;         // live file-backed buffers
    uint64_t bytes = 0;           // their mapped bytes
    uint64_t releases = 0;        // times their resident pages were dropped
    uint64_t reserved_bytes = 0;  // disk reserved for their written chunks
};
DramFileStats dram_file_stats();
// Drops the resident pages of every file-backed buffer now.
void release_dram_files();

class DramStorage {
public:
    // `bytes` of zeroed memory, file-backed when the settings say so.
    explicit DramStorage(size_t bytes);
    ~DramStorage();
    DramStorage(const DramStorage&) = delete;
    DramStorage& operator=(const DramStorage&) = delete;

    uint8_t* data() const { return data_; }
    size_t size() const { return bytes_; }
    bool file_backed() const { return file_backed_; }

    // Counts `bytes` read or written; may release the resident pages of all file-backed storage.
    void note_access(size_t bytes) {
        if (file_backed_) note_file_access(bytes);
    }
    // Before `bytes` at `offset` are written: reserves their file's blocks (file-backed storage).
    void reserve_for_write(size_t offset, size_t bytes) {
        if (file_backed_) reserve_chunks(offset, bytes);
    }

private:
    static void note_file_access(size_t bytes);
    void reserve_chunks(size_t offset, size_t bytes);

    uint8_t* data_ = nullptr;
    size_t bytes_ = 0;
    bool file_backed_ = false;
    int fd_ = -1;  // the backing file, kept open to reserve its blocks
    std::string directory_;
    std::unique_ptr<std::atomic<uint64_t>[]> reserved_;  // a bit per chunk whose blocks are reserved
    std::atomic<uint64_t> reserved_bytes_{0};
};

}  // namespace ttnn_moe::emu
