// MemoryManager: the memory a method gets from its caller. The runtime allocates
// nothing else (no malloc): sizes come from MethodMeta.
#pragma once

#include "runtime/core/hierarchical_allocator.h"
#include "runtime/core/memory_allocator.h"

namespace kiln {

struct MemoryManager {
  /// Holds everything Method init builds (value table, tensors, argument lists).
  /// Size it with MethodMeta::method_allocator_size().
  MemoryAllocator* method_allocator = nullptr;
  /// The planned buffers; buffer i must hold MethodMeta::memory_planned_buffer_size(i)
  /// bytes. May be nullptr for a method without planned buffers.
  HierarchicalAllocator* planned_memory = nullptr;
  /// Kernel scratch space, reset after every instruction. May be nullptr when no
  /// kernel asks for scratch.
  MemoryAllocator* temp_allocator = nullptr;
};

}  // namespace kiln
