// Host stand-in for <lltt.h>, the replay-buffer helper header that ships with
// Tenstorrent's RISC-V toolchain (SFPI), not with the ttnn wheel. The conformance
// check only parses kernels, so recording and replaying instruction sequences are
// declared with their call shapes and do nothing.
#pragma once

#include <cstdint>

namespace lltt {

// Whether the recorded instructions also execute while being recorded.
enum ExecBool : bool { NoExec = false, Exec = true };

template <ExecBool exec = NoExec>
inline void record(std::uint32_t start, std::uint32_t length) {}

inline void replay(std::uint32_t start, std::uint32_t length) {}

// Encoding of a REPLAY instruction, used as the end op of MOP templates.
constexpr std::uint32_t replay_insn(std::uint32_t start, std::uint32_t length) {
    return 0;
}

}  // namespace lltt
