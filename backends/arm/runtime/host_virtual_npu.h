// The virtual Ethos-U of a host process (kiln-run, the Python runtime, host tests): one
// VirtualNpuDriver with its work memory, shared by every delegate of every method.
//
// One NPU, serialized: the work memory (the NPU's internal memory image and its weight
// decode scratch, ~12 MiB) is the NPU's state, as SHRAM is on hardware, so invocations
// from several threads (Python releases the GIL while executing) take turns on a mutex,
// as they would on a real NPU. Per-delegate copies of that memory would let delegates run
// in parallel on a host but cost 12 MiB per delegate: wrong for firmware, whose one NPU
// and tight memory this model stands for. Everything per call (regions, counters) is per
// delegate instance already (ethos_u_backend.h). Hosts only (std::mutex).
#pragma once

#include <mutex>

#include "backends/arm/runtime/virtual_npu_driver.h"
#include "runtime/core/error.h"

namespace kiln::ethos_u {

/// Registers the EthosUBackend on the process's virtual NPU (a static work memory,
/// invocations serialized). kiln-run and the Python runtime call this once.
/// RegistrationAlreadyRegistered if an EthosUBackend is registered already.
Error register_ethos_u_backend_with_virtual_npu();

/// The process's virtual NPU driver (for per-operation records in benchmarks). Hold
/// host_virtual_npu_mutex() while calling set_op_records() or reading the records.
VirtualNpuDriver& host_virtual_npu_driver();

/// The mutex every invocation of the process's virtual NPU holds.
std::mutex& host_virtual_npu_mutex();

}  // namespace kiln::ethos_u
