// Method execution and input/output handling. Init is in method_init.cpp.
#include "runtime/executor/method.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "kiln_schema/program_generated.h"
#include "runtime/executor/method_layout.h"
#include "runtime/platform/log.h"

namespace kiln {
namespace {

using internal::PreparedInstruction;

/// Control flow may revisit instructions, but a method that runs this many times its
/// instruction count is looping forever.
constexpr size_t kMaxStepsPerInstruction = 1000;

/// "[2, 3, 4]" into `buf`, for mismatch messages.
const char* format_shape(Span<const int32_t> sizes, char* buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  used += static_cast<size_t>(std::snprintf(buf, size, "["));
  for (size_t i = 0; i < sizes.size() && used < size; ++i) {
    used += static_cast<size_t>(
        std::snprintf(buf + used, size - used, i == 0 ? "%d" : ", %d", static_cast<int>(sizes[i])));
  }
  if (used < size) std::snprintf(buf + used, size - used, "]");
  return buf;
}

/// A dynamic-bound input may be smaller than its declared sizes in any dimension, never
/// larger: the program planned every tensor that depends on it by those bounds.
bool within_bounds(Span<const int32_t> given, Span<const int32_t> bounds, size_t input) {
  for (size_t d = 0; d < given.size() && d < bounds.size(); ++d) {
    if (given[d] > bounds[d]) {
      KILN_LOG(Error, "input %zu: dimension %zu is %d, above its upper bound %d", input, d,
               static_cast<int>(given[d]), static_cast<int>(bounds[d]));
      return false;
    }
  }
  return true;
}

bool same_scalar(const EValue& a, const EValue& b) {
  if (a.is_int()) return a.to_int() == b.to_int();
  if (a.is_bool()) return a.to_bool() == b.to_bool();
  return a.to_double() == b.to_double();
}

/// "Int 3", "Double 0.5", "Bool true" for log lines.
const char* format_scalar(const EValue& v, char* buf, size_t size) {
  if (v.is_int()) {
    std::snprintf(buf, size, "Int %lld", static_cast<long long>(v.to_int()));
  } else if (v.is_bool()) {
    std::snprintf(buf, size, "Bool %s", v.to_bool() ? "true" : "false");
  } else {
    std::snprintf(buf, size, "Double %.17g", v.to_double());
  }
  return buf;
}

bool same_span(Span<const int32_t> a, Span<const int32_t> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

const kiln_pte::Tensor* declared_tensor(const kiln_pte::ExecutionPlan& plan, size_t value_index) {
  return plan.values()->Get(static_cast<flatbuffers::uoffset_t>(value_index))->val_as_Tensor();
}

const EValue& none_value() {
  static const EValue none;
  return none;
}

}  // namespace

Method::Method(Method&& other) noexcept
    : program_(other.program_),
      plan_(other.plan_),
      memory_(other.memory_),
      values_(other.values_),
      num_values_(other.num_values_),
      instructions_(other.instructions_),
      num_instructions_(other.num_instructions_),
      delegates_(other.delegates_),
      num_delegates_(other.num_delegates_),
      input_set_(other.input_set_),
      input_is_read_(other.input_is_read_),
      num_inputs_(other.num_inputs_),
      num_outputs_(other.num_outputs_),
      event_tracer_(other.event_tracer_),
      initialized_(other.initialized_) {
  // The moved-from Method owns nothing: it must not destroy the delegates.
  other.delegates_ = nullptr;
  other.num_delegates_ = 0;
  other.initialized_ = false;
}

Method::~Method() {
  for (size_t k = 0; k < num_delegates_; ++k) {
    delegates_[k].backend->destroy(delegates_[k].handle);
  }
}

size_t Method::inputs_size() const { return num_inputs_; }

Result<DelegateInfo> Method::get_delegate(size_t i) const {
  if (i >= num_delegates_) {
    KILN_LOG(Error, "delegate %zu requested; the method has %zu", i, num_delegates_);
    return Error::InvalidArgument;
  }
  return DelegateInfo{delegates_[i].id, delegates_[i].backend, delegates_[i].handle};
}
size_t Method::outputs_size() const { return num_outputs_; }

size_t Method::input_value_index(size_t i) const {
  return static_cast<size_t>(plan_->inputs()->Get(static_cast<flatbuffers::uoffset_t>(i)));
}

size_t Method::output_value_index(size_t i) const {
  return static_cast<size_t>(plan_->outputs()->Get(static_cast<flatbuffers::uoffset_t>(i)));
}

const EValue& Method::get_input(size_t i) const {
  if (!initialized_ || i >= num_inputs_) {
    KILN_LOG(Error, "get_input(%zu): the method has %zu inputs", i, num_inputs_);
    return none_value();
  }
  return values_[input_value_index(i)];
}

const EValue& Method::get_output(size_t i) const {
  if (!initialized_ || i >= num_outputs_) {
    KILN_LOG(Error, "get_output(%zu): the method has %zu outputs", i, num_outputs_);
    return none_value();
  }
  return values_[output_value_index(i)];
}

MethodMeta Method::method_meta() const { return MethodMeta(plan_, program_); }

Error Method::set_input(const EValue& value, size_t i) {
  if (!initialized_) {
    KILN_LOG(Error, "set_input on a method that is not initialized");
    return Error::InvalidState;
  }
  if (i >= num_inputs_) {
    KILN_LOG(Error, "set_input(%zu): the method has %zu inputs", i, num_inputs_);
    return Error::InvalidArgument;
  }
  const size_t index = input_value_index(i);
  EValue& slot = values_[index];
  if (!slot.is_tensor()) return set_scalar_input(value, i);
  if (!value.is_tensor()) {
    KILN_LOG(Error, "input %zu is a Tensor; a %s was given", i, tag_name(value.tag()));
    return Error::InvalidType;
  }
  Tensor& expected = slot.to_tensor();
  const Tensor& given = value.to_tensor();
  if (given.scalar_type() != expected.scalar_type()) {
    KILN_LOG(Error, "input %zu: dtype %s given, %s expected", i,
             scalar_type_name(given.scalar_type()), scalar_type_name(expected.scalar_type()));
    return Error::InputDtypeMismatch;
  }
  char given_shape[96];
  char expected_shape[96];
  const kiln_pte::Tensor* declared = declared_tensor(*plan_, index);
  // Compare with the declared (upper-bound) sizes: the tensor's current sizes may have
  // been shrunk by an earlier dynamic input.
  const Span<const int32_t> declared_sizes = {
      declared->sizes() != nullptr ? declared->sizes()->data() : nullptr,
      static_cast<size_t>(expected.dim())};
  bool shape_ok = given.dim() == expected.dim();
  if (shape_ok && expected.shape_dynamism() == ShapeDynamism::Static) {
    shape_ok = same_span(given.sizes(), declared_sizes);
  }
  for (int32_t d = 0; shape_ok && d < given.dim(); ++d) {
    shape_ok = given.dim_order()[d] == expected.dim_order()[d];
  }
  if (shape_ok && expected.shape_dynamism() != ShapeDynamism::Static) {
    shape_ok = within_bounds(given.sizes(), declared_sizes, i) &&
               expected.resize(given.sizes()) == Error::Ok;
  }
  if (!shape_ok) {
    KILN_LOG(Error, "input %zu: shape %s given, %s expected (%s)", i,
             format_shape(given.sizes(), given_shape, sizeof(given_shape)),
             format_shape(declared_sizes, expected_shape, sizeof(expected_shape)),
             expected.shape_dynamism() == ShapeDynamism::Static ? "static" : "upper bound");
    return Error::InputShapeMismatch;
  }
  const size_t nbytes = expected.nbytes();
  if (nbytes > 0 && given.const_data_ptr() == nullptr) {
    KILN_LOG(Error, "input %zu: the given tensor has no data", i);
    return Error::InvalidArgument;
  }
  if (declared->allocation_info() != nullptr) {
    if (nbytes > 0 && given.const_data_ptr() != expected.const_data_ptr()) {
      std::memcpy(expected.mutable_data_ptr(), given.const_data_ptr(), nbytes);
    }
  } else {
    // Unplanned: the method reads the caller's memory directly.
    if (reinterpret_cast<uintptr_t>(given.const_data_ptr()) % expected.element_size() != 0) {
      KILN_LOG(Error, "input %zu: data at %p is not aligned to %zu bytes", i,
               given.const_data_ptr(), expected.element_size());
      return Error::InvalidArgument;
    }
    expected.set_data(given.mutable_data_ptr());
  }
  input_set_[i] = true;
  return Error::Ok;
}

Error Method::set_scalar_input(const EValue& value, size_t i) {
  EValue& slot = values_[input_value_index(i)];
  if (value.tag() != slot.tag() || !slot.is_scalar()) {
    KILN_LOG(Error, "input %zu is a %s; a %s was given", i, tag_name(slot.tag()),
             tag_name(value.tag()));
    return Error::InvalidType;
  }
  // An input no instruction reads was specialized at export (torch.export bakes the
  // example's number into the graph): another value would be ignored silently, so it is
  // refused, as ExecuTorch does. Inputs the program reads (a symbolic int) take any value.
  if (!input_is_read_[i] && !same_scalar(value, slot)) {
    char given[48];
    char exported[48];
    KILN_LOG(Error, "input %zu was fixed to %s when the program was exported; %s given", i,
             format_scalar(slot, exported, sizeof(exported)),
             format_scalar(value, given, sizeof(given)));
    return Error::InvalidArgument;
  }
  slot = value;
  return Error::Ok;
}

Error Method::set_output_data_ptr(void* data, size_t size, size_t i) {
  if (!initialized_) {
    KILN_LOG(Error, "set_output_data_ptr on a method that is not initialized");
    return Error::InvalidState;
  }
  if (i >= num_outputs_) {
    KILN_LOG(Error, "set_output_data_ptr(%zu): the method has %zu outputs", i, num_outputs_);
    return Error::InvalidArgument;
  }
  const size_t index = output_value_index(i);
  if (!values_[index].is_tensor()) {
    KILN_LOG(Error, "output %zu is a %s, not a tensor", i, tag_name(values_[index].tag()));
    return Error::InvalidType;
  }
  const kiln_pte::Tensor* declared = declared_tensor(*plan_, index);
  if (declared->allocation_info() != nullptr || declared->data_buffer_idx() != 0) {
    KILN_LOG(Error, "output %zu already has memory (planned or constant)", i);
    return Error::InvalidState;
  }
  Tensor& tensor = values_[index].to_tensor();
  // A dynamic-bound output may grow back to its bound: the memory must hold that much.
  if (data == nullptr || size < tensor.capacity_nbytes() ||
      reinterpret_cast<uintptr_t>(data) % tensor.element_size() != 0) {
    KILN_LOG(Error, "output %zu needs %zu bytes aligned to %zu; %zu given at %p", i,
             tensor.capacity_nbytes(), tensor.element_size(), size, data);
    return Error::InvalidArgument;
  }
  tensor.set_data(data);
  return Error::Ok;
}

Error Method::check_ready_to_execute() const {
  for (size_t i = 0; i < num_inputs_; ++i) {
    if (!input_set_[i]) {
      KILN_LOG(Error, "input %zu was never set (call set_input before execute)", i);
      return Error::InvalidState;
    }
  }
  for (size_t i = 0; i < num_outputs_; ++i) {
    const EValue& out = values_[output_value_index(i)];
    if (out.is_tensor() && out.to_tensor().const_data_ptr() == nullptr &&
        out.to_tensor().nbytes() > 0) {
      KILN_LOG(Error, "output %zu has no memory (call set_output_data_ptr before execute)", i);
      return Error::InvalidState;
    }
  }
  return Error::Ok;
}

Error Method::execute_instruction(size_t pc, size_t* next_pc) {
  const PreparedInstruction& instruction = instructions_[pc];
  switch (instruction.kind) {
    case PreparedInstruction::Kind::Kernel: {
      KernelContext context(memory_.temp_allocator);
      instruction.function(context, instruction.args);
      if (event_tracer_ != nullptr) trace_instruction_end(pc, temp_bytes_used());
      if (memory_.temp_allocator != nullptr) memory_.temp_allocator->reset();
      if (context.failure_state() != Error::Ok) {
        KILN_LOG(Error, "instruction %zu (%s) failed: %s", pc, instruction.name,
                 error_name(context.failure_state()));
        return context.failure_state();
      }
      return Error::Ok;
    }
    case PreparedInstruction::Kind::Delegate: {
      const internal::DelegateInstance& delegate = delegates_[instruction.a];
      BackendExecuteContext context{memory_.temp_allocator, event_tracer_};
      const Error error = delegate.backend->execute(context, delegate.handle, instruction.args);
      if (event_tracer_ != nullptr) trace_instruction_end(pc, temp_bytes_used());
      if (memory_.temp_allocator != nullptr) memory_.temp_allocator->reset();
      if (error != Error::Ok) {
        KILN_LOG(Error, "instruction %zu (delegate %s) failed: %s", pc, instruction.name,
                 error_name(error));
      }
      return error;
    }
    case PreparedInstruction::Kind::Move:
      values_[instruction.b] = values_[instruction.a];
      if (event_tracer_ != nullptr) trace_instruction_end(pc, 0);
      return Error::Ok;
    case PreparedInstruction::Kind::JumpFalse: {
      const EValue& condition = values_[instruction.a];
      if (!condition.is_bool()) {
        KILN_LOG(Error, "instruction %zu: jump condition (value %" PRIu32 ") is a %s, not a Bool", pc,
                 instruction.a, tag_name(condition.tag()));
        return Error::InvalidProgram;
      }
      if (!condition.to_bool()) *next_pc = instruction.b;
      if (event_tracer_ != nullptr) trace_instruction_end(pc, 0);
      return Error::Ok;
    }
    case PreparedInstruction::Kind::Free:
      // Memory is planned ahead of time; there is nothing to free.
      if (event_tracer_ != nullptr) trace_instruction_end(pc, 0);
      return Error::Ok;
  }
  return Error::Internal;
}

Error Method::execute() {
  if (!initialized_) {
    KILN_LOG(Error, "execute on a method that is not initialized");
    return Error::InvalidState;
  }
  KILN_TRY(check_ready_to_execute());
  EventTracer* const tracer = event_tracer_;
  if (tracer != nullptr) tracer->begin_run(method_meta().name());
  const Error error = run_instructions();
  if (tracer != nullptr) tracer->end_run(error == Error::Ok);
  return error;
}

Error Method::run_instructions() {
  size_t max_steps = 0;
  if (__builtin_mul_overflow(num_instructions_, kMaxStepsPerInstruction, &max_steps)) {
    max_steps = SIZE_MAX;
  }
  size_t steps = 0;
  size_t pc = 0;
  while (pc < num_instructions_) {
    if (++steps > max_steps) {
      KILN_LOG(Error, "method ran %zu instructions (%zu times its %zu); control flow loops "
               "at instruction %zu", steps - 1, kMaxStepsPerInstruction, num_instructions_, pc);
      return Error::InvalidProgram;
    }
    size_t next_pc = pc + 1;
    if (event_tracer_ != nullptr) event_tracer_->begin_instruction(0, static_cast<uint32_t>(pc), instructions_[pc].name);
    KILN_TRY(execute_instruction(pc, &next_pc));
    pc = next_pc;
  }
  return Error::Ok;
}

}  // namespace kiln
