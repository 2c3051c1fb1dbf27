#include "python/kiln/runtime/method_handle.h"

#include <chrono>
#include <cstring>

#include "python/kiln/runtime/dtypes.h"
#include "python/kiln/runtime/ethos_u_bindings.h"
#include "python/kiln/runtime/method_meta_dict.h"
#include "python/kiln/runtime/runtime_error.h"
#include "runtime/npy/dim_order_copy.h"
#include "runtime/platform/log.h"

namespace nb = nanobind;

namespace kiln::python {
namespace {

int64_t ns_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              start)
      .count();
}

/// Marks a method busy for one call; a concurrent call from another thread is refused
/// (the method's memory and inputs are not shareable between two runs at once).
class BusyGuard {
 public:
  BusyGuard(std::atomic<bool>& busy, const std::string& name) : busy_(busy) {
    if (busy_.exchange(true)) {
      KILN_LOG(Error, "method '%s' is executing on another thread; load one method per thread",
               name.c_str());
      raise(Error::InvalidState, "executing '" + name + "'");
    }
  }
  ~BusyGuard() { busy_.store(false); }
  BusyGuard(const BusyGuard&) = delete;
  BusyGuard& operator=(const BusyGuard&) = delete;

 private:
  std::atomic<bool>& busy_;
};

}  // namespace

MethodHandle::MethodHandle(const Program& program, const std::string& name, size_t temp_bytes,
                           int fill_planned)
    : name_(name) {
  const std::string context = "loading method '" + name + "'";
  const MethodMeta meta = take_or_raise(program.method_meta(name.c_str()), context);
  memory_ = take_or_raise(host::MethodMemory::allocate(meta, temp_bytes), context);
  if (fill_planned >= 0) memory_->fill_planned_buffers(static_cast<uint8_t>(fill_planned));
  const auto start = std::chrono::steady_clock::now();
  method_.emplace(take_or_raise(program.load_method(name.c_str(), memory_->manager()), context));
  init_ns_ = ns_since(start);
}

nb::list MethodHandle::execute(const nb::list& inputs) {
  BusyGuard guard(busy_, name_);
  set_inputs(inputs);
  run_once();
  return collect_outputs();
}

nb::tuple MethodHandle::execute_timed(const nb::list& inputs, int64_t iterations) {
  if (iterations < 1) {
    KILN_LOG(Error, "execute_timed needs at least one iteration, got %lld",
             static_cast<long long>(iterations));
    raise(Error::InvalidArgument, "timing '" + name_ + "'");
  }
  BusyGuard guard(busy_, name_);
  set_inputs(inputs);
  nb::list durations;
  for (int64_t i = 0; i < iterations; ++i) {
    // Memory planning may reuse an input's planned bytes for a later tensor, so each
    // run gets its inputs again (outside the timed part).
    if (i > 0) reapply_inputs();
    const auto start = std::chrono::steady_clock::now();
    run_once();
    durations.append(ns_since(start));
  }
  return nb::make_tuple(collect_outputs(), durations);
}

nb::dict MethodHandle::meta() const {
  nb::dict out = describe_meta(method_->method_meta());
  out["method_allocator_used"] = memory_->method_allocator().used();
  out["temp_allocator_size"] = memory_->temp_allocator().size();
  out["temp_allocator_peak"] = memory_->temp_allocator().peak();
  out["init_ns"] = init_ns_;
  return out;
}

nb::dict MethodHandle::npu_counters() const { return method_npu_counters_dict(*method_); }

void MethodHandle::set_inputs(const nb::list& inputs) {
  const MethodMeta meta = method_->method_meta();
  const size_t expected = meta.num_inputs();
  if (inputs.size() != expected) {
    KILN_LOG(Error, "%zu input(s) given; method '%s' takes %zu", inputs.size(), name_.c_str(),
             expected);
    raise(Error::InputCountMismatch, "setting the inputs of '" + name_ + "'");
  }
  // The method may point at these (unplanned inputs) until the next call; reserved so
  // that the tensors and their shape arrays never move.
  held_inputs_.clear();
  held_inputs_.reserve(expected);
  input_sizes_.assign(expected, {});
  input_dim_orders_.assign(expected, {});
  input_strides_.assign(expected, {});
  reordered_inputs_.assign(expected, {});
  input_tensors_.clear();
  input_tensors_.reserve(expected);
  input_values_.clear();
  for (size_t i = 0; i < expected; ++i) {
    const std::string context = "setting input " + std::to_string(i) + " of '" + name_ + "'";
    const nb::handle item = inputs[i];
    // bool before int: a Python bool is an int too.
    if (nb::isinstance<nb::bool_>(item)) {
      input_values_.emplace_back(nb::cast<bool>(item));
    } else if (nb::isinstance<nb::int_>(item)) {
      int64_t value = 0;
      if (!nb::try_cast(item, value)) {
        KILN_LOG(Error, "input %zu: the int does not fit in 64 bits", i);
        raise(Error::InvalidArgument, context);
      }
      input_values_.emplace_back(value);
    } else if (nb::isinstance<nb::float_>(item)) {
      input_values_.emplace_back(nb::cast<double>(item));
    } else {
      InputArray array;
      if (!nb::try_cast(item, array)) {
        KILN_LOG(Error, "input %zu is a %s, not a C-contiguous CPU array or a number", i,
                 nb::type_name(item.type()).c_str());
        raise(Error::InvalidType, context);
      }
      input_values_.push_back(tensor_input(array, i, context));
    }
    check(method_->set_input(input_values_.back(), i), context);
  }
}

EValue MethodHandle::tensor_input(const InputArray& array, size_t i, const std::string& context) {
  const std::optional<ScalarType> type = scalar_type_of(array.dtype());
  if (!type) {
    KILN_LOG(Error, "input %zu has an array dtype (code %u, %u bits) with no Kiln scalar type", i,
             static_cast<unsigned>(array.dtype().code), static_cast<unsigned>(array.dtype().bits));
    raise(Error::InputDtypeMismatch, context);
  }
  if (array.ndim() > static_cast<size_t>(kTensorMaxDim)) {
    KILN_LOG(Error, "input %zu has %zu dimensions; at most %d are supported", i, array.ndim(),
             kTensorMaxDim);
    raise(Error::InputShapeMismatch, context);
  }
  for (size_t d = 0; d < array.ndim(); ++d) {
    if (array.shape(d) > static_cast<size_t>(INT32_MAX)) {
      KILN_LOG(Error, "input %zu dimension %zu has %zu elements (more than int32)", i, d,
               array.shape(d));
      raise(Error::InputShapeMismatch, context);
    }
    input_sizes_[i].push_back(static_cast<SizesType>(array.shape(d)));
    input_dim_orders_[i].push_back(static_cast<DimOrderType>(d));
  }
  // A shape with no elements can still have strides beyond int32 ([0, 2^16, 2^16]).
  if (check_tensor_sizes({input_sizes_[i].data(), input_sizes_[i].size()}) != Error::Ok) {
    KILN_LOG(Error, "input %zu: its shape cannot be a tensor's", i);
    raise(Error::InputShapeMismatch, context);
  }
  input_strides_[i].resize(array.ndim());
  held_inputs_.push_back(array);
  // A program may store an input in another dim order (ExecuTorch's Cortex-M programs
  // keep activations channels-last): the row-major array is reordered into a copy.
  const void* data = held_inputs_.back().data();
  Result<TensorInfo> info = method_->method_meta().input_tensor_meta(i);
  if (info.ok() && !is_default_dim_order(info->dim_order) && info->dim_order.size() == array.ndim()) {
    reordered_inputs_[i].resize(array.nbytes());
    check(copy_dim_order(array.data(), reordered_inputs_[i].data(),
                         {input_sizes_[i].data(), input_sizes_[i].size()}, info->dim_order,
                         element_size(*type), true), context);
    for (size_t d = 0; d < array.ndim(); ++d) input_dim_orders_[i][d] = info->dim_order[d];
    data = reordered_inputs_[i].data();
  }
  // The array is read-only to Python; the runtime copies a planned input into its
  // buffer and reads an unplanned one in place.
  input_tensors_.emplace_back(*type, static_cast<int32_t>(array.ndim()), input_sizes_[i].data(),
                              input_dim_orders_[i].data(), input_strides_[i].data(),
                              const_cast<void*>(data));
  return EValue(&input_tensors_.back());
}

void MethodHandle::reapply_inputs() {
  for (size_t i = 0; i < input_values_.size(); ++i) {
    check(method_->set_input(input_values_[i], i),
          "setting input " + std::to_string(i) + " of '" + name_ + "'");
  }
}

void MethodHandle::run_once() {
  Error error;
  {
    nb::gil_scoped_release release;
    error = method_->execute();
  }
  // The calling thread's "last NPU counters" (kiln._runtime.ethos_u_counters()).
  remember_npu_counters(*method_);
  check(error, "executing '" + name_ + "'");
}

nb::list MethodHandle::collect_outputs() const {
  nb::list outputs;
  for (size_t i = 0; i < method_->outputs_size(); ++i) {
    outputs.append(to_python(method_->get_output(i), i));
  }
  return outputs;
}

nb::object MethodHandle::to_python(const EValue& value, size_t i) const {
  switch (value.tag()) {
    case Tag::None: return nb::none();
    case Tag::Int: return nb::int_(value.to_int());
    case Tag::Double: return nb::float_(value.to_double());
    case Tag::Bool: return nb::bool_(value.to_bool());
    case Tag::Tensor: break;
    default:
      KILN_LOG(Error, "output %zu is a %s; only tensors and scalars can be returned", i,
               tag_name(value.tag()));
      raise(Error::NotSupported, "reading the outputs of '" + name_ + "'");
  }
  const Tensor& tensor = value.to_tensor();
  const std::optional<nb::dlpack::dtype> dtype = dlpack_dtype_of(tensor.scalar_type());
  if (!dtype) {
    KILN_LOG(Error, "output %zu has dtype %s, which numpy cannot hold", i,
             scalar_type_name(tensor.scalar_type()));
    raise(Error::NotSupported, "reading the outputs of '" + name_ + "'");
  }
  const size_t nbytes = tensor.nbytes();
  auto* copy = new uint8_t[nbytes == 0 ? 1 : nbytes];
  if (nbytes != 0) std::memcpy(copy, tensor.const_data_ptr(), nbytes);
  nb::capsule owner(copy, [](void* p) noexcept { delete[] static_cast<uint8_t*>(p); });
  std::vector<size_t> shape(tensor.sizes().begin(), tensor.sizes().end());
  std::vector<int64_t> strides(tensor.strides().begin(), tensor.strides().end());
  nb::ndarray<nb::numpy> array(copy, shape.size(), shape.data(), owner, strides.data(), *dtype);
  return nb::cast(array);
}

}  // namespace kiln::python
