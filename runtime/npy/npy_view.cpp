// .npy parsing (the layout numpy/lib/format.py documents: magic "\x93NUMPY", version
// bytes, a little-endian header length, a Python dict literal padded with spaces and a
// newline, then the raw array bytes).
#include "runtime/npy/npy_view.h"

#include <cstring>

#include "runtime/platform/log.h"

namespace kiln {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

struct DtypeEntry {
  ScalarType type;
  char kind;  // 'f', 'i', 'u' or 'b'
  size_t size;
  const char* descr;  // what encode writes
};

constexpr DtypeEntry kDtypes[] = {
    {ScalarType::Float, 'f', 4, "<f4"}, {ScalarType::Double, 'f', 8, "<f8"},
    {ScalarType::Half, 'f', 2, "<f2"},  {ScalarType::Char, 'i', 1, "|i1"},
    {ScalarType::Short, 'i', 2, "<i2"}, {ScalarType::Int, 'i', 4, "<i4"},
    {ScalarType::Long, 'i', 8, "<i8"},  {ScalarType::Byte, 'u', 1, "|u1"},
    {ScalarType::Bool, 'b', 1, "|b1"},
};

/// The header text, bounded (it is not NUL-terminated in the file).
struct Header {
  const char* begin;
  const char* end;

  /// Just after `'key':` and any spaces, or nullptr.
  const char* value_of(const char* key) const {
    const size_t key_length = std::strlen(key);
    for (const char* p = begin; p + key_length + 2 <= end; ++p) {
      if (*p == '\'' && std::memcmp(p + 1, key, key_length) == 0 && p[key_length + 1] == '\'') {
        const char* q = p + key_length + 2;
        while (q < end && *q == ' ') ++q;
        if (q == end || *q != ':') return nullptr;
        ++q;
        while (q < end && *q == ' ') ++q;
        return q;
      }
    }
    return nullptr;
  }

  int length() const { return static_cast<int>(end - begin); }
};

Error parse_descr(const Header& header, const char* what, ScalarType* out) {
  const char* value = header.value_of("descr");
  if (value == nullptr || value == header.end || *value != '\'') {
    KILN_LOG(Error, "%s: .npy header has no 'descr' string: %.*s", what, header.length(),
             header.begin);
    return Error::InvalidArgument;
  }
  const char* close = static_cast<const char*>(std::memchr(value + 1, '\'', header.end - value - 1));
  if (close == nullptr || close - value - 1 < 3) {
    KILN_LOG(Error, "%s: .npy header has a malformed 'descr': %.*s", what, header.length(),
             header.begin);
    return Error::InvalidArgument;
  }
  const char order = value[1];
  const char kind = value[2];
  const int descr_length = static_cast<int>(close - value - 1);
  if (order == '>') {
    KILN_LOG(Error, "%s: .npy dtype '%.*s' is big-endian; only little-endian data is supported",
             what, descr_length, value + 1);
    return Error::NotSupported;
  }
  size_t size = 0;
  bool digits = true;
  for (const char* p = value + 3; p < close; ++p) {
    digits = digits && *p >= '0' && *p <= '9' && size < 1000;
    if (digits) size = size * 10 + static_cast<size_t>(*p - '0');
  }
  if (digits && (order == '<' || order == '|' || order == '=')) {
    for (const DtypeEntry& entry : kDtypes) {
      if (entry.kind == kind && entry.size == size) {
        *out = entry.type;
        return Error::Ok;
      }
    }
  }
  KILN_LOG(Error, "%s: .npy dtype '%.*s' is not supported (float16/32/64, int8/16/32/64, uint8, "
           "bool are)", what, descr_length, value + 1);
  return Error::InvalidArgument;
}

Error parse_fortran_order(const Header& header, const char* what) {
  const char* value = header.value_of("fortran_order");
  if (value == nullptr) {
    KILN_LOG(Error, "%s: .npy header has no 'fortran_order': %.*s", what, header.length(),
             header.begin);
    return Error::InvalidArgument;
  }
  if (header.end - value < 5 || std::memcmp(value, "False", 5) != 0) {
    KILN_LOG(Error, "%s: .npy array is in Fortran order; save it with np.ascontiguousarray first",
             what);
    return Error::InvalidArgument;
  }
  return Error::Ok;
}

Error parse_shape(const Header& header, const char* what, NpyView* view) {
  const char* value = header.value_of("shape");
  const char* close =
      value == nullptr ? nullptr
                       : static_cast<const char*>(std::memchr(value, ')', header.end - value));
  if (value == nullptr || value == header.end || *value != '(' || close == nullptr) {
    KILN_LOG(Error, "%s: .npy header has no 'shape' tuple: %.*s", what, header.length(),
             header.begin);
    return Error::InvalidArgument;
  }
  for (const char* p = value + 1; p < close;) {
    if (*p == ' ' || *p == ',') {
      ++p;
      continue;
    }
    int64_t size = 0;
    const char* digits = p;
    while (p < close && *p >= '0' && *p <= '9' && size <= INT32_MAX) size = size * 10 + (*p++ - '0');
    if (p == digits || size > INT32_MAX || (p < close && *p != ',' && *p != ' ')) {
      KILN_LOG(Error, "%s: .npy header has a malformed 'shape' or a dimension beyond int32: %.*s",
               what, header.length(), header.begin);
      return Error::InvalidArgument;
    }
    if (view->dim == kTensorMaxDim) {
      KILN_LOG(Error, "%s: .npy array has more than %d dimensions", what,
               static_cast<int>(kTensorMaxDim));
      return Error::InvalidArgument;
    }
    view->shape[view->dim++] = static_cast<SizesType>(size);
  }
  if (check_tensor_sizes(view->sizes()) != Error::Ok) {
    KILN_LOG(Error, "%s: .npy shape cannot be a tensor's (int32 strides): %.*s", what,
             header.length(), header.begin);
    return Error::InvalidArgument;
  }
  return Error::Ok;
}

}  // namespace

const char* npy_descr(ScalarType type) {
  for (const DtypeEntry& entry : kDtypes) {
    if (entry.type == type) return entry.descr;
  }
  return nullptr;
}

Result<NpyView> parse_npy(Span<const uint8_t> file, const char* what) {
  const uint8_t* bytes = file.data();
  const size_t size = file.size();
  if (size < kMagicSize + 4 || std::memcmp(bytes, kMagic, kMagicSize) != 0) {
    KILN_LOG(Error, "%s: not a .npy file (%zu bytes, no \\x93NUMPY magic)", what, size);
    return Error::InvalidArgument;
  }
  const uint8_t major = bytes[kMagicSize];
  size_t header_length = 0;
  size_t header_start = 0;
  if (major == 1) {
    header_length = static_cast<size_t>(bytes[8]) | (static_cast<size_t>(bytes[9]) << 8);
    header_start = 10;
  } else if ((major == 2 || major == 3) && size >= 12) {
    header_length = static_cast<size_t>(bytes[8]) | (static_cast<size_t>(bytes[9]) << 8) |
                    (static_cast<size_t>(bytes[10]) << 16) | (static_cast<size_t>(bytes[11]) << 24);
    header_start = 12;
  } else {
    KILN_LOG(Error, "%s: .npy format version %u is not supported (1, 2, 3 are)", what,
             static_cast<unsigned>(major));
    return Error::InvalidArgument;
  }
  if (header_length > size - header_start) {
    KILN_LOG(Error, "%s: .npy header of %zu bytes runs past the file's %zu", what, header_length,
             size);
    return Error::InvalidArgument;
  }
  const char* text = reinterpret_cast<const char*>(bytes + header_start);
  const Header header{text, text + header_length};
  NpyView view;
  KILN_TRY(parse_descr(header, what, &view.dtype));
  KILN_TRY(parse_fortran_order(header, what));
  KILN_TRY(parse_shape(header, what, &view));
  // check_tensor_sizes bounds the element count by INT32_MAX: no overflow here.
  size_t numel = 1;
  for (int32_t d = 0; d < view.dim; ++d) numel *= static_cast<size_t>(view.shape[d]);
  view.data = bytes + header_start + header_length;
  view.nbytes = numel * element_size(view.dtype);
  const size_t available = size - header_start - header_length;
  if (view.nbytes != available) {
    KILN_LOG(Error, "%s: .npy data has %zu bytes; shape and dtype %s need %zu", what, available,
             scalar_type_name(view.dtype), view.nbytes);
    return Error::InvalidArgument;
  }
  return view;
}

}  // namespace kiln
