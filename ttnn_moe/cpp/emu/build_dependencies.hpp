// The headers a kernel build read, and a digest of their contents now.
//
// A kernel build is cached under a key of everything it was asked to compile (source, args,
// defines, ...) and, below that, one entry per set of header contents it was built against: the
// compiler's dependency list (-MMD) names the headers, and the entry is reused while every one of
// them still has the contents it had. Editing one emulator header thus rebuilds only the kernels
// that include it, not every kernel.
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace ttnn_moe::emu {

// The prerequisites a make-style dependency file lists (`target: a b \` ...), absolute and
// normalized, without those under `exclude_dir` (the build's own generated files).
std::vector<std::string> parse_dependency_file(const std::string& text, const std::filesystem::path& exclude_dir);

// Content digests of files, remembered while a file's size and modification time are unchanged
// (a file modified in the last two seconds is read again every time: its time stamp may not yet
// tell two writes apart).
class FileDigests {
public:
    // The digest of `path`'s contents, or a fixed value for a file that does not exist.
    std::string digest(const std::string& path);

private:
    struct Entry {
        int64_t mtime_ns = 0;
        uint64_t size = 0;
        std::string digest;
    };
    std::mutex mutex_;
    std::unordered_map<std::string, Entry> by_path_;
};

// Digest of a build's header dependencies as they are now. `shadowing_dir` is the first include
// directory searched: a dependency found in a later one (`later_dirs`) would be replaced by a file
// created under the same relative name there, so whether such a file exists is part of the digest.
std::string dependency_digest(const std::vector<std::string>& dependencies, const std::string& shadowing_dir,
                              const std::vector<std::string>& later_dirs, FileDigests& files);

}  // namespace ttnn_moe::emu
