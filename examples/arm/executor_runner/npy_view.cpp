#include "examples/arm/executor_runner/npy_view.h"

#include <cstring>

#include "runtime/platform/log.h"

namespace kiln::firmware {
namespace {

struct DtypeName {
  const char* descr;
  ScalarType type;
};

// numpy's descr strings ('<' little endian, '|' byte-sized) for the runtime's dtypes.
constexpr DtypeName kDtypes[] = {
    {"<f4", ScalarType::Float}, {"<f8", ScalarType::Double}, {"<f2", ScalarType::Half},
    {"|i1", ScalarType::Char},  {"|u1", ScalarType::Byte},   {"<i2", ScalarType::Short},
    {"<i4", ScalarType::Int},   {"<i8", ScalarType::Long},   {"|b1", ScalarType::Bool},
};

/// The text after `key` in the header, or nullptr.
const char* find_after(const char* header, size_t length, const char* key) {
  const size_t key_length = std::strlen(key);
  for (size_t i = 0; i + key_length <= length; ++i) {
    if (std::memcmp(header + i, key, key_length) == 0) return header + i + key_length;
  }
  return nullptr;
}

}  // namespace

Result<NpyView> parse_npy(const uint8_t* file, size_t size, const char* what) {
  // Magic "\x93NUMPY", version (1 or 2, then a 2- or 4-byte header length), header.
  if (size < 10 || std::memcmp(file, "\x93NUMPY", 6) != 0) {
    KILN_LOG(Error, "%s: not a .npy file (%zu bytes, no \\x93NUMPY magic)", what, size);
    return Error::InvalidArgument;
  }
  const uint8_t major = file[6];
  size_t header_length = 0;
  size_t header_start = 0;
  if (major == 1) {
    header_length = file[8] | (file[9] << 8);
    header_start = 10;
  } else if (major == 2 && size >= 12) {
    header_length = file[8] | (file[9] << 8) | (file[10] << 16) | (static_cast<size_t>(file[11]) << 24);
    header_start = 12;
  } else {
    KILN_LOG(Error, "%s: .npy version %u is not supported", what, major);
    return Error::InvalidArgument;
  }
  if (header_length > size - header_start) {
    KILN_LOG(Error, "%s: .npy header of %zu bytes runs past the file's %zu", what, header_length, size);
    return Error::InvalidArgument;
  }
  const char* header = reinterpret_cast<const char*>(file + header_start);
  NpyView view{};
  const char* descr = find_after(header, header_length, "'descr': '");
  bool known = false;
  for (const DtypeName& entry : kDtypes) {
    if (descr != nullptr && std::strncmp(descr, entry.descr, 3) == 0 && descr[3] == '\'') {
      view.dtype = entry.type;
      known = true;
    }
  }
  if (!known) {
    KILN_LOG(Error, "%s: .npy dtype is missing or not supported (little-endian numbers only)", what);
    return Error::InvalidArgument;
  }
  if (find_after(header, header_length, "'fortran_order': False") == nullptr) {
    KILN_LOG(Error, "%s: .npy array is not C-ordered", what);
    return Error::InvalidArgument;
  }
  const char* shape = find_after(header, header_length, "'shape': (");
  if (shape == nullptr) {
    KILN_LOG(Error, "%s: .npy header has no shape", what);
    return Error::InvalidArgument;
  }
  const char* header_end = header + header_length;
  size_t numel = 1;
  for (const char* p = shape; p < header_end && *p != ')';) {
    if (*p == ',' || *p == ' ') {
      ++p;
      continue;
    }
    int64_t value = 0;
    const char* digits = p;
    while (p < header_end && *p >= '0' && *p <= '9' && value <= INT32_MAX) value = value * 10 + (*p++ - '0');
    if (p == digits || value > INT32_MAX || view.dim == kNpyMaxDim) {
      KILN_LOG(Error, "%s: .npy shape is malformed or has more than %d dimensions", what, kNpyMaxDim);
      return Error::InvalidArgument;
    }
    view.shape[view.dim++] = static_cast<int32_t>(value);
    if (__builtin_mul_overflow(numel, static_cast<size_t>(value), &numel)) {
      KILN_LOG(Error, "%s: .npy shape has more elements than memory can hold", what);
      return Error::InvalidArgument;
    }
  }
  view.data = file + header_start + header_length;
  view.nbytes = numel * element_size(view.dtype);
  const size_t available = size - header_start - header_length;
  if (view.nbytes != available) {
    KILN_LOG(Error, "%s: .npy shape and dtype give %zu bytes of data; the file has %zu", what,
             view.nbytes, available);
    return Error::InvalidArgument;
  }
  return view;
}

}  // namespace kiln::firmware
