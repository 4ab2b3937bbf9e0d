#include "emu/build_dependencies.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "emu/build_hash.hpp"

namespace fs = std::filesystem;

namespace ttnn_moe::emu {

namespace {

bool is_under(const fs::path& path, const fs::path& dir) {
    const fs::path rel = path.lexically_relative(dir);
    return !rel.empty() && *rel.begin() != "..";
}

}  // namespace

std::vector<std::string> parse_dependency_file(const std::string& text, const fs::path& exclude_dir) {
    // Words are separated by blanks; "\ " is a blank inside a name and a backslash before a newline
    // continues the line. The first word ending in ':' is the target.
    std::vector<std::string> words;
    std::string word;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\\' && i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == ' ')) {
            if (text[i + 1] == ' ') word += ' ';
            ++i;
            if (text[i] == ' ') continue;
        } else if (c != ' ' && c != '\n' && c != '\t' && c != '\r') {
            word += c;
            continue;
        }
        if (!word.empty()) words.push_back(std::move(word)), word.clear();
    }
    if (!word.empty()) words.push_back(std::move(word));

    std::vector<std::string> deps;
    bool after_target = false;
    const fs::path excluded = fs::absolute(exclude_dir).lexically_normal();
    for (const auto& w : words) {
        if (!after_target) {
            after_target = !w.empty() && w.back() == ':';
            continue;
        }
        const fs::path p = fs::absolute(w).lexically_normal();
        if (!is_under(p, excluded)) deps.push_back(p.string());
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    return deps;
}

std::string FileDigests::digest(const std::string& path) {
    struct stat st{};
    if (::stat(path.c_str(), &st) != 0) return "<absent>";
    const int64_t mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    const int64_t now_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    const bool settled = now_ns - mtime_ns > 2'000'000'000;
    {
        std::lock_guard lock(mutex_);
        auto it = by_path_.find(path);
        if (settled && it != by_path_.end() && it->second.mtime_ns == mtime_ns &&
            it->second.size == static_cast<uint64_t>(st.st_size)) {
            return it->second.digest;
        }
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) return "<unreadable>";
    std::ostringstream contents;
    contents << in.rdbuf();
    BuildHash h;
    h.str(contents.str());
    const std::string digest = h.hex();
    if (settled) {
        std::lock_guard lock(mutex_);
        by_path_[path] = {mtime_ns, static_cast<uint64_t>(st.st_size), digest};
    }
    return digest;
}

std::string dependency_digest(const std::vector<std::string>& dependencies, const std::string& shadowing_dir,
                              const std::vector<std::string>& later_dirs, FileDigests& files) {
    BuildHash h;
    const fs::path first = fs::path(shadowing_dir).lexically_normal();
    for (const auto& dep : dependencies) {
        h.str(dep);
        h.str(files.digest(dep));
        const fs::path p(dep);
        if (is_under(p, first)) continue;
        for (const auto& dir : later_dirs) {
            const fs::path d = fs::path(dir).lexically_normal();
            if (!is_under(p, d)) continue;
            std::error_code ec;
            h.u64(fs::exists(first / p.lexically_relative(d), ec) ? 1 : 0);
        }
    }
    return h.hex();
}

}  // namespace ttnn_moe::emu
