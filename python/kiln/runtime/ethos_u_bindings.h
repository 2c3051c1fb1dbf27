// The EthosUBackend's part of kiln._runtime (ethos_u_bindings.cpp).
#pragma once

#include <nanobind/nanobind.h>

#include "runtime/executor/method.h"

namespace kiln::python {

/// Registers the EthosUBackend on the process's virtual NPU (so that delegated programs
/// run) and the module's ethos_u_* functions.
void register_ethos_u_bindings(nanobind::module_& m);

/// Keeps `method`'s NPU counters (its last execute) as the calling thread's latest, what
/// kiln._runtime.ethos_u_counters() returns on that thread.
void remember_npu_counters(const Method& method);

/// `method`'s NPU counters as a dict, with "delegate_calls".
nanobind::dict method_npu_counters_dict(const Method& method);

}  // namespace kiln::python
