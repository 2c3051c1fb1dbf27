// libFuzzer target: a .pte program through the whole runtime path a user's file takes —
// Program::load (full verification), MethodMeta, Method init in memory sized from the
// program, inputs filled from the fuzz input's bytes (so that kernels also see NaN, inf
// and extreme integers), execute with the portable kernels and the EthosUBackend on a
// virtual NPU with work limits. make_seeds.py writes real programs as seeds.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "backends/arm/runtime/ethos_u_backend.h"
#include "backends/arm/runtime/virtual_npu_driver.h"
#include "kernels/register_cpu_kernels.h"
#include "runtime/core/evalue.h"
#include "runtime/core/tensor.h"
#include "runtime/executor/buffer_data_loader.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "runtime/host/method_memory.h"
#include "tests/fuzz/fuzz_inputs.h"

namespace {

using namespace kiln;

/// Memory one input may make the host allocate (a program can declare anything; a real
/// runner would fail with MemoryAllocationFailed, which the unit tests cover).
constexpr size_t kMaxMethodBytes = size_t{16} << 20;
constexpr size_t kTempBytes = size_t{1} << 20;
constexpr size_t kMaxMethods = 4;

/// The method's inputs as tensors over bytes taken from the fuzz input, cyclically.
struct Inputs {
  std::vector<std::vector<SizesType>> sizes;
  std::vector<std::vector<DimOrderType>> dim_orders;
  std::vector<std::vector<StridesType>> strides;
  std::vector<std::vector<uint8_t>> data;
  std::vector<Tensor> tensors;
};

bool fits(const MethodMeta& meta) {
  Result<size_t> method_bytes = meta.method_allocator_size();
  if (!method_bytes.ok()) return false;
  size_t total = *method_bytes;
  for (size_t i = 0; i < meta.num_memory_planned_buffers(); ++i) {
    Result<int64_t> size = meta.memory_planned_buffer_size(i);
    if (!size.ok() || *size < 0 || static_cast<uint64_t>(*size) > kMaxMethodBytes) return false;
    total += static_cast<size_t>(*size);
  }
  return total <= kMaxMethodBytes;
}

/// False when an input cannot be given (the method then is not executed).
bool set_inputs(Method& method, const MethodMeta& meta, const uint8_t* bytes, size_t size,
                Inputs* inputs) {
  const size_t n = meta.num_inputs();
  inputs->tensors.reserve(n);
  size_t cursor = 0;
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    Result<Tag> tag = meta.input_tag(i);
    if (!tag.ok()) return false;
    if (*tag != Tag::Tensor) continue;  // scalars keep the program's value
    Result<TensorInfo> info = meta.input_tensor_meta(i);
    if (!info.ok()) return false;
    total += info->nbytes;
    if (total > kMaxMethodBytes) return false;
    inputs->sizes.emplace_back(info->sizes.begin(), info->sizes.end());
    inputs->dim_orders.emplace_back(info->dim_order.begin(), info->dim_order.end());
    inputs->strides.emplace_back(info->sizes.size());
    std::vector<uint8_t> data(info->nbytes);
    for (uint8_t& byte : data) byte = size > 0 ? bytes[cursor++ % size] : 0;
    // Bool tensors hold only 0 and 1 (reading another byte as bool is undefined).
    if (info->scalar_type == ScalarType::Bool) {
      for (uint8_t& byte : data) byte &= 1;
    }
    inputs->data.push_back(std::move(data));
    inputs->tensors.emplace_back(info->scalar_type, static_cast<int32_t>(info->sizes.size()),
                                 inputs->sizes.back().data(), inputs->dim_orders.back().data(),
                                 inputs->strides.back().data(), inputs->data.back().data());
    if (method.set_input(EValue(&inputs->tensors.back()), i) != Error::Ok) return false;
  }
  return true;
}

/// Unplanned outputs need memory from the caller.
bool set_outputs(Method& method, const MethodMeta& meta, std::vector<std::vector<uint8_t>>* storage) {
  for (size_t i = 0; i < meta.num_outputs(); ++i) {
    Result<Tag> tag = meta.output_tag(i);
    if (!tag.ok()) return false;
    if (*tag != Tag::Tensor) continue;
    Result<TensorInfo> info = meta.output_tensor_meta(i);
    if (!info.ok() || info->nbytes > kMaxMethodBytes) return false;
    if (info->is_memory_planned) continue;
    storage->emplace_back(std::max<size_t>(info->nbytes, 1));
    if (method.set_output_data_ptr(storage->back().data(), info->nbytes, i) != Error::Ok) {
      return false;
    }
  }
  return true;
}

void run_method(const Program& program, const char* name, const uint8_t* data, size_t size) {
  Result<MethodMeta> meta = program.method_meta(name);
  if (!meta.ok() || !fits(*meta)) return;
  Result<std::unique_ptr<host::MethodMemory>> memory = host::MethodMemory::allocate(*meta, kTempBytes);
  if (!memory.ok()) return;
  Result<Method> method = program.load_method(name, (*memory)->manager());
  if (!method.ok()) return;
  Inputs inputs;
  std::vector<std::vector<uint8_t>> outputs;
  if (!set_inputs(*method, *meta, data, size, &inputs) || !set_outputs(*method, *meta, &outputs)) {
    return;
  }
  // Hostile programs fail to execute by design; only a crash is a finding.
  (void)method->execute();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quiet_log();
  // A fuzzer without its kernels or backend would test nothing: stop loudly.
  if (register_cpu_kernels() != Error::Ok) fuzz::stop("registering the CPU kernels");
  static std::vector<uint8_t> work(fuzz::kWorkMemoryBytes);
  static ethos_u::VirtualNpuDriver driver({work.data(), work.size()},
                                          fuzz::limited_config("ethos-u55-128"));
  if (ethos_u::register_ethos_u_backend(&driver) != Error::Ok) fuzz::stop("registering the EthosUBackend");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A private aligned copy, as a file loaded into memory would be.
  std::vector<std::max_align_t> storage(size / sizeof(std::max_align_t) + 1);
  std::memcpy(storage.data(), data, size);
  BufferDataLoader loader(storage.data(), size);
  Result<Program> program = Program::load(&loader, Program::Verification::Full);
  if (!program.ok()) return 0;
  for (size_t i = 0; i < program->num_methods() && i < kMaxMethods; ++i) {
    Result<const char*> name = program->get_method_name(i);
    if (name.ok()) run_method(*program, *name, data, size);
  }
  return 0;
}
