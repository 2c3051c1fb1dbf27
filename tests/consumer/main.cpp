// Loads a .pte file, runs its "forward" method once with zero-filled inputs, and exits
// 0 on success. Every pool is sized from MethodMeta.
#include <cstdio>
#include <vector>

#include "kernels/portable/register_portable_kernels.h"
#include "runtime/executor/file_data_loader.h"
#include "runtime/executor/program.h"

namespace {

int fail(const char* what, kiln::Error error) {
  std::fprintf(stderr, "%s: %s\n", what, kiln::error_name(error));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s model.pte\n", argv[0]);
    return 2;
  }
  kiln::Error error = kiln::register_portable_kernels();
  if (error != kiln::Error::Ok) return fail("register kernels", error);

  auto loader = kiln::FileDataLoader::from(argv[1]);
  if (!loader.ok()) return fail("read program", loader.error());
  auto program = kiln::Program::load(&*loader);
  if (!program.ok()) return fail("load program", program.error());
  auto meta = program->method_meta("forward");
  if (!meta.ok()) return fail("method meta", meta.error());

  auto method_bytes = meta->method_allocator_size();
  if (!method_bytes.ok()) return fail("method allocator size", method_bytes.error());
  std::vector<uint8_t> method_pool(*method_bytes);
  kiln::MemoryAllocator method_allocator(method_pool.data(), method_pool.size());

  std::vector<std::vector<uint8_t>> planned(meta->num_memory_planned_buffers());
  std::vector<kiln::Span<uint8_t>> planned_spans;
  for (size_t i = 0; i < planned.size(); ++i) {
    auto size = meta->memory_planned_buffer_size(i);
    if (!size.ok()) return fail("planned buffer size", size.error());
    planned[i].resize(static_cast<size_t>(*size));
    planned_spans.emplace_back(planned[i].data(), planned[i].size());
  }
  kiln::HierarchicalAllocator planned_memory({planned_spans.data(), planned_spans.size()});
  std::vector<uint8_t> temp_pool(1 << 20);
  kiln::MemoryAllocator temp_allocator(temp_pool.data(), temp_pool.size());
  kiln::MemoryManager memory{&method_allocator, &planned_memory, &temp_allocator};

  auto method = program->load_method("forward", &memory);
  if (!method.ok()) return fail("load method", method.error());

  // Zero-filled inputs with the declared shapes; the storage lives until the end.
  struct InputStorage {
    std::vector<int32_t> sizes;
    std::vector<uint8_t> dim_order;
    std::vector<int32_t> strides;
    std::vector<uint8_t> data;
  };
  std::vector<InputStorage> inputs(method->inputs_size());
  std::vector<kiln::Tensor> tensors;
  tensors.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto info = meta->input_tensor_meta(i);
    if (!info.ok()) continue;  // non-tensor inputs keep their program values
    InputStorage& s = inputs[i];
    s.sizes.assign(info->sizes.begin(), info->sizes.end());
    s.dim_order.assign(info->dim_order.begin(), info->dim_order.end());
    s.strides.resize(s.sizes.size());
    s.data.assign(info->nbytes, 0);
    tensors.emplace_back(info->scalar_type, static_cast<int32_t>(s.sizes.size()), s.sizes.data(),
                         s.dim_order.data(), s.strides.data(), s.data.data());
    error = method->set_input(kiln::EValue(&tensors.back()), i);
    if (error != kiln::Error::Ok) return fail("set input", error);
  }
  error = method->execute();
  if (error != kiln::Error::Ok) return fail("execute", error);
  std::printf("ran forward: %zu inputs, %zu outputs\n", method->inputs_size(),
              method->outputs_size());
  return 0;
}
