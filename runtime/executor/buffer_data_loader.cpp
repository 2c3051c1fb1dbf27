#include "runtime/executor/buffer_data_loader.h"

#include "runtime/platform/log.h"

namespace kiln {

Result<Span<const uint8_t>> BufferDataLoader::load(size_t offset, size_t size) {
  if (offset > size_ || size > size_ - offset) {
    KILN_LOG(Error, "program data: bytes [%zu, +%zu) requested; the buffer holds %zu", offset,
             size, size_);
    return Error::ProgramTruncated;
  }
  return Span<const uint8_t>(data_ + offset, size);
}

}  // namespace kiln
