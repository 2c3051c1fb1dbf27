#include "runtime/host/method_memory.h"

#include <cinttypes>
#include <cstring>

namespace kiln::host {

Result<std::unique_ptr<MethodMemory>> MethodMemory::allocate(const MethodMeta& meta,
                                                            size_t temp_bytes) {
  std::unique_ptr<MethodMemory> memory(new MethodMemory());
  KILN_TRY_ASSIGN(const size_t method_bytes, meta.method_allocator_size());
  KILN_TRY_ASSIGN(memory->method_pool_, HostBuffer::allocate(method_bytes, "method allocator"));
  memory->method_allocator_ = std::make_unique<MemoryAllocator>(memory->method_pool_.data(),
                                                                memory->method_pool_.size());
  for (size_t i = 0; i < meta.num_memory_planned_buffers(); ++i) {
    KILN_TRY_ASSIGN(const int64_t size, meta.memory_planned_buffer_size(i));
    if (size < 0) {
      KILN_LOG(Error, "planned buffer %zu has a negative size (%" PRId64 ")", i, size);
      return Error::InvalidProgram;
    }
    KILN_TRY_ASSIGN(HostBuffer pool,
                    HostBuffer::allocate(static_cast<size_t>(size), "planned buffer"));
    memory->planned_pools_.push_back(std::move(pool));
  }
  for (HostBuffer& pool : memory->planned_pools_) {
    memory->planned_spans_.emplace_back(pool.data(), pool.size());
  }
  memory->planned_memory_ = std::make_unique<HierarchicalAllocator>(
      Span<Span<uint8_t>>{memory->planned_spans_.data(), memory->planned_spans_.size()});
  KILN_TRY_ASSIGN(memory->temp_pool_, HostBuffer::allocate(temp_bytes, "temp allocator"));
  memory->temp_allocator_ =
      std::make_unique<MemoryAllocator>(memory->temp_pool_.data(), memory->temp_pool_.size());
  memory->manager_.method_allocator = memory->method_allocator_.get();
  memory->manager_.planned_memory = memory->planned_memory_.get();
  memory->manager_.temp_allocator = memory->temp_allocator_.get();
  return memory;
}

void MethodMemory::fill_planned_buffers(uint8_t byte) {
  for (HostBuffer& pool : planned_pools_) std::memset(pool.data(), byte, pool.size());
}

}  // namespace kiln::host
