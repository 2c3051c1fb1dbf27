// Method metadata as Python dicts (kiln/runtime/meta.py turns them into dataclasses).
#include "python/kiln/runtime/method_meta_dict.h"

#include <cstring>
#include <string>

#include "python/kiln/runtime/runtime_error.h"

namespace nb = nanobind;

namespace kiln::python {
namespace {

nb::dict describe_tensor(const TensorInfo& info) {
  nb::dict out;
  nb::list sizes;
  for (int32_t size : info.sizes) sizes.append(size);
  nb::list dim_order;
  for (uint8_t d : info.dim_order) dim_order.append(d);
  out["shape"] = nb::tuple(sizes);
  out["dim_order"] = nb::tuple(dim_order);
  out["scalar_type"] = scalar_type_name(info.scalar_type);
  out["nbytes"] = info.nbytes;
  out["is_memory_planned"] = info.is_memory_planned;
  out["is_dynamic"] = info.shape_dynamism != ShapeDynamism::Static;
  return out;
}

nb::object describe_value(Result<Tag> tag, Result<TensorInfo> (MethodMeta::*tensor_meta)(size_t)
                                               const,
                          const MethodMeta& meta, size_t i, const std::string& what) {
  const Tag kind = take_or_raise(std::move(tag), what);
  if (kind != Tag::Tensor) {
    nb::dict out;
    out["tag"] = tag_name(kind);
    return std::move(out);
  }
  nb::dict out = describe_tensor(take_or_raise((meta.*tensor_meta)(i), what));
  out["tag"] = tag_name(kind);
  return std::move(out);
}

}  // namespace

nb::dict describe_meta(const MethodMeta& meta) {
  const std::string name = meta.name();
  nb::dict out;
  out["name"] = text(name);
  nb::list inputs;
  for (size_t i = 0; i < meta.num_inputs(); ++i) {
    inputs.append(describe_value(meta.input_tag(i), &MethodMeta::input_tensor_meta, meta, i,
                                 "reading input " + std::to_string(i) + " of " + name));
  }
  nb::list outputs;
  for (size_t i = 0; i < meta.num_outputs(); ++i) {
    outputs.append(describe_value(meta.output_tag(i), &MethodMeta::output_tensor_meta, meta, i,
                                  "reading output " + std::to_string(i) + " of " + name));
  }
  nb::list planned;
  for (size_t i = 0; i < meta.num_memory_planned_buffers(); ++i) {
    planned.append(take_or_raise(meta.memory_planned_buffer_size(i),
                                 "reading planned buffer sizes of " + name));
  }
  nb::list states;
  for (size_t i = 0; i < meta.num_states(); ++i) {
    const StateInfo state = take_or_raise(meta.state_meta(i), "reading the state of " + name);
    nb::dict entry = describe_tensor(state.tensor);
    entry["value_index"] = state.value_index;
    entry["has_initial_value"] = state.has_initial_value;
    states.append(entry);
  }
  nb::list operators;
  for (size_t i = 0; i < meta.num_operators(); ++i) {
    char buffer[256];
    const char* op = take_or_raise(meta.operator_name(i, buffer, sizeof(buffer)),
                                   "reading operators of " + name);
    operators.append(text(op, std::strlen(op)));
  }
  out["inputs"] = inputs;
  out["outputs"] = outputs;
  out["planned_buffer_sizes"] = planned;
  out["states"] = states;
  out["operators"] = operators;
  out["num_instructions"] = meta.num_instructions();
  out["num_backends"] = meta.num_backends();
  out["method_allocator_size"] =
      take_or_raise(meta.method_allocator_size(), "sizing the method allocator of " + name);
  return out;
}

}  // namespace kiln::python
