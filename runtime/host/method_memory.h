// MethodMemory: everything a method runs in on a host, sized from its MethodMeta — the
// method allocator (exactly method_allocator_size() bytes), one buffer per memory-planned
// id (its planned size) and the kernel scratch (temp) allocator. kiln-run and the Python
// extension load methods in it.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "runtime/core/hierarchical_allocator.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/result.h"
#include "runtime/executor/memory_manager.h"
#include "runtime/executor/method_meta.h"
#include "runtime/host/host_buffer.h"

namespace kiln::host {

class MethodMemory {
 public:
  /// Allocates what `meta` asks for plus `temp_bytes` of kernel scratch. Errors: the
  /// meta's (a program whose sizes cannot be read), InvalidProgram for a negative planned
  /// size, MemoryAllocationFailed when the host cannot allocate (each logged). The object
  /// never moves (a unique_ptr): the allocators point into it.
  static Result<std::unique_ptr<MethodMemory>> allocate(const MethodMeta& meta, size_t temp_bytes);

  MethodMemory(const MethodMemory&) = delete;
  MethodMemory& operator=(const MethodMemory&) = delete;

  /// What Program::load_method takes.
  MemoryManager* manager() { return &manager_; }
  const MemoryAllocator& method_allocator() const { return *method_allocator_; }
  const MemoryAllocator& temp_allocator() const { return *temp_allocator_; }
  size_t num_planned_buffers() const { return planned_pools_.size(); }
  size_t planned_buffer_size(size_t i) const { return planned_pools_[i].size(); }
  /// Writes `byte` over every planned buffer (before the method loads): a run whose
  /// outputs change with it reads memory the program never wrote.
  void fill_planned_buffers(uint8_t byte);

 private:
  MethodMemory() = default;

  HostBuffer method_pool_;
  std::unique_ptr<MemoryAllocator> method_allocator_;
  std::vector<HostBuffer> planned_pools_;
  std::vector<Span<uint8_t>> planned_spans_;
  std::unique_ptr<HierarchicalAllocator> planned_memory_;
  HostBuffer temp_pool_;
  std::unique_ptr<MemoryAllocator> temp_allocator_;
  MemoryManager manager_;
};

}  // namespace kiln::host
