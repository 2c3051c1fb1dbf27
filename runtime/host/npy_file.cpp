#include "runtime/host/npy_file.h"

#include <cstdio>

#include "runtime/npy/npy_view.h"
#include "runtime/platform/log.h"

namespace kiln::host {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// numpy pads the header so that the array data starts on a 64-byte boundary.
constexpr size_t kHeaderAlignment = 64;

size_t element_count(Span<const SizesType> shape) {
  size_t numel = 1;
  for (SizesType size : shape) numel *= static_cast<size_t>(size);
  return numel;
}

}  // namespace

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
  KILN_TRY_ASSIGN(const NpyView view, parse_npy({bytes.data(), bytes.size()}, path.c_str()));
  NpyArray array;
  array.dtype = view.dtype;
  array.shape.assign(view.shape, view.shape + view.dim);
  array.data.assign(view.data, view.data + view.nbytes);
  return array;
}

Result<std::vector<uint8_t>> encode_npy(ScalarType dtype, Span<const SizesType> shape,
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

Error write_npy(const std::string& path, ScalarType dtype, Span<const SizesType> shape,
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
