#include "runtime/executor/method_meta.h"

#include <cinttypes>
#include <cstdint>
#include <cstring>

#include "kiln_schema/program_generated.h"
#include "runtime/executor/flatbuffer_vectors.h"
#include "runtime/executor/method_layout.h"
#include "runtime/executor/method_state.h"
#include "runtime/executor/value_parsing.h"
#include "runtime/platform/log.h"

namespace kiln {
namespace {

using internal::length;

/// The value that plan-level index list `io` (inputs or outputs) names at position i.
Result<size_t> io_value_index(const kiln_pte::ExecutionPlan& plan,
                                         const flatbuffers::Vector<int32_t>* io, size_t i,
                                         const char* what) {
  if (i >= length(io)) {
    KILN_LOG(Error, "%s %zu requested; the method has %zu", what, i, length(io));
    return Error::InvalidArgument;
  }
  const int32_t index = io->Get(static_cast<flatbuffers::uoffset_t>(i));
  if (index < 0 || static_cast<size_t>(index) >= length(plan.values())) {
    KILN_LOG(Error, "%s %zu is value %" PRId32 "; the method has %zu values", what, i, index,
             length(plan.values()));
    return Error::ProgramIndexOutOfRange;
  }
  return static_cast<size_t>(index);
}

const kiln_pte::EValue* value_at(const kiln_pte::ExecutionPlan& plan, size_t index) {
  return plan.values()->Get(static_cast<flatbuffers::uoffset_t>(index));
}

Result<TensorInfo> tensor_info(const kiln_pte::ExecutionPlan& plan, size_t index, size_t i,
                               const char* what) {
  const kiln_pte::EValue* value = value_at(plan, index);
  const kiln_pte::Tensor* tensor = value->val_as_Tensor();
  if (tensor == nullptr) {
    KILN_LOG(Error, "%s %zu is a %s, not a tensor", what, i,
             kiln_pte::EnumNameKernelTypes(value->val_type()));
    return Error::InvalidType;
  }
  KILN_TRY_ASSIGN(const internal::TensorShape shape, internal::check_tensor_shape(*tensor, index));
  TensorInfo info;
  info.sizes = shape.sizes;
  info.dim_order = shape.dim_order;
  info.scalar_type = shape.scalar_type;
  info.nbytes = shape.nbytes;
  info.is_memory_planned = tensor->allocation_info() != nullptr;
  info.shape_dynamism = shape.dynamism;
  return info;
}

}  // namespace

const char* MethodMeta::name() const {
  return plan_->name() != nullptr ? plan_->name()->c_str() : "";
}

size_t MethodMeta::num_inputs() const { return length(plan_->inputs()); }

Result<Tag> MethodMeta::input_tag(size_t i) const {
  KILN_TRY_ASSIGN(const size_t index, io_value_index(*plan_, plan_->inputs(), i, "input"));
  return internal::tag_of(value_at(*plan_, index)->val_type());
}

Result<TensorInfo> MethodMeta::input_tensor_meta(size_t i) const {
  KILN_TRY_ASSIGN(const size_t index, io_value_index(*plan_, plan_->inputs(), i, "input"));
  return tensor_info(*plan_, index, i, "input");
}

size_t MethodMeta::num_outputs() const { return length(plan_->outputs()); }

Result<Tag> MethodMeta::output_tag(size_t i) const {
  KILN_TRY_ASSIGN(const size_t index, io_value_index(*plan_, plan_->outputs(), i, "output"));
  return internal::tag_of(value_at(*plan_, index)->val_type());
}

Result<TensorInfo> MethodMeta::output_tensor_meta(size_t i) const {
  KILN_TRY_ASSIGN(const size_t index, io_value_index(*plan_, plan_->outputs(), i, "output"));
  return tensor_info(*plan_, index, i, "output");
}

size_t MethodMeta::num_memory_planned_buffers() const {
  const size_t n = length(plan_->non_const_buffer_sizes());
  // Entry 0 is the unused memory id 0.
  return n > 0 ? n - 1 : 0;
}

Result<int64_t> MethodMeta::memory_planned_buffer_size(size_t i) const {
  if (i >= num_memory_planned_buffers()) {
    KILN_LOG(Error, "planned buffer %zu requested; the method has %zu", i,
             num_memory_planned_buffers());
    return Error::InvalidArgument;
  }
  const int64_t size = plan_->non_const_buffer_sizes()->Get(static_cast<flatbuffers::uoffset_t>(i + 1));
  if (size < 0) {
    KILN_LOG(Error, "planned buffer %zu has negative size %lld", i, static_cast<long long>(size));
    return Error::InvalidProgram;
  }
  return size;
}

size_t MethodMeta::find_state(size_t wanted, size_t* count) const {
  *count = 0;
  for (size_t v = 0; v < length(plan_->values()); ++v) {
    if (!internal::has_initial_state(*plan_, v)) continue;
    if ((*count)++ == wanted) return v;
  }
  const auto* chains = plan_->chains();
  const auto* instructions = length(chains) > 0 ? chains->Get(0)->instructions() : nullptr;
  auto written_back_at = [&](size_t pc) {
    return internal::state_written_back_by(*plan_, *instructions->Get(static_cast<flatbuffers::uoffset_t>(pc)));
  };
  for (size_t pc = 0; pc < length(instructions); ++pc) {
    const int64_t state = written_back_at(pc);
    if (state < 0 || internal::has_initial_state(*plan_, static_cast<size_t>(state))) continue;
    bool seen = false;  // written back by an earlier instruction too
    for (size_t earlier = 0; earlier < pc && !seen; ++earlier) seen = written_back_at(earlier) == state;
    if (seen) continue;
    if ((*count)++ == wanted) return static_cast<size_t>(state);
  }
  return SIZE_MAX;
}

size_t MethodMeta::num_states() const {
  size_t count = 0;
  find_state(SIZE_MAX, &count);
  return count;
}

Result<StateInfo> MethodMeta::state_meta(size_t i) const {
  size_t count = 0;
  const size_t index = find_state(i, &count);
  if (index == SIZE_MAX) {
    KILN_LOG(Error, "state %zu requested; the method has %zu", i, count);
    return Error::InvalidArgument;
  }
  KILN_TRY_ASSIGN(const TensorInfo tensor, tensor_info(*plan_, index, i, "state"));
  return StateInfo{index, tensor, internal::has_initial_state(*plan_, index)};
}

size_t MethodMeta::num_instructions() const {
  const auto* chains = plan_->chains();
  return length(chains) > 0 ? length(chains->Get(0)->instructions()) : 0;
}

size_t MethodMeta::num_operators() const { return length(plan_->operators()); }

Result<const char*> MethodMeta::operator_name(size_t i, char* buf, size_t buf_size) const {
  if (i >= num_operators() || buf == nullptr) {
    KILN_LOG(Error, "operator %zu requested; the method has %zu", i, num_operators());
    return Error::InvalidArgument;
  }
  const kiln_pte::Operator* op = plan_->operators()->Get(static_cast<flatbuffers::uoffset_t>(i));
  const size_t needed = internal::write_operator_name(*op, nullptr, 0);
  if (needed > buf_size) {
    KILN_LOG(Error, "operator %zu: name needs %zu bytes, buffer has %zu", i, needed, buf_size);
    return Error::InvalidArgument;
  }
  internal::write_operator_name(*op, buf, buf_size);
  return static_cast<const char*>(buf);
}

size_t MethodMeta::num_backends() const { return length(plan_->delegates()); }

Result<size_t> MethodMeta::method_allocator_size() const {
  KILN_TRY_ASSIGN(const internal::MethodLayout layout, internal::compute_method_layout(*plan_));
  internal::Allocation allocations[internal::kNumSections];
  KILN_TRY(internal::method_allocations(layout, allocations));
  size_t total = internal::worst_case_allocator_bytes(allocations);
  KILN_TRY_ASSIGN(const size_t backend_bytes, backends_allocator_size());
  if (!internal::checked_add(total, backend_bytes, &total)) {
    KILN_LOG(Error, "method allocator size overflows (backends need %zu bytes)", backend_bytes);
    return Error::InvalidProgram;
  }
  return total;
}

Result<size_t> MethodMeta::backends_allocator_size() const {
  // Compile specs are handed over as a stack array: sizing must not allocate.
  constexpr size_t kMaxSpecs = 64;
  size_t total = 0;
  for (size_t k = 0; program_ != nullptr && k < length(plan_->delegates()); ++k) {
    const kiln_pte::BackendDelegate* delegate =
        plan_->delegates()->Get(static_cast<flatbuffers::uoffset_t>(k));
    if (delegate->id() == nullptr) continue;
    const BackendInterface* backend = get_backend(delegate->id()->c_str(), delegate->id()->size());
    if (backend == nullptr) continue;
    KILN_TRY_ASSIGN(const Span<const uint8_t> blob, internal::delegate_blob(*program_, *delegate, k));
    const auto* specs = delegate->compile_specs();
    if (length(specs) > kMaxSpecs) {
      KILN_LOG(Error, "delegate %zu has %zu compile specs; sizing supports %zu", k, length(specs),
               kMaxSpecs);
      return Error::NotSupported;
    }
    CompileSpec compile_specs[kMaxSpecs];
    for (size_t j = 0; j < length(specs); ++j) {
      const kiln_pte::CompileSpec* spec = specs->Get(static_cast<flatbuffers::uoffset_t>(j));
      compile_specs[j] = {spec->key() != nullptr ? spec->key()->c_str() : "",
                          spec->key() != nullptr ? spec->key()->size() : 0,
                          spec->value() != nullptr ? spec->value()->data() : nullptr,
                          length(spec->value())};
    }
    const size_t bytes = backend->method_allocator_size(blob, {compile_specs, length(specs)});
    if (!internal::checked_add(total, bytes, &total)) {
      KILN_LOG(Error, "delegate %zu: backend allocator sizes overflow", k);
      return Error::InvalidProgram;
    }
  }
  return total;
}

}  // namespace kiln
