// libFuzzer target: an XnnpackBackend delegate payload through the backend as a
// program's delegate call uses it — init (header, flatbuffer, ids, shapes, constants,
// XNNPACK's own checks), then execute with tensors of the sizes the graph declares for
// its inputs and outputs. Constants may come from named data: the key "w" holds 4 KiB.
//
// Input: the payload. Seeds: xnnpack_fuzz_seeds writes hand-built payloads
// (tests/cpp/xnnpack/xnnpack_payload_builder.h).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/xnnpack/runtime/delegate.h"
#include "backends/xnnpack/runtime/xnnpack_backend.h"
#include "kiln_xnnpack_schema/xnnpack_graph_generated.h"
#include "runtime/core/evalue.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/tensor.h"

namespace {

using namespace kiln;

/// Bytes of all of one call's tensors together; more is skipped.
constexpr uint64_t kMaxTensorBytes = uint64_t{4} << 20;
/// Bytes of all of a graph's values together; more and the call is skipped (init accepts up
/// to 2 GiB of non-constant values, above the fuzzer's RSS limit).
constexpr uint64_t kMaxGraphBytes = uint64_t{64} << 20;

class FixedNamedData final : public NamedDataMap {
 public:
  Result<Span<const uint8_t>> get(const char* key, size_t length) const override {
    static const std::vector<uint8_t> bytes(4096, 0x3c);
    if (length == 1 && key[0] == 'w') return Span<const uint8_t>(bytes.data(), bytes.size());
    return Error::NotFound;
  }
};

struct ByteTensor {
  SizesType size[1];
  DimOrderType order[1] = {0};
  StridesType stride[1];
  std::vector<uint8_t> data;
  Tensor tensor{ScalarType::Byte, 0, nullptr, nullptr, nullptr, nullptr};
  EValue value;
};

/// The bytes the graph declares for value `id` (0 if unknown or too big).
uint64_t value_bytes(const kiln_xnnpack::XNNGraph& graph, uint32_t id) {
  for (const kiln_xnnpack::XValue* v : *graph.xvalues()) {
    const kiln_xnnpack::XNNTensorValue* t = xnnpack::tensor_of(*v);
    if (t == nullptr || t->id_out() != id || t->dims() == nullptr) continue;
    const int type = static_cast<int>(t->datatype());
    uint64_t n = (type == 1 || type == 5 || type == 7) ? 4 : 1;
    for (uint32_t dim : *t->dims()) {
      n *= dim;
      if (n > kMaxTensorBytes) return 0;
    }
    return n;
  }
  return 0;
}

/// Bytes of every tensor value the graph declares (inputs, outputs, intermediates,
/// constants), saturating at 2^40.
uint64_t declared_bytes(const kiln_xnnpack::XNNGraph& graph) {
  uint64_t total = 0;
  for (const kiln_xnnpack::XValue* v : *graph.xvalues()) {
    const kiln_xnnpack::XNNTensorValue* t = xnnpack::tensor_of(*v);
    if (t == nullptr || t->dims() == nullptr) continue;
    uint64_t n = 4;
    for (uint32_t dim : *t->dims()) n = dim != 0 && n > (uint64_t{1} << 40) / dim ? uint64_t{1} << 40 : n * dim;
    total += n;
    if (total > (uint64_t{1} << 40)) return uint64_t{1} << 40;
  }
  return total;
}

/// The graph's inputs then outputs, sized as it declares them; false to skip the call
/// (also when running it would touch more than kMaxGraphBytes).
bool make_args(Span<const uint8_t> payload, std::vector<ByteTensor>& tensors) {
  // Where the flatbuffer is (init has checked the header: this is the same arithmetic).
  size_t offset = 0;
  size_t size = payload.size();
  if (payload.size() >= 30 && std::memcmp(payload.data() + 4, "XH00", 4) == 0) {
    offset = payload[10] | payload[11] << 8 | payload[12] << 16 | static_cast<size_t>(payload[13]) << 24;
    size = payload[14] | payload[15] << 8 | payload[16] << 16 | static_cast<size_t>(payload[17]) << 24;
  }
  // An aligned copy, as the backend reads it (the header's offset may be odd).
  std::vector<uint64_t> aligned((size + 7) / 8 + 1);
  std::memcpy(aligned.data(), payload.data() + offset, size);
  const auto* graph = flatbuffers::GetRoot<kiln_xnnpack::XNNGraph>(aligned.data());
  if (declared_bytes(*graph) > kMaxGraphBytes) return false;
  uint64_t total = 0;
  for (const auto* ids : {graph->input_ids(), graph->output_ids()}) {
    if (ids == nullptr) continue;
    for (uint32_t id : *ids) {
      const uint64_t bytes = value_bytes(*graph, id);
      total += bytes;
      if (bytes == 0 || total > kMaxTensorBytes) return false;
      tensors.emplace_back();
      tensors.back().data.assign(bytes, 0x11);
    }
  }
  for (ByteTensor& t : tensors) {
    t.size[0] = static_cast<SizesType>(t.data.size());
    t.tensor = Tensor(ScalarType::Byte, 1, t.size, t.order, t.stride, t.data.data());
    t.value = EValue(&t.tensor);
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Error registered = register_xnnpack_backend();
  if (registered != Error::Ok) return 0;
  static const XnnpackBackend backend;
  static const FixedNamedData named;
  std::vector<uint8_t> payload(data, data + size);  // aligned copy, the size ASan checks
  std::vector<uint8_t> pool(4096);
  MemoryAllocator allocator(pool.data(), pool.size());
  BackendInitContext init_context{&allocator, &named};
  Result<DelegateHandle*> handle = backend.init(init_context, {payload.data(), payload.size()}, {});
  if (!handle.ok()) return 0;
  std::vector<ByteTensor> tensors;
  tensors.reserve(64);
  if (make_args({payload.data(), payload.size()}, tensors)) {
    std::vector<EValue*> args;
    for (ByteTensor& t : tensors) args.push_back(&t.value);
    BackendExecuteContext execute_context{&allocator};
    // Hostile payloads fail to execute by design; only a crash is a finding.
    (void)backend.execute(execute_context, *handle, {args.data(), args.size()});
  }
  backend.destroy(*handle);
  return 0;
}
