// NpyView: a read-only view of a .npy file in memory (an embedded input or expected
// output), without copying: dtype, shape and where the data starts. Only what numpy
// writes for C-ordered arrays of numbers is accepted; anything else is a named error.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/result.h"
#include "runtime/core/scalar_type.h"

namespace kiln::firmware {

constexpr int kNpyMaxDim = 8;

struct NpyView {
  ScalarType dtype;
  int32_t dim;
  int32_t shape[kNpyMaxDim];
  const uint8_t* data;
  size_t nbytes;
};

/// Parses `file` (`size` bytes). InvalidArgument, with a log line naming `what` and the
/// problem, for a file that is not a C-ordered .npy of a supported dtype or whose data
/// is shorter or longer than its shape says.
Result<NpyView> parse_npy(const uint8_t* file, size_t size, const char* what);

}  // namespace kiln::firmware
