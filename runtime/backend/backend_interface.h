// Backends (delegates): code that runs a lowered subgraph, e.g. the Ethos-U NPU.
//
// A backend receives its processed blob and compile specs at init, returns an opaque
// handle, and is called with the delegate call's arguments at execute.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/evalue.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace kiln {

class EventTracer;

/// One compile spec: a key and opaque bytes.
struct CompileSpec {
  const char* key;
  size_t key_length;
  const uint8_t* value;
  size_t value_length;
};

/// A backend's per-delegate state.
using DelegateHandle = void;

/// The program's named data: blobs a backend finds by key (for example the weights an
/// XNNPACK payload refers to by name rather than carrying them itself).
class NamedDataMap {
 public:
  virtual ~NamedDataMap() = default;
  /// The bytes stored under `key` (`key_length` chars, not NUL-terminated); valid as long
  /// as the program. NotFound (with a log line) for an unknown key, or the segment's error.
  virtual Result<Span<const uint8_t>> get(const char* key, size_t key_length) const = 0;
};

struct BackendInitContext {
  /// Allocator for the handle and anything that lives as long as the method.
  MemoryAllocator* method_allocator;
  /// The program's named data, during init only (the view itself is not kept; the bytes
  /// it returns live as long as the program). nullptr when there is none to offer.
  const NamedDataMap* named_data = nullptr;
};

struct BackendExecuteContext {
  /// Scratch memory, reset after the call.
  MemoryAllocator* temp_allocator;
  /// The method's event tracer (event_tracer.h), or nullptr: a backend that can tell
  /// its own operations apart logs them here (log_delegate_event, log_tensor_data).
  EventTracer* event_tracer = nullptr;
};

class BackendInterface {
 public:
  virtual ~BackendInterface() = default;
  /// False when the hardware (or its model) is not present.
  virtual bool is_available() const = 0;
  /// Parses `processed` (valid for the method's lifetime) and returns a handle.
  virtual Result<DelegateHandle*> init(BackendInitContext& context, Span<const uint8_t> processed,
                                       Span<const CompileSpec> compile_specs) const = 0;
  /// Runs the delegate: `args` are the delegate call's inputs followed by its outputs.
  virtual Error execute(BackendExecuteContext& context, DelegateHandle* handle,
                        Span<EValue*> args) const = 0;
  /// Releases what init acquired outside the method allocator.
  virtual void destroy(DelegateHandle* handle) const {}
  /// Bytes init takes from the method allocator for this blob, alignment padding
  /// included, so that MethodMeta::method_allocator_size() can size the allocator
  /// without running init. 0 when the backend allocates nothing there (or cannot read
  /// the blob: init then reports why).
  virtual size_t method_allocator_size(Span<const uint8_t> processed,
                                       Span<const CompileSpec> compile_specs) const {
    return 0;
  }
};

struct Backend {
  /// Name used in the program's delegate table, e.g. "EthosUBackend".
  const char* name;
  const BackendInterface* backend;
};

#ifndef KILN_MAX_BACKENDS
#define KILN_MAX_BACKENDS 8
#endif

/// Adds a backend (explicit, like kernel registration).
Error register_backend(const Backend& backend);

/// The backend registered under `name` (not NUL-terminated: `length` chars), or nullptr.
const BackendInterface* get_backend(const char* name, size_t length);

}  // namespace kiln
