// The standard library headers of kernel builds, precompiled once per compiler and flags.
//
// Parsing the standard headers the emulator's kernel API includes (<tuple>, <array>, and for
// compute kernels <string> and <functional>) is most of a kernel build's compile time. The
// JIT's generated wrapper includes them first, through one header that GCC finds precompiled
// beside it (`<name>.gch`, built with the kernel builds' own flags), so a build loads the
// parsed headers instead of parsing them again. The precompiled header is built without any
// macro defined: GCC uses it only when no macro defined for a build (compile-time args,
// defines, kernel kind) appears in those headers, and otherwise reads the header itself, with
// the same result. Only system headers are in it, which the kernel builds' dependency lists
// (-MMD) leave out anyway: the compiler version in the build key covers them.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ttnn_moe::emu {

// The name kernel wrappers include it by.
inline constexpr const char* kKernelStdHeader = "ttnn_moe_emu_kernel_std.h";

// The header's text for data-movement kernels, or for compute kernels (whose SFPU headers
// include <string> and <functional> too).
const std::string& kernel_std_header_text(bool compute);

// The directory below `cache_dir` holding the header `text` and its precompiled form for
// `compiler` (`compiler_version` names it) with `flags`; built there first if absent. Two
// processes may build it at once: each in a scratch directory, and the first rename wins.
std::filesystem::path precompiled_kernel_std_header(const std::filesystem::path& cache_dir, const std::string& text,
                                                    const std::string& compiler, const std::string& compiler_version,
                                                    const std::vector<std::string>& flags);

}  // namespace ttnn_moe::emu
