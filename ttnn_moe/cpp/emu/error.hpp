#pragma once

#include <stdexcept>

namespace ttnn_moe::emu { struct EmuError : std::runtime_error { using std::runtime_error::runtime_error; }; }
