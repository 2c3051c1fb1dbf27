// Method init, the delegates: each one's backend found and available, its blob and
// compile specs handed to the backend's init.
#include <cinttypes>

#include "kiln_schema/program_generated.h"
#include "runtime/backend/backend_interface.h"
#include "runtime/executor/flatbuffer_vectors.h"
#include "runtime/executor/method_init_state.h"
#include "runtime/executor/program.h"
#include "runtime/platform/log.h"

namespace kiln {
namespace internal {

using flatbuffers::uoffset_t;

namespace {

/// The program's named data, as backends see it during init.
class ProgramNamedData final : public NamedDataMap {
 public:
  explicit ProgramNamedData(const Program& program) : program_(program) {}
  Result<Span<const uint8_t>> get(const char* key, size_t key_length) const override {
    return program_.named_data(key, key_length);
  }

 private:
  const Program& program_;
};

}  // namespace

Result<Span<const uint8_t>> delegate_blob(const Program& program,
                                          const kiln_pte::BackendDelegate& delegate, size_t index) {
  const kiln_pte::BackendDelegateDataReference* processed = delegate.processed();
  if (processed == nullptr) {
    KILN_LOG(Error, "delegate %zu has no processed data reference", index);
    return Error::InvalidProgram;
  }
  if (processed->location() == kiln_pte::DataLocation::INLINE) {
    const auto* inline_data = program.flatbuffer()->backend_delegate_data();
    if (processed->index() >= length(inline_data)) {
      KILN_LOG(Error, "delegate %zu uses inline data %" PRIu32 "; the program has %zu", index,
               processed->index(), length(inline_data));
      return Error::ProgramIndexOutOfRange;
    }
    const auto* data = inline_data->Get(processed->index())->data();
    return Span<const uint8_t>(data != nullptr ? data->data() : nullptr, length(data));
  }
  if (processed->location() == kiln_pte::DataLocation::SEGMENT) {
    Result<Span<const uint8_t>> blob = program.segment_data(processed->index());
    if (!blob.ok()) KILN_LOG(Error, "delegate %zu: its segment is not usable", index);
    return blob;
  }
  KILN_LOG(Error, "delegate %zu: unknown data location %d", index,
           static_cast<int>(processed->location()));
  return Error::InvalidProgram;
}

Error init_delegates(InitState& s, MemoryAllocator& method_allocator, DelegateInstance* delegates,
                     size_t num_delegates, size_t* num_initialized) {
  for (size_t k = 0; k < num_delegates; ++k) {
    const kiln_pte::BackendDelegate* delegate = s.plan->delegates()->Get(static_cast<uoffset_t>(k));
    if (delegate->id() == nullptr) {
      KILN_LOG(Error, "delegate %zu has no backend id", k);
      return Error::InvalidProgram;
    }
    const BackendInterface* backend = get_backend(delegate->id()->c_str(), delegate->id()->size());
    if (backend == nullptr) {
      KILN_LOG(Error, "backend %s is not registered (program needs it for delegate %zu)",
               delegate->id()->c_str(), k);
      return Error::NotFound;
    }
    if (!backend->is_available()) {
      KILN_LOG(Error, "backend %s is registered but not available (delegate %zu)",
               delegate->id()->c_str(), k);
      return Error::NotSupported;
    }
    KILN_TRY_ASSIGN(const Span<const uint8_t> blob,
                    delegate_blob(*s.program, *delegate, k));
    const auto* specs = delegate->compile_specs();
    const size_t num_specs = length(specs);
    CompileSpec* compile_specs = s.compile_specs.take<CompileSpec>(num_specs);
    if (num_specs > 0 && compile_specs == nullptr) return out_of_space("compile specs");
    for (size_t j = 0; j < num_specs; ++j) {
      const kiln_pte::CompileSpec* spec = specs->Get(static_cast<uoffset_t>(j));
      compile_specs[j] = {spec->key() != nullptr ? spec->key()->c_str() : "",
                          spec->key() != nullptr ? spec->key()->size() : 0,
                          spec->value() != nullptr ? spec->value()->data() : nullptr,
                          length(spec->value())};
    }
    const ProgramNamedData named_data(*s.program);
    BackendInitContext context{&method_allocator, &named_data};
    Result<DelegateHandle*> handle = backend->init(context, blob, {compile_specs, num_specs});
    if (!handle.ok()) {
      KILN_LOG(Error, "backend %s failed to initialize delegate %zu: %s", delegate->id()->c_str(),
               k, error_name(handle.error()));
      return handle.error();
    }
    delegates[k] = {backend, *handle, delegate->id()->c_str()};
    *num_initialized = k + 1;
  }
  return Error::Ok;
}

}  // namespace internal
}  // namespace kiln
