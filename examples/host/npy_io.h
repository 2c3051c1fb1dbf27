// Reading and writing NumPy .npy files, so that the host runner can take inputs from
// and hand outputs to Python without any other dependency.
//
// Supported: format versions 1, 2 and 3 (the header length is 16 bits in v1, 32 bits
// after), little-endian or byte-order-free dtypes, C (row-major) order, and the dtypes
// float32/64, int8/16/32/64, uint8 and bool. Anything else is refused with a named
// Error and a log line saying what was found.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/result.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/span.h"

namespace kiln::host {

/// The contents of one .npy file.
struct NpyArray {
  ScalarType dtype = ScalarType::Float;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  size_t numel() const;
};

/// The .npy dtype string (e.g. "<f4") of a scalar type, or nullptr if .npy files of
/// that type are not supported here.
const char* npy_descr(ScalarType type);

/// Parses the bytes of a .npy file. Errors: InvalidArgument (bad magic, header or
/// dtype, Fortran order) or NotSupported (big-endian data), each with a log line.
Result<NpyArray> parse_npy(Span<const uint8_t> bytes);

/// Reads and parses `path`; AccessFailed if it cannot be read.
Result<NpyArray> read_npy(const std::string& path);

/// The bytes of a version 1.0 .npy file holding `nbytes` of `data`.
Result<std::vector<uint8_t>> encode_npy(ScalarType dtype, Span<const int64_t> shape,
                                        const void* data, size_t nbytes);

/// Encodes and writes a .npy file; AccessFailed if it cannot be written.
Error write_npy(const std::string& path, ScalarType dtype, Span<const int64_t> shape,
                const void* data, size_t nbytes);

}  // namespace kiln::host
