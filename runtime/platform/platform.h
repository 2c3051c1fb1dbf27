// The platform abstraction layer (PAL): the few things the runtime needs from the
// system. Each function has a weak default (default.cpp); posix.cpp and, for firmware,
// the board support code provide real ones.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

/// Called once before the runtime is used.
void kiln_pal_init(void);

/// Writes one log line (no trailing newline in `message`).
void kiln_pal_emit_log_message(int level, const char* file, int line, const char* message,
                               size_t length);

/// A monotonic tick counter.
uint64_t kiln_pal_current_ticks(void);

/// Nanoseconds per tick, as numerator / denominator.
void kiln_pal_ticks_to_ns(uint64_t* numerator, uint64_t* denominator);

/// Stops the program; only for states the runtime cannot report as an Error.
[[noreturn]] void kiln_pal_abort(void);

}  // extern "C"

namespace kiln {

/// Nanoseconds elapsed between two tick readings.
uint64_t ticks_to_ns(uint64_t ticks);

}  // namespace kiln
