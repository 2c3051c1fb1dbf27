// The kernel registry: operator name -> kernel function.
//
// Registration is explicit: a generated or hand-written register_*_kernels() function
// calls register_kernels() with its table, and the runner calls that function. Nothing
// relies on static initializers.
#pragma once

#include <cstddef>

#include "runtime/core/error.h"
#include "runtime/core/evalue.h"
#include "runtime/core/span.h"
#include "runtime/kernel/kernel_context.h"

namespace kiln {

/// A kernel. `args` are the operator's arguments in out-variant schema order, followed
/// by its return value(s): e.g. aten::add.out gets [self, other, alpha, out, out].
using OpFunction = void (*)(KernelContext& context, Span<EValue*> args);

struct Kernel {
  /// Full operator name with overload, e.g. "aten::add.out".
  const char* name;
  OpFunction function;
};

#ifndef KILN_MAX_KERNELS
/// Capacity of the registry; firmware builds may lower it.
#define KILN_MAX_KERNELS 512
#endif

/// Adds kernels. Fails with RegistrationAlreadyRegistered if a name is already present
/// (nothing from this call is added then) or RegistrationExceedingMax when full.
Error register_kernels(Span<const Kernel> kernels);

/// The kernel for `name` + "." + `overload` (overload may be empty: then `name` alone),
/// or nullptr.
OpFunction get_op_function(const char* name, const char* overload);

/// Registered kernels, in registration order.
Span<const Kernel> registered_kernels();

}  // namespace kiln
