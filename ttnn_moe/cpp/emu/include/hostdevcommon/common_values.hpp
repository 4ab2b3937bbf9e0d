// Values shared by host and device code: the VALID / INVALID flags the matmul readers
// exchange through semaphores.
#pragma once

#include <cstddef>
#include <cstdint>

constexpr static std::uint32_t INVALID = 0;
constexpr static std::uint32_t VALID = 1;
