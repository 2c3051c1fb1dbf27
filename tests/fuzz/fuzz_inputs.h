// What the three fuzz targets share: the Ethos-U targets a fuzz input can pick by index
// (tests/fuzz/make_seeds.py writes the same table), a virtual NPU with work limits that
// keep one run in milliseconds, and a log sink that drops messages (the runtime logs
// every refusal; printing them would slow fuzzing down a hundredfold).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backends/arm/vnpu/virtual_npu.h"
#include "runtime/platform/log.h"

namespace kiln::fuzz {

/// Index = the low nibble of the first byte of an Ethos-U fuzz input.
constexpr const char* kTargets[] = {"ethos-u55-128",  "ethos-u55-64",   "ethos-u55-256", "ethos-u55-32",
                                    "ethos-u65-256",  "ethos-u65-512",  "ethos-u85-128", "ethos-u85-256",
                                    "ethos-u85-512",  "ethos-u85-1024", "ethos-u85-2048"};
constexpr size_t kNumTargets = sizeof(kTargets) / sizeof(kTargets[0]);

inline const char* target_of(uint8_t selector) { return kTargets[(selector & 0x0f) % kNumTargets]; }

/// Per run: the seeds need well under these; a mutated stream that asks for more is
/// refused with NpuWorkLimitExceeded rather than spending seconds.
inline vnpu::Config limited_config(const char* target) {
  vnpu::Config config;
  vnpu::config_from_target_name(target, &config);
  config.max_operations = 256;
  config.max_macs = uint64_t{1} << 24;
  config.max_commands = uint64_t{1} << 16;
  config.max_counted_weights = uint64_t{1} << 16;
  return config;
}

/// Work memory of every fuzzing virtual NPU: internal memory + 1 MiB of decode scratch.
constexpr size_t kWorkMemoryBytes = vnpu::kInternalMemoryBytes + (size_t{1} << 20);

/// A fuzz target's setup (registration, a fixed configuration) failed: the target would
/// fuzz nothing, so it stops with the reason rather than report every input as fine.
[[noreturn]] inline void stop(const char* what) {
  std::fprintf(stderr, "fuzz target setup failed: %s\n", what);
  std::abort();
}

inline void drop_log(LogLevel, const char*, size_t, void*) {}

/// Drops the runtime's log unless KILN_FUZZ_LOG is set (to read why an input fails).
inline void quiet_log() {
  if (std::getenv("KILN_FUZZ_LOG") == nullptr) set_log_sink(&drop_log, nullptr);
}

}  // namespace kiln::fuzz
