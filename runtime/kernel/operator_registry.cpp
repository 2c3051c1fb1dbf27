// A fixed-capacity kernel table: registration and lookup never touch the heap.
#include "runtime/kernel/operator_registry.h"

#include <cstring>

#include "runtime/platform/log.h"

namespace kiln {
namespace {

Kernel g_kernels[KILN_MAX_KERNELS];
size_t g_num_kernels = 0;

/// True if `full` ("aten::add.out") is `name` + "." + `overload`, or just `name` when
/// the overload is empty. Compares in place instead of building the joined string.
bool matches(const char* full, const char* name, const char* overload) {
  const size_t name_length = std::strlen(name);
  if (std::strncmp(full, name, name_length) != 0) return false;
  const char* rest = full + name_length;
  if (overload == nullptr || overload[0] == '\0') return rest[0] == '\0';
  return rest[0] == '.' && std::strcmp(rest + 1, overload) == 0;
}

bool is_registered(const char* full_name) {
  for (size_t i = 0; i < g_num_kernels; ++i) {
    if (std::strcmp(g_kernels[i].name, full_name) == 0) return true;
  }
  return false;
}

}  // namespace

Error register_kernels(Span<const Kernel> kernels) {
  // Check the whole batch first so that a failing call adds nothing.
  if (kernels.size() > KILN_MAX_KERNELS - g_num_kernels) {
    KILN_LOG(Error, "registering %zu kernels: %zu of %d slots are free (raise KILN_MAX_KERNELS)",
             kernels.size(), KILN_MAX_KERNELS - g_num_kernels, KILN_MAX_KERNELS);
    return Error::RegistrationExceedingMax;
  }
  for (size_t i = 0; i < kernels.size(); ++i) {
    const Kernel& kernel = kernels[i];
    if (kernel.name == nullptr || kernel.function == nullptr) {
      KILN_LOG(Error, "kernel %zu of the batch has no name or no function", i);
      return Error::InvalidArgument;
    }
    bool duplicate = is_registered(kernel.name);
    for (size_t j = 0; j < i && !duplicate; ++j) {
      duplicate = std::strcmp(kernels[j].name, kernel.name) == 0;
    }
    if (duplicate) {
      KILN_LOG(Error, "kernel %s is registered already", kernel.name);
      return Error::RegistrationAlreadyRegistered;
    }
  }
  for (const Kernel& kernel : kernels) {
    g_kernels[g_num_kernels++] = kernel;
  }
  return Error::Ok;
}

OpFunction get_op_function(const char* name, const char* overload) {
  if (name == nullptr) return nullptr;
  for (size_t i = 0; i < g_num_kernels; ++i) {
    if (matches(g_kernels[i].name, name, overload)) return g_kernels[i].function;
  }
  return nullptr;
}

Span<const Kernel> registered_kernels() { return {g_kernels, g_num_kernels}; }

}  // namespace kiln
