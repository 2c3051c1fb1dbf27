// Reading and writing .npy files on a host (kiln-run's inputs and outputs), on top of
// the portable parser (runtime/npy/npy_view.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/result.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor.h"

namespace kiln::host {

/// The contents of one .npy file, owned.
struct NpyArray {
  ScalarType dtype = ScalarType::Float;
  std::vector<SizesType> shape;
  /// The array's bytes (malloc-aligned, so any element type can be read in place).
  std::vector<uint8_t> data;
};

/// Reads and parses `path`: AccessFailed if it cannot be read, else parse_npy's errors.
Result<NpyArray> read_npy(const std::string& path);

/// The bytes of a version 1.0 .npy file holding `nbytes` of `data`. NotSupported for a
/// dtype .npy files cannot hold here, InvalidArgument if `nbytes` disagrees with the shape.
Result<std::vector<uint8_t>> encode_npy(ScalarType dtype, Span<const SizesType> shape,
                                        const void* data, size_t nbytes);

/// Encodes and writes a .npy file; AccessFailed if it cannot be written.
Error write_npy(const std::string& path, ScalarType dtype, Span<const SizesType> shape,
                const void* data, size_t nbytes);

}  // namespace kiln::host
