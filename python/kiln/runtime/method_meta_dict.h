// A method's metadata (inputs, outputs, planned buffers, operators, allocator size) as a
// Python dict, for kiln/runtime/meta.py.
#pragma once

#include <nanobind/nanobind.h>

#include "runtime/executor/method_meta.h"

namespace kiln::python {

/// Raises KilnRuntimeError if the program's metadata cannot be read.
nanobind::dict describe_meta(const MethodMeta& meta);

}  // namespace kiln::python
