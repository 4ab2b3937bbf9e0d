// The part of the LLK's ckernel_defs.h that kernels name: the RISC-V thread ids of a Tensix core, as the
// mailboxes (ckernel.h) address them, and the SFPU binary op and DST rounding enums.
#pragma once

#include <cstdint>

namespace ckernel {

enum ThreadId { BriscThreadId = 0, UnpackThreadId = 1, MathThreadId = 2, PackThreadId = 3 };

}  // namespace ckernel

namespace ckernel {

// The SFPU binary ops of tt-llk's ckernel_defs.h (values as in 0.81.1; the emulated ones are in
// ckernel_sfpu_binary.h).
enum class BinaryOp : std::uint8_t { ADD = 0, SUB = 1, MUL = 2, DIV = 3, RSUB = 4, POW = 5, XLOGY = 6 };

// How an fp32 SFPU result is narrowed into a 16-bit DST: SFPSTORE truncates (Default), or the LLK rounds to
// nearest even in software first.
enum class DstRoundingMode : std::uint8_t { Default = 0, NearestEven = 1 };

}  // namespace ckernel
