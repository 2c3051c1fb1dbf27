#include "tests/cpp/kernels/cortex_m/kernel_call.h"

#include "kernels/cortex_m/register_cortex_m_kernels.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/kernel/kernel_context.h"
#include "runtime/kernel/operator_registry.h"
#include "runtime/platform/log.h"

namespace kiln_test {

OwnedTensor::OwnedTensor(kiln::ScalarType type, std::vector<int32_t> sizes_in, std::vector<uint8_t> order)
    : sizes(std::move(sizes_in)), dim_order(std::move(order)) {
  if (dim_order.empty()) {
    for (size_t i = 0; i < sizes.size(); ++i) dim_order.push_back(static_cast<uint8_t>(i));
  }
  strides.resize(sizes.size());
  size_t numel = 1;
  for (int32_t s : sizes) numel *= static_cast<size_t>(s);
  // Exactly the tensor's bytes (at least one), so that AddressSanitizer sees any read past them.
  bytes.assign(numel == 0 ? 1 : numel * kiln::element_size(type), 0);
  tensor = std::make_unique<kiln::Tensor>(type, static_cast<int32_t>(sizes.size()), sizes.data(), dim_order.data(),
                                          strides.data(), bytes.data());
}

OwnedTensor channels_last_int8(int32_t n, int32_t c, int32_t h, int32_t w) {
  return OwnedTensor(kiln::ScalarType::Char, {n, c, h, w}, {0, 2, 3, 1});
}

OwnedTensor int8_tensor(std::vector<int32_t> sizes) { return OwnedTensor(kiln::ScalarType::Char, std::move(sizes)); }

OwnedTensor int32_tensor(size_t count, int32_t value) {
  OwnedTensor t(kiln::ScalarType::Int, {static_cast<int32_t>(count)});
  for (size_t i = 0; i < count; ++i) t.data<int32_t>()[i] = value;
  return t;
}

KernelCall& KernelCall::tensor(OwnedTensor& t) {
  values_.emplace_back(t.tensor.get());
  last_tensor_ = t.tensor.get();
  return *this;
}
KernelCall& KernelCall::none() {
  values_.emplace_back();
  return *this;
}
KernelCall& KernelCall::integer(int64_t v) {
  values_.emplace_back(v);
  return *this;
}
KernelCall& KernelCall::real(double v) {
  values_.emplace_back(v);
  return *this;
}
KernelCall& KernelCall::boolean(bool v) {
  values_.emplace_back(v);
  return *this;
}
KernelCall& KernelCall::list(std::vector<int64_t> values) {
  values_.push_back(make_list(std::move(values)));
  return *this;
}
KernelCall& KernelCall::set_integer(size_t index, int64_t v) {
  values_.at(index) = kiln::EValue(v);
  return *this;
}
KernelCall& KernelCall::set_list(size_t index, std::vector<int64_t> values) {
  values_.at(index) = make_list(std::move(values));
  return *this;
}
KernelCall& KernelCall::set_tensor(size_t index, OwnedTensor& t) {
  values_.at(index) = kiln::EValue(t.tensor.get());
  if (index + 1 == values_.size()) last_tensor_ = t.tensor.get();
  return *this;
}

kiln::EValue KernelCall::make_list(std::vector<int64_t> values) {
  lists_.emplace_back();
  List& list = lists_.back();
  for (int64_t v : values) list.items.emplace_back(v);
  for (kiln::EValue& item : list.items) list.pointers.push_back(&item);
  list.scratch.resize(values.size() + 1);
  return kiln::EValue::int_list({list.pointers.data(), list.scratch.data(), values.size()});
}

namespace {
void capture(kiln::LogLevel, const char* message, size_t length, void* user) {
  std::string& log = *static_cast<std::string*>(user);
  log.append(message, length);
  log.push_back('\n');
}
}  // namespace

KernelOutcome KernelCall::run(const char* op, size_t temp_bytes) {
  static const kiln::Error registered = kiln::register_cortex_m_kernels();  // once per process
  KernelOutcome outcome;
  if (registered != kiln::Error::Ok && registered != kiln::Error::RegistrationAlreadyRegistered) {
    outcome.error = registered;
    return outcome;
  }
  const kiln::OpFunction kernel = kiln::get_op_function(op, "out");
  if (kernel == nullptr) {
    outcome.error = kiln::Error::OperatorMissing;
    return outcome;
  }
  std::vector<kiln::EValue> args = values_;
  args.emplace_back(last_tensor_);
  std::vector<kiln::EValue*> pointers;
  for (kiln::EValue& v : args) pointers.push_back(&v);
  std::vector<uint8_t> temp(temp_bytes + 1);
  kiln::MemoryAllocator allocator(temp.data(), temp_bytes);
  kiln::KernelContext context(&allocator);
  kiln::set_log_sink(capture, &outcome.log);
  kernel(context, {pointers.data(), pointers.size()});
  kiln::set_log_sink(nullptr, nullptr);
  outcome.error = context.failure_state();
  return outcome;
}

}  // namespace kiln_test
