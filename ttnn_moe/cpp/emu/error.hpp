// The emulator's error type: everything that goes wrong while emulating a
// device (deadlock, out-of-bounds access, misaligned NOC transfer, DST misuse,
// kernel build failure) throws it. Python sees it as ttnn_moe._C.emu.EmulatorError
// (a RuntimeError). Bad host-side input throws std::invalid_argument (ValueError).
#pragma once

#include <stdexcept>
#include <string>

namespace ttnn_moe::emu {

class EmuError : public std::runtime_error {
public:
    explicit EmuError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace ttnn_moe::emu
