// Python hook for the XnnpackBackend (bindings.cpp calls it at import).
#pragma once

#include <nanobind/nanobind.h>

namespace kiln::python {

/// Registers the XnnpackBackend when the extension is built with XNNPACK, and adds
/// xnnpack_available() and set_xnnpack_threads(n).
void register_xnnpack_bindings(nanobind::module_& m);

}  // namespace kiln::python
