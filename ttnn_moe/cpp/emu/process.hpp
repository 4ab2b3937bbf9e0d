// Runs a program (no shell) and captures its stdout+stderr.
#pragma once

#include <string>
#include <vector>

namespace ttnn_moe::emu {

struct ProcessResult {
    int exit_code = -1;
    std::string output;
};

ProcessResult run_process(const std::vector<std::string>& argv);

}  // namespace ttnn_moe::emu
