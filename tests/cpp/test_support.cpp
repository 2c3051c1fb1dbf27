#include "test_support.h"

#include "runtime/kernel/operator_registry.h"

namespace kiln_test {
namespace {

using kiln::EValue;
using kiln::Error;
using kiln::KernelContext;
using kiln::ScalarType;
using kiln::Span;
using kiln::Tensor;

bool float_tensor(const EValue* v) {
  return v->is_tensor() && v->to_tensor().scalar_type() == ScalarType::Float;
}

void add_out(KernelContext& context, Span<EValue*> args) {
  if (args.size() != 5 || !float_tensor(args[0]) || !float_tensor(args[1]) || !args[2]->is_int() ||
      !float_tensor(args[3])) {
    context.fail(Error::InvalidArgument);
    return;
  }
  const Tensor& a = args[0]->to_tensor();
  const Tensor& b = args[1]->to_tensor();
  Tensor& out = args[3]->to_tensor();
  if (a.numel() != out.numel() || b.numel() != out.numel()) {
    context.fail(Error::InvalidArgument);
    return;
  }
  const float alpha = static_cast<float>(args[2]->to_int());
  for (size_t i = 0; i < out.numel(); ++i) {
    out.mutable_data_ptr<float>()[i] = a.const_data_ptr<float>()[i] + alpha * b.const_data_ptr<float>()[i];
  }
}

void fail_out(KernelContext& context, Span<EValue*>) { context.fail(Error::NotSupported); }

void sum_ints_out(KernelContext& context, Span<EValue*> args) {
  if (args.size() < 2 || !args[0]->is_int_list() || !args[1]->is_tensor() ||
      args[1]->to_tensor().scalar_type() != ScalarType::Long || args[1]->to_tensor().numel() < 1) {
    context.fail(Error::InvalidArgument);
    return;
  }
  int64_t sum = 0;
  for (int64_t v : args[0]->to_int_list()) sum += v;
  args[1]->to_tensor().mutable_data_ptr<int64_t>()[0] = sum;
}

void scratch_out(KernelContext& context, Span<EValue*>) {
  void* scratch = context.allocate_temp(64);
  if (scratch == nullptr) {
    context.fail(Error::MemoryAllocationFailed);
    return;
  }
  static_cast<uint8_t*>(scratch)[63] = 1;
}

void copy_in_place(KernelContext& context, Span<EValue*> args) {
  if (args.size() != 4 || !float_tensor(args[0]) || !float_tensor(args[1]) ||
      args[0]->to_tensor().numel() != args[1]->to_tensor().numel()) {
    context.fail(Error::InvalidArgument);
    return;
  }
  Tensor& self = args[0]->to_tensor();
  for (size_t i = 0; i < self.numel(); ++i) {
    self.mutable_data_ptr<float>()[i] = args[1]->to_tensor().const_data_ptr<float>()[i];
  }
}

const kiln::Kernel kTestKernels[] = {
    {"test::add.out", add_out},
    {"test::fail.out", fail_out},
    {"test::sum_ints.out", sum_ints_out},
    {"test::scratch.out", scratch_out},
};

}  // namespace

std::vector<uint8_t> identity_order(size_t n) {
  std::vector<uint8_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint8_t>(i);
  return order;
}

void register_test_kernels() {
  static const Error registered = kiln::register_kernels(kTestKernels);
  (void)registered;
}

void register_state_write_back_kernel() {
  static const kiln::Kernel kernels[] = {{"aten::copy_", copy_in_place}};
  static const Error registered = kiln::register_kernels(kernels);
  (void)registered;
}

Harness::Harness(std::vector<uint8_t> bytes)
    : bytes_(std::move(bytes)), loader_(bytes_.data(), bytes_.size()) {}

kiln::Error Harness::load_program(kiln::Program::Verification v) {
  auto program = kiln::Program::load(&loader_, v);
  if (!program.ok()) return program.error();
  program_.emplace(std::move(*program));
  return Error::Ok;
}

kiln::Error Harness::load_method(const char* name, size_t method_pool_bytes, size_t planned_shrink,
                                 size_t temp_bytes) {
  auto meta = program_->method_meta(name);
  if (!meta.ok()) return meta.error();
  if (method_pool_bytes == SIZE_MAX) {
    auto size = meta->method_allocator_size();
    if (!size.ok()) return size.error();
    method_pool_bytes = *size + extra_method_bytes;
  }
  method_pool_.assign(method_pool_bytes, 0);
  method_allocator_.emplace(method_pool_.data(), method_pool_.size());
  planned_storage_.clear();
  planned_spans_.clear();
  for (size_t i = 0; i < meta->num_memory_planned_buffers(); ++i) {
    auto size = meta->memory_planned_buffer_size(i);
    if (!size.ok()) return size.error();
    const size_t bytes = static_cast<size_t>(*size);
    planned_storage_.emplace_back(bytes > planned_shrink ? bytes - planned_shrink : 0, planned_fill);
  }
  for (auto& storage : planned_storage_) planned_spans_.emplace_back(storage.data(), storage.size());
  planned_.emplace(kiln::Span<kiln::Span<uint8_t>>(planned_spans_.data(), planned_spans_.size()));
  temp_pool_.assign(temp_bytes, 0);
  temp_allocator_.emplace(temp_pool_.data(), temp_pool_.size());
  memory_manager_ = {&*method_allocator_, &*planned_, &*temp_allocator_};
  method_.reset();
  auto method = program_->load_method(name, &memory_manager_);
  if (!method.ok()) return method.error();
  method_.emplace(std::move(*method));
  return Error::Ok;
}

FloatTensor::FloatTensor(std::vector<int32_t> sizes_in, std::vector<float> data_in)
    : sizes(std::move(sizes_in)),
      dim_order(identity_order(sizes.size())),
      strides(sizes.size()),
      data(std::move(data_in)),
      tensor(ScalarType::Float, static_cast<int32_t>(sizes.size()), sizes.data(), dim_order.data(),
             strides.data(), data.data()) {}

}  // namespace kiln_test
