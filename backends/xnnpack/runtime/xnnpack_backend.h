// XnnpackBackend: runs ExecuTorch's XNNPACK-delegated subgraphs (the XNNGraph payload of
// backends/xnnpack/serialization/xnnpack_graph.fbs) with the XNNPACK library on the host.
// Registered explicitly, like EthosUBackend: kiln-run and the Python extension call
// register_xnnpack_backend(); the firmware never links it.
#pragma once

#include <cstddef>

#include "runtime/backend/backend_interface.h"

namespace kiln {

class XnnpackBackend final : public BackendInterface {
 public:
  bool is_available() const override;
  /// Parses the payload and builds the XNNPACK runtimes (XNNPACK packs the weights on
  /// its own heap here). Errors, each logged with the node or value and the numbers:
  /// DelegatePayloadTruncated / DelegatePayloadBadBlock (header, flatbuffer),
  /// DelegatePayloadBadIo (an undefined or duplicate value id, bad quantization),
  /// DelegatePayloadBadSize (a constant outside its data, or smaller than its shape),
  /// NotSupported (a node, datatype or quantization this XNNPACK version lacks),
  /// DelegateInvalidCompatibility (XNNPACK refuses a node's shapes or parameters),
  /// NotFound (named data missing), MemoryAllocationFailed.
  Result<DelegateHandle*> init(BackendInitContext& context, Span<const uint8_t> processed,
                               Span<const CompileSpec> compile_specs) const override;
  /// `args`: the payload's inputs, then its outputs (tensors of the payload's sizes;
  /// DelegatePayloadIoMismatch otherwise). Allocates nothing.
  Error execute(BackendExecuteContext& context, DelegateHandle* handle,
                Span<EValue*> args) const override;
  void destroy(DelegateHandle* handle) const override;
};

/// Initializes XNNPACK and registers XnnpackBackend under "XnnpackBackend". Internal if
/// XNNPACK cannot initialize on this CPU; the registry's errors otherwise.
Error register_xnnpack_backend();

/// Threads for delegates initialized from now on (1: the calling thread only; default 1).
/// InvalidArgument for 0.
Error set_xnnpack_threads(size_t threads);
size_t xnnpack_threads();

}  // namespace kiln
