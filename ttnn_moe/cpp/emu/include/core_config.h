// The processor kinds of a Tensix core (tt-metal 0.81.1's core_config.h) and which one this kernel runs on.
#pragma once

#include <cstdint>

#include "ttnn_moe_emu/abi.h"

enum class TensixProcessorTypes : uint8_t { DM0 = 0, DM1 = 1, MATH0 = 2, MATH1 = 3, MATH2 = 4, COUNT = 5 };

constexpr uint32_t MaxDMProcessorsPerCoreType = ttnn_moe_emu::NUM_DM_PROCESSORS;

// BRISC is DM0, NCRISC DM1; the compute kernel runs its three TRISCs as one context, reported as MATH0.
#if defined(COMPILE_FOR_BRISC)
constexpr uint8_t proc_type = static_cast<uint8_t>(TensixProcessorTypes::DM0);
#elif defined(COMPILE_FOR_NCRISC)
constexpr uint8_t proc_type = static_cast<uint8_t>(TensixProcessorTypes::DM1);
#else
constexpr uint8_t proc_type = static_cast<uint8_t>(TensixProcessorTypes::MATH0);
#endif
