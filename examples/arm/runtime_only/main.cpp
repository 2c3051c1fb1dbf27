// The Kiln runtime with no kernels, for measuring what the runtime itself costs in
// flash and RAM (benchmarks/firmware_size.py). It loads a program from a buffer and
// initializes and runs its method, so that every part of the executor is linked; the
// buffer here is empty, so the run stops at Program::load with ProgramTruncated.

#include "examples/arm/platform/board.h"
#include "runtime/core/error.h"
#include "runtime/core/hierarchical_allocator.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/executor/buffer_data_loader.h"
#include "runtime/executor/memory_manager.h"
#include "runtime/executor/program.h"

namespace {

alignas(16) uint8_t g_method_pool[1024];
alignas(16) uint8_t g_planned_pool[1024];
alignas(16) const uint8_t g_program[16] = {};

kiln::Error run() {
  kiln::BufferDataLoader loader(g_program, 0);
  KILN_TRY_ASSIGN(kiln::Program program, kiln::Program::load(&loader));
  KILN_TRY_ASSIGN(const char* name, program.get_method_name(0));
  kiln::MemoryAllocator method_allocator(g_method_pool, sizeof(g_method_pool));
  kiln::Span<uint8_t> planned[1] = {{g_planned_pool, sizeof(g_planned_pool)}};
  kiln::HierarchicalAllocator planned_memory({planned, 1});
  kiln::MemoryManager memory;
  memory.method_allocator = &method_allocator;
  memory.planned_memory = &planned_memory;
  KILN_TRY_ASSIGN(kiln::Method method, program.load_method(name, &memory));
  return method.execute();
}

}  // namespace

int main() {
  const kiln::Error error = run();
  board_printf("runtime only: %s (0x%02lx)\n", kiln::error_name(error), static_cast<unsigned long>(error));
  return error == kiln::Error::ProgramTruncated ? 0 : 1;
}
