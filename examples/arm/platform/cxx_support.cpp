// The few C++ runtime-support symbols the runtime references, so that firmware links
// without libstdc++/libsupc++ (only their headers are installed): virtual destructors
// emit "deleting destructor" variants that name operator delete, and abstract classes
// name __cxa_pure_virtual. Kiln never allocates with new, so none of these can be
// reached in a correct program; each stops with a message if it is.
#include <cstddef>

#include "examples/arm/platform/board.h"

namespace {

[[noreturn]] void stop(const char* what) {
  board_uart_puts("\n*** ");
  board_uart_puts(what);
  board_uart_puts("\n");
  board_exit(KILN_EXIT_ABORT);
}

}  // namespace

void operator delete(void*) noexcept { stop("operator delete called (Kiln firmware never uses new)"); }
// The FlatBuffers builder of the ETDump writer names these for its default allocator,
// which the writer never uses: it always gives the builder its own fixed buffer.
void* operator new[](std::size_t) { stop("operator new[] called (Kiln firmware never uses new)"); }
void operator delete[](void*) noexcept { stop("operator delete[] called (Kiln firmware never uses new)"); }
void operator delete(void*, std::size_t) noexcept {
  stop("operator delete called (Kiln firmware never uses new)");
}
// With a sized delete defined, GCC asks for the sized array one too (-Wsized-deallocation).
void operator delete[](void*, std::size_t) noexcept {
  stop("operator delete[] called (Kiln firmware never uses new)");
}

extern "C" void __cxa_pure_virtual() { stop("pure virtual function called"); }
