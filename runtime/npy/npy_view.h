// NpyView: a read-only view of a NumPy .npy file in memory — its dtype, shape and where
// its data starts — without copying or allocating, so that both the host runner (inputs
// read from files) and firmware (inputs embedded in flash) read .npy files the same way.
//
// Accepted: format versions 1, 2 and 3 (the header length is 16 bits in v1, 32 bits
// after), little-endian or byte-order-free dtypes, C (row-major) order, the dtypes
// float16/32/64, int8/16/32/64, uint8 and bool, and shapes a Kiln tensor can have (at most
// kTensorMaxDim dimensions whose int32 strides do not overflow, check_tensor_sizes).
// Anything else is refused with a named Error and a log line saying what was found.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/result.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor.h"

namespace kiln {

struct NpyView {
  ScalarType dtype = ScalarType::Float;
  int32_t dim = 0;
  SizesType shape[kTensorMaxDim] = {};
  /// The array's bytes, inside the parsed file.
  const uint8_t* data = nullptr;
  size_t nbytes = 0;

  Span<const SizesType> sizes() const { return {shape, static_cast<size_t>(dim)}; }
};

/// Parses the bytes of a .npy file; `what` names it in log lines ("input 0", a path).
/// InvalidArgument (bad magic, header, dtype, shape, Fortran order, data length) or
/// NotSupported (big-endian data), each logged.
Result<NpyView> parse_npy(Span<const uint8_t> file, const char* what);

/// The .npy dtype string ("<f4") of a scalar type, or nullptr if .npy files of that type
/// are not supported here.
const char* npy_descr(ScalarType type);

}  // namespace kiln
