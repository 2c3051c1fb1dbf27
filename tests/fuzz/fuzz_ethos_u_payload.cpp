// libFuzzer target: an EthosUBackend delegate payload through the backend as a program's
// delegate call uses it — method_allocator_size, init (which parses and checks the
// payload), then execute on the virtual NPU with tensors shaped like the payload's inputs
// and outputs.
//
// Input: one byte — the target index in its low nibble (fuzz_inputs.h), 0x10 for compile
// spec io_layout=nhwc (what Kiln writes), 0x20 for a Dedicated_Sram_384KB memory mode (a
// fast scratch region) — then the payload. make_seeds.py writes the delegates of real
// programs in this form.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/arm/runtime/ethos_u_backend.h"
#include "backends/arm/runtime/payload_parser.h"
#include "backends/arm/runtime/virtual_npu_driver.h"
#include "runtime/core/evalue.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/tensor.h"
#include "tests/fuzz/fuzz_inputs.h"

namespace {

using namespace kiln;

/// The method allocator a fuzz input may ask for; more is skipped (a real allocator of
/// that size would fail with DelegateMemoryAllocationFailed, already tested).
constexpr size_t kMaxMethodBytes = size_t{4} << 20;
/// Bytes of all of one call's tensors together.
constexpr uint64_t kMaxTensorBytes = uint64_t{4} << 20;

/// A contiguous tensor shaped like a payload input/output.
struct IoTensor {
  SizesType sizes[ethos_u::kPayloadIoDims];
  DimOrderType dim_order[ethos_u::kPayloadIoDims] = {0, 1, 2, 3, 4, 5};
  StridesType strides[ethos_u::kPayloadIoDims];
  std::vector<uint8_t> data;
  Tensor tensor{ScalarType::Char, 0, nullptr, nullptr, nullptr, nullptr};
  EValue value;

  IoTensor(const ethos_u::PayloadIo& io, uint8_t fill) {
    const ScalarType type = io.element_size == 4   ? ScalarType::Int
                            : io.element_size == 2 ? ScalarType::Short
                                                   : ScalarType::Char;
    for (size_t d = 0; d < ethos_u::kPayloadIoDims; ++d) sizes[d] = io.shape[d];
    data.assign(static_cast<size_t>(io.numel()) * element_size(type), fill);
    tensor = Tensor(type, static_cast<int32_t>(ethos_u::kPayloadIoDims), sizes, dim_order, strides,
                    data.data());
    value = EValue(&tensor);
  }
};

const ethos_u::EthosUBackend& backend() {
  static std::vector<uint8_t> work(fuzz::kWorkMemoryBytes);
  static ethos_u::VirtualNpuDriver driver({work.data(), work.size()},
                                          fuzz::limited_config("ethos-u55-128"));
  static const ethos_u::EthosUBackend instance(&driver);
  return instance;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kiln::fuzz::quiet_log();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t flags = data[0];
  // The payload must be 16-byte aligned, as it is in a program.
  std::vector<uint64_t> aligned((size - 1 + 15) / 8 + 1);
  std::memcpy(aligned.data(), data + 1, size - 1);
  const Span<const uint8_t> payload(reinterpret_cast<const uint8_t*>(aligned.data()), size - 1);

  const char* target = fuzz::target_of(flags);
  static const char kMemoryMode[] = "--memory-mode=Dedicated_Sram_384KB";
  CompileSpec specs[3];
  size_t num_specs = 0;
  specs[num_specs++] = {"target", 6, reinterpret_cast<const uint8_t*>(target), std::strlen(target)};
  if (flags & 0x10) specs[num_specs++] = {"io_layout", 9, reinterpret_cast<const uint8_t*>("nhwc"), 4};
  if (flags & 0x20) {
    specs[num_specs++] = {"compile_flags", 13, reinterpret_cast<const uint8_t*>(kMemoryMode),
                          sizeof(kMemoryMode) - 1};
  }
  const Span<const CompileSpec> spec_span(specs, num_specs);

  const size_t method_bytes = backend().method_allocator_size(payload, spec_span);
  if (method_bytes > kMaxMethodBytes) return 0;
  std::vector<uint8_t> pool(method_bytes);
  MemoryAllocator allocator(pool.data(), pool.size());
  BackendInitContext init_context{&allocator};
  Result<DelegateHandle*> handle = backend().init(init_context, payload, spec_span);
  if (!handle.ok()) return 0;

  // Parsed again only to shape the call's tensors; init accepted the payload.
  Result<ethos_u::Payload> parsed = ethos_u::parse_payload(payload);
  if (parsed.ok()) {
    uint64_t total = 0;
    for (size_t i = 0; i < parsed->num_inputs; ++i) total += parsed->input(i).nbytes();
    for (size_t i = 0; i < parsed->num_outputs; ++i) total += parsed->output(i).nbytes();
    if (total <= kMaxTensorBytes) {
      std::vector<IoTensor> tensors;
      tensors.reserve(parsed->num_inputs + parsed->num_outputs);
      for (size_t i = 0; i < parsed->num_inputs; ++i) tensors.emplace_back(parsed->input(i), flags);
      for (size_t i = 0; i < parsed->num_outputs; ++i) tensors.emplace_back(parsed->output(i), 0);
      std::vector<EValue*> args;
      for (IoTensor& t : tensors) args.push_back(&t.value);
      BackendExecuteContext execute_context{nullptr};
      // Hostile payloads fail to execute by design; only a crash is a finding.
      (void)backend().execute(execute_context, *handle, {args.data(), args.size()});
    }
  }
  backend().destroy(*handle);
  return 0;
}
