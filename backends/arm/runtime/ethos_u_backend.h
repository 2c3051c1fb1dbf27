// EthosUBackend: the delegate that runs Vela-compiled subgraphs on an Ethos-U NPU.
//
// Init parses the payload (payload_parser.h; the format of ExecuTorch's Arm backend, so
// .pte files from both tools run), takes the scratch arena from the method allocator and
// checks every input/output against it. Execute copies the delegate call's input tensors
// into the NPU's regions (permuting NCHW <-> NHWC on the CPU when the program's layout and
// the NPU's differ), runs the command stream through the NpuDriver and copies the outputs
// back. Nothing is allocated while executing.
//
// Threads: the backend keeps no mutable state of its own. What the NPU did in a call (its
// counters) is kept per delegate instance, in the delegate's state in the method
// allocator, so methods executed on different threads never mix their counters. The
// driver is the one shared resource (one NPU): it serializes invocations when several
// threads can call it (npu_driver.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/arm/runtime/npu_driver.h"
#include "runtime/backend/backend_interface.h"
#include "runtime/executor/method.h"

namespace kiln::ethos_u {

/// The backend id programs name in their delegate table.
constexpr char kEthosUBackendName[] = "EthosUBackend";

class EthosUBackend final : public BackendInterface {
 public:
  /// `driver` runs the command streams and must outlive the backend.
  explicit EthosUBackend(NpuDriver* driver) : driver_(driver) {}

  /// True when the driver's NPU is present.
  bool is_available() const override;

  /// Errors: the payload's (DelegatePayload*), DelegatePayloadBadIo for an input/output
  /// outside its region or in a region the delegate does not bind (only 1, scratch, and
  /// 2, fast scratch, hold tensors), DelegatePayloadMisaligned for command or weight data
  /// the NPU cannot address, DelegateMemoryAllocationFailed when the method allocator
  /// cannot hold the scratch arena (MethodMeta::method_allocator_size() counts it).
  Result<DelegateHandle*> init(BackendInitContext& context, Span<const uint8_t> processed,
                               Span<const CompileSpec> compile_specs) const override;

  /// `args`: the payload's inputs, then its outputs, all tensors. Errors:
  /// DelegatePayloadIoMismatch (count, dtype vs element size, element count or a layout
  /// the delegate cannot map), DelegateInvalidHandle, or the driver's error.
  Error execute(BackendExecuteContext& context, DelegateHandle* handle,
                Span<EValue*> args) const override;

  /// The handle, the scratch arena and the fast scratch, with alignment padding.
  size_t method_allocator_size(Span<const uint8_t> processed,
                               Span<const CompileSpec> compile_specs) const override;

  /// What the NPU did in the most recent execute of the delegate `handle` (one this
  /// backend's init returned); all zero before its first execute. DelegateInvalidHandle
  /// for a null handle.
  Result<NpuCounters> last_counters(const DelegateHandle* handle) const;

  /// True once the delegate `handle` has executed (successfully or not).
  bool has_executed(const DelegateHandle* handle) const;

 private:
  NpuDriver* driver_;
};

/// Registers the EthosUBackend, running on `driver` (which must live as long as the
/// process), under "EthosUBackend". Call once, before loading programs.
/// InvalidArgument for a null driver, RegistrationAlreadyRegistered on a second call.
Error register_ethos_u_backend(NpuDriver* driver);

/// The registered backend, or nullptr before register_ethos_u_backend().
const EthosUBackend* registered_ethos_u_backend();

/// What the NPU did in `method`'s most recent execute: the counters of each of its
/// EthosUBackend delegates' latest call, added up. `delegates_run` (may be null) gets the
/// number of those delegates that have executed. All zero for a method without them.
/// Errors: Method::get_delegate's.
Result<NpuCounters> method_npu_counters(const Method& method, size_t* delegates_run);

}  // namespace kiln::ethos_u
