// The device profiler's kernel markers (tt-metal 0.81.1 api/debug/kernel_profiler.hpp), as a build without
// PROFILE_KERNEL defines them: they compile to nothing. The emulator's time model is its own profiler.
#pragma once

#define DeviceZoneScopedN(name) (void(sizeof(name)))
#define DeviceTimestampedData(data_id, data) (void(sizeof(data_id) + sizeof(data)))
#define DeviceRecordEvent(event_id) (void(sizeof(event_id)))
#define DeviceValidateProfiler(condition) (void(sizeof(condition)))
