#include "runtime/executor/file_data_loader.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <sys/stat.h>

#include "runtime/platform/log.h"

namespace kiln {
namespace {

/// Tensors and flatbuffer vectors point straight into the file's bytes.
constexpr size_t kFileAlignment = 16;

}  // namespace

Result<FileDataLoader> FileDataLoader::from(const char* path) {
  if (path == nullptr) {
    KILN_LOG(Error, "FileDataLoader: no path given");
    return Error::InvalidArgument;
  }
  FILE* file = std::fopen(path, "rb");
  if (file == nullptr) {
    KILN_LOG(Error, "cannot open %s: %s", path, std::strerror(errno));
    return Error::AccessFailed;
  }
  // A directory opens fine but has no meaningful size.
  struct stat info {};
  if (fstat(fileno(file), &info) != 0 || !S_ISREG(info.st_mode)) {
    KILN_LOG(Error, "cannot read %s: not a regular file", path);
    std::fclose(file);
    return Error::AccessFailed;
  }
  long end = -1;
  if (std::fseek(file, 0, SEEK_END) == 0) end = std::ftell(file);
  if (end < 0 || std::fseek(file, 0, SEEK_SET) != 0) {
    KILN_LOG(Error, "cannot find the size of %s: %s", path, std::strerror(errno));
    std::fclose(file);
    return Error::AccessFailed;
  }
  const size_t size = static_cast<size_t>(end);
  // aligned_alloc wants a size that is a multiple of the alignment (and non-zero).
  const size_t capacity = (size + kFileAlignment) / kFileAlignment * kFileAlignment;
  auto* data = static_cast<uint8_t*>(std::aligned_alloc(kFileAlignment, capacity));
  if (data == nullptr) {
    KILN_LOG(Error, "cannot allocate %zu bytes to read %s", capacity, path);
    std::fclose(file);
    return Error::MemoryAllocationFailed;
  }
  const size_t read = size == 0 ? 0 : std::fread(data, 1, size, file);
  const bool failed = read != size || std::ferror(file) != 0;
  const int read_errno = errno;
  std::fclose(file);
  if (failed) {
    KILN_LOG(Error, "read %zu of %zu bytes of %s: %s", read, size, path,
             std::strerror(read_errno));
    std::free(data);
    return Error::AccessFailed;
  }
  return FileDataLoader(data, size);
}

FileDataLoader::FileDataLoader(FileDataLoader&& other) noexcept
    : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

FileDataLoader& FileDataLoader::operator=(FileDataLoader&& other) noexcept {
  if (this != &other) {
    std::free(data_);
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

FileDataLoader::~FileDataLoader() { std::free(data_); }

Result<Span<const uint8_t>> FileDataLoader::load(size_t offset, size_t size) {
  if (data_ == nullptr) {
    KILN_LOG(Error, "FileDataLoader: load from a moved-from loader");
    return Error::InvalidState;
  }
  if (offset > size_ || size > size_ - offset) {
    KILN_LOG(Error, "program file: bytes [%zu, +%zu) requested; the file has %zu", offset, size,
             size_);
    return Error::ProgramTruncated;
  }
  return Span<const uint8_t>(data_ + offset, size);
}

}  // namespace kiln
