// .npy reader and writer (format: numpy/lib/format.py's documented layout — magic
// "\x93NUMPY", version bytes, little-endian header length, a Python dict literal
// padded with spaces and a newline, then the raw array bytes).
#include "examples/host/npy_io.h"

#include <cstdio>
#include <cstring>

#include "runtime/platform/log.h"

namespace kiln::host {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// numpy pads the header so that the array data starts on a 64-byte boundary.
constexpr size_t kHeaderAlignment = 64;

struct DtypeEntry {
  ScalarType type;
  char kind;  // 'f', 'i', 'u' or 'b'
  size_t size;
  const char* descr;
};

constexpr DtypeEntry kDtypes[] = {
    {ScalarType::Float, 'f', 4, "<f4"}, {ScalarType::Double, 'f', 8, "<f8"},
    {ScalarType::Char, 'i', 1, "|i1"},  {ScalarType::Short, 'i', 2, "<i2"},
    {ScalarType::Int, 'i', 4, "<i4"},   {ScalarType::Long, 'i', 8, "<i8"},
    {ScalarType::Byte, 'u', 1, "|u1"},  {ScalarType::Bool, 'b', 1, "|b1"},
};

// Returns the position just after `'key':` (and any spaces) in the header, or npos.
size_t find_value(const std::string& header, const char* key) {
  const std::string quoted = std::string("'") + key + "'";
  size_t pos = header.find(quoted);
  if (pos == std::string::npos) return pos;
  pos = header.find(':', pos + quoted.size());
  if (pos == std::string::npos) return pos;
  ++pos;
  while (pos < header.size() && header[pos] == ' ') ++pos;
  return pos;
}

Error parse_descr(const std::string& header, ScalarType* out) {
  size_t pos = find_value(header, "descr");
  if (pos == std::string::npos || pos >= header.size() || header[pos] != '\'') {
    KILN_LOG(Error, ".npy header has no 'descr' string: %s", header.c_str());
    return Error::InvalidArgument;
  }
  const size_t end = header.find('\'', pos + 1);
  if (end == std::string::npos || end - pos - 1 < 3) {
    KILN_LOG(Error, ".npy header has a malformed 'descr': %s", header.c_str());
    return Error::InvalidArgument;
  }
  const std::string descr = header.substr(pos + 1, end - pos - 1);
  const char order = descr[0];
  if (order == '>') {
    KILN_LOG(Error, ".npy dtype '%s' is big-endian; only little-endian data is supported",
             descr.c_str());
    return Error::NotSupported;
  }
  const char kind = descr[1];
  const long size = std::strtol(descr.c_str() + 2, nullptr, 10);
  if (order == '<' || order == '|' || order == '=') {
    for (const DtypeEntry& entry : kDtypes) {
      if (entry.kind == kind && static_cast<long>(entry.size) == size) {
        *out = entry.type;
        return Error::Ok;
      }
    }
  }
  KILN_LOG(Error,
           ".npy dtype '%s' is not supported (float32/64, int8/16/32/64, uint8, bool are)",
           descr.c_str());
  return Error::InvalidArgument;
}

Error parse_fortran_order(const std::string& header) {
  const size_t pos = find_value(header, "fortran_order");
  if (pos == std::string::npos) {
    KILN_LOG(Error, ".npy header has no 'fortran_order': %s", header.c_str());
    return Error::InvalidArgument;
  }
  if (header.compare(pos, 5, "False") != 0) {
    KILN_LOG(Error, ".npy array is in Fortran order; save it with np.ascontiguousarray first");
    return Error::InvalidArgument;
  }
  return Error::Ok;
}

Error parse_shape(const std::string& header, std::vector<int64_t>* shape) {
  const size_t pos = find_value(header, "shape");
  const size_t close = pos == std::string::npos ? pos : header.find(')', pos);
  if (pos == std::string::npos || header[pos] != '(' || close == std::string::npos) {
    KILN_LOG(Error, ".npy header has no 'shape' tuple: %s", header.c_str());
    return Error::InvalidArgument;
  }
  const char* cursor = header.c_str() + pos + 1;
  const char* const stop = header.c_str() + close;
  while (cursor < stop) {
    while (cursor < stop && (*cursor == ' ' || *cursor == ',')) ++cursor;
    if (cursor >= stop) break;
    char* number_end = nullptr;
    const long long dim = std::strtoll(cursor, &number_end, 10);
    if (number_end == cursor || number_end > stop || dim < 0) {
      KILN_LOG(Error, ".npy header has a malformed 'shape': %s", header.c_str());
      return Error::InvalidArgument;
    }
    shape->push_back(dim);
    cursor = number_end;
  }
  return Error::Ok;
}

size_t element_count(Span<const int64_t> shape) {
  size_t numel = 1;
  for (int64_t dim : shape) numel *= static_cast<size_t>(dim);
  return numel;
}

}  // namespace

size_t NpyArray::numel() const { return element_count({shape.data(), shape.size()}); }

const char* npy_descr(ScalarType type) {
  for (const DtypeEntry& entry : kDtypes) {
    if (entry.type == type) return entry.descr;
  }
  return nullptr;
}

Result<NpyArray> parse_npy(Span<const uint8_t> bytes) {
  if (bytes.size() < kMagicSize + 4 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0) {
    KILN_LOG(Error, "not a .npy file (%zu bytes, no \\x93NUMPY magic)", bytes.size());
    return Error::InvalidArgument;
  }
  const uint8_t major = bytes[kMagicSize];
  size_t header_len = 0;
  size_t header_start = 0;
  if (major == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) {
      KILN_LOG(Error, ".npy file of %zu bytes is too short for a v%u header", bytes.size(),
               major);
      return Error::InvalidArgument;
    }
    header_len = static_cast<size_t>(bytes[8]) | (static_cast<size_t>(bytes[9]) << 8) |
                 (static_cast<size_t>(bytes[10]) << 16) | (static_cast<size_t>(bytes[11]) << 24);
    header_start = 12;
  } else {
    KILN_LOG(Error, ".npy format version %u is not supported (1, 2, 3 are)", major);
    return Error::InvalidArgument;
  }
  if (header_len > bytes.size() - header_start) {
    KILN_LOG(Error, ".npy header length %zu exceeds the file (%zu bytes)", header_len,
             bytes.size());
    return Error::InvalidArgument;
  }
  const std::string header(reinterpret_cast<const char*>(bytes.data()) + header_start,
                           header_len);
  NpyArray array;
  KILN_TRY(parse_descr(header, &array.dtype));
  KILN_TRY(parse_fortran_order(header));
  KILN_TRY(parse_shape(header, &array.shape));

  // Checked product, so that a forged shape cannot wrap around to the file size.
  size_t expected = element_size(array.dtype);
  for (int64_t dim : array.shape) {
    if (__builtin_mul_overflow(expected, static_cast<size_t>(dim), &expected)) {
      KILN_LOG(Error, ".npy shape overflows size_t: %s", header.c_str());
      return Error::InvalidArgument;
    }
  }
  const size_t data_start = header_start + header_len;
  if (bytes.size() - data_start != expected) {
    KILN_LOG(Error, ".npy data has %zu bytes; shape and dtype %s need %zu",
             bytes.size() - data_start, scalar_type_name(array.dtype), expected);
    return Error::InvalidArgument;
  }
  array.data.assign(bytes.data() + data_start, bytes.data() + bytes.size());
  return array;
}

Result<NpyArray> read_npy(const std::string& path) {
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    KILN_LOG(Error, "cannot open %s for reading", path.c_str());
    return Error::AccessFailed;
  }
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  size_t got = 0;
  while ((got = std::fread(chunk, 1, sizeof(chunk), file)) > 0) {
    bytes.insert(bytes.end(), chunk, chunk + got);
  }
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) {
    KILN_LOG(Error, "reading %s failed after %zu bytes", path.c_str(), bytes.size());
    return Error::AccessFailed;
  }
  Result<NpyArray> array = parse_npy({bytes.data(), bytes.size()});
  if (!array.ok()) KILN_LOG(Error, "in %s", path.c_str());
  return array;
}

Result<std::vector<uint8_t>> encode_npy(ScalarType dtype, Span<const int64_t> shape,
                                        const void* data, size_t nbytes) {
  const char* descr = npy_descr(dtype);
  if (descr == nullptr) {
    KILN_LOG(Error, "cannot write %s tensors to .npy", scalar_type_name(dtype));
    return Error::NotSupported;
  }
  if (element_count(shape) * element_size(dtype) != nbytes) {
    KILN_LOG(Error, "tensor data has %zu bytes; its shape and dtype need %zu", nbytes,
             element_count(shape) * element_size(dtype));
    return Error::InvalidArgument;
  }
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) {
    header += std::to_string(shape[i]);
    // A one-element tuple needs its trailing comma in Python syntax.
    if (i + 1 < shape.size() || shape.size() == 1) header += ",";
    if (i + 1 < shape.size()) header += " ";
  }
  header += "), }";
  const size_t prefix = kMagicSize + 2 + 2;
  const size_t unpadded = prefix + header.size() + 1;  // + the closing newline
  header.append((kHeaderAlignment - unpadded % kHeaderAlignment) % kHeaderAlignment, ' ');
  header += '\n';

  std::vector<uint8_t> bytes(kMagic, kMagic + kMagicSize);
  bytes.push_back(1);  // version 1.0: the header length fits in 16 bits
  bytes.push_back(0);
  bytes.push_back(static_cast<uint8_t>(header.size() & 0xff));
  bytes.push_back(static_cast<uint8_t>(header.size() >> 8));
  bytes.insert(bytes.end(), header.begin(), header.end());
  const uint8_t* begin = static_cast<const uint8_t*>(data);
  bytes.insert(bytes.end(), begin, begin + nbytes);
  return bytes;
}

Error write_npy(const std::string& path, ScalarType dtype, Span<const int64_t> shape,
                const void* data, size_t nbytes) {
  KILN_TRY_ASSIGN(std::vector<uint8_t> bytes, encode_npy(dtype, shape, data, nbytes));
  FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    KILN_LOG(Error, "cannot open %s for writing", path.c_str());
    return Error::AccessFailed;
  }
  const size_t written = std::fwrite(bytes.data(), 1, bytes.size(), file);
  const bool closed = std::fclose(file) == 0;
  if (written != bytes.size() || !closed) {
    KILN_LOG(Error, "writing %s failed (%zu of %zu bytes)", path.c_str(), written, bytes.size());
    return Error::AccessFailed;
  }
  return Error::Ok;
}

}  // namespace kiln::host
