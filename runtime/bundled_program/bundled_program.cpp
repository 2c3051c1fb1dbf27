#include "runtime/bundled_program/bundled_program.h"

#include <cmath>
#include <cstring>
#include <new>

#include "kiln_schema/bundled_program_generated.h"
#include "runtime/platform/log.h"

namespace kiln {
namespace {

/// Root offset + identifier: the least a flatbuffer with an identifier has.
constexpr size_t kMinimumBytes = 8;
constexpr size_t kRequiredAlignment = 32;

/// Element `i` of a `dtype` array, as a double; false for dtypes that cannot be compared.
bool element_as_double(ScalarType dtype, const void* data, size_t i, double* out) {
  switch (dtype) {
    case ScalarType::Float: *out = static_cast<const float*>(data)[i]; return true;
    case ScalarType::Double: *out = static_cast<const double*>(data)[i]; return true;
    case ScalarType::Char: *out = static_cast<const int8_t*>(data)[i]; return true;
    case ScalarType::Byte: *out = static_cast<const uint8_t*>(data)[i]; return true;
    case ScalarType::Short: *out = static_cast<const int16_t*>(data)[i]; return true;
    case ScalarType::Int: *out = static_cast<const int32_t*>(data)[i]; return true;
    case ScalarType::Long: *out = static_cast<double>(static_cast<const int64_t*>(data)[i]); return true;
    case ScalarType::Bool: *out = static_cast<const bool*>(data)[i] ? 1.0 : 0.0; return true;
    default: return false;
  }
}

size_t length(const flatbuffers::Vector<int32_t>* v) { return v != nullptr ? v->size() : 0; }

/// Checks a bundled tensor's sizes against its data; the element count on success.
Result<size_t> checked_numel(const kiln_bundled::Tensor& tensor, const char* what, size_t index) {
  const size_t dim = length(tensor.sizes());
  if (dim > static_cast<size_t>(kTensorMaxDim)) {
    KILN_LOG(Error, "bundled %s %zu has rank %zu; at most %d is supported", what, index, dim,
             static_cast<int>(kTensorMaxDim));
    return Error::BundledProgramInvalid;
  }
  size_t numel = 1;
  for (size_t d = 0; d < dim; ++d) {
    const int32_t size = tensor.sizes()->Get(static_cast<flatbuffers::uoffset_t>(d));
    if (size < 0 || (size > 0 && numel > SIZE_MAX / static_cast<size_t>(size))) {
      KILN_LOG(Error, "bundled %s %zu: dimension %zu has size %ld", what, index, d, static_cast<long>(size));
      return Error::BundledProgramInvalid;
    }
    numel *= static_cast<size_t>(size);
  }
  const ScalarType dtype = static_cast<ScalarType>(tensor.scalar_type());
  const size_t data_bytes = tensor.data() != nullptr ? tensor.data()->size() : 0;
  if (element_size(dtype) == 0 || numel > SIZE_MAX / element_size(dtype) ||
      numel * element_size(dtype) != data_bytes) {
    KILN_LOG(Error, "bundled %s %zu: %zu elements of %s need %zu bytes; it holds %zu", what, index, numel,
             scalar_type_name(dtype), numel * element_size(dtype), data_bytes);
    return Error::BundledProgramInvalid;
  }
  return numel;
}

}  // namespace

bool BundledProgram::has_identifier(Span<const uint8_t> data) {
  return data.size() >= kMinimumBytes &&
         flatbuffers::BufferHasIdentifier(data.data(), kiln_bundled::BundledProgramIdentifier());
}

Result<BundledProgram> BundledProgram::load(Span<const uint8_t> data) {
  if (data.size() < kMinimumBytes) {
    KILN_LOG(Error, "a bundled program needs at least %zu bytes; %zu given", kMinimumBytes, data.size());
    return Error::BundledProgramTruncated;
  }
  if (!has_identifier(data)) {
    const uint8_t* id = data.data() + 4;
    KILN_LOG(Error, "not a bundled program: identifier '%c%c%c%c' (bytes 4-7), expected 'BP08'",
             id[0] >= 32 && id[0] < 127 ? id[0] : '?', id[1] >= 32 && id[1] < 127 ? id[1] : '?',
             id[2] >= 32 && id[2] < 127 ? id[2] : '?', id[3] >= 32 && id[3] < 127 ? id[3] : '?');
    return Error::BundledProgramBadIdentifier;
  }
  if (reinterpret_cast<uintptr_t>(data.data()) % kRequiredAlignment != 0) {
    KILN_LOG(Error, "bundled program data at %p is not %zu-byte aligned", static_cast<const void*>(data.data()),
             kRequiredAlignment);
    return Error::InvalidArgument;
  }
  flatbuffers::Verifier verifier(data.data(), data.size());
  if (!kiln_bundled::VerifyBundledProgramBuffer(verifier)) {
    // A cut file fails here too: say which it is when the root offset points past the end.
    const uint32_t root = flatbuffers::ReadScalar<uint32_t>(data.data());
    if (root >= data.size()) {
      KILN_LOG(Error, "the bundled program is truncated: its root table is at byte %lu of %zu",
               static_cast<unsigned long>(root), data.size());
      return Error::BundledProgramTruncated;
    }
    KILN_LOG(Error, "the %zu-byte bundled program fails flatbuffer verification (truncated or corrupt)",
             data.size());
    return Error::BundledProgramInvalid;
  }
  const kiln_bundled::BundledProgram* root = kiln_bundled::GetBundledProgram(data.data());
  if (root->program() == nullptr || root->program()->size() == 0) {
    KILN_LOG(Error, "the bundled program holds no program");
    return Error::BundledProgramInvalid;
  }
  return BundledProgram(root, {root->program()->data(), root->program()->size()});
}

size_t BundledProgram::num_test_cases(const char* method_name) const {
  const auto* suites = root_->method_test_suites();
  for (flatbuffers::uoffset_t i = 0; suites != nullptr && i < suites->size(); ++i) {
    const auto* suite = suites->Get(i);
    if (suite->method_name() != nullptr && std::strcmp(suite->method_name()->c_str(), method_name) == 0) {
      return suite->test_cases() != nullptr ? suite->test_cases()->size() : 0;
    }
  }
  return 0;
}

const kiln_bundled::BundledMethodTestCase* BundledProgram::test_case(const char* method_name,
                                                                     size_t index) const {
  const size_t count = num_test_cases(method_name);
  if (index >= count) {
    KILN_LOG(Error, "bundled test case %zu of method '%s' requested; the bundle has %zu", index, method_name,
             count);
    return nullptr;
  }
  const auto* suites = root_->method_test_suites();
  for (flatbuffers::uoffset_t i = 0; i < suites->size(); ++i) {
    const auto* suite = suites->Get(i);
    if (suite->method_name() != nullptr && std::strcmp(suite->method_name()->c_str(), method_name) == 0) {
      return suite->test_cases()->Get(static_cast<flatbuffers::uoffset_t>(index));
    }
  }
  return nullptr;
}

Error BundledProgram::set_inputs(Method& method, const char* method_name, size_t index,
                                 BundledInputs& storage) const {
  const kiln_bundled::BundledMethodTestCase* test = test_case(method_name, index);
  if (test == nullptr) return Error::BundledProgramInvalid;
  const size_t count = test->inputs() != nullptr ? test->inputs()->size() : 0;
  if (count != method.inputs_size() || count > BundledInputs::kMaxInputs) {
    KILN_LOG(Error, "bundled test case %zu has %zu inputs; method '%s' takes %zu (at most %zu supported)", index,
             count, method_name, method.inputs_size(), BundledInputs::kMaxInputs);
    return Error::BundledProgramInvalid;
  }
  for (size_t i = 0; i < count; ++i) {
    const kiln_bundled::Value* value = test->inputs()->Get(static_cast<flatbuffers::uoffset_t>(i));
    Error error = Error::Ok;
    if (const kiln_bundled::Tensor* bundled = value->val_as_Tensor()) {
      KILN_TRY(checked_numel(*bundled, "input", i).error());
      const int32_t dim = static_cast<int32_t>(length(bundled->sizes()));
      const auto* order = bundled->dim_order();
      const bool has_order = order != nullptr && order->size() == static_cast<size_t>(dim);
      for (int32_t d = 0; d < dim; ++d) {
        storage.sizes[i][d] = bundled->sizes()->Get(static_cast<flatbuffers::uoffset_t>(d));
        storage.dim_orders[i][d] = has_order ? order->Get(static_cast<flatbuffers::uoffset_t>(d))
                                             : static_cast<DimOrderType>(d);
        if (storage.dim_orders[i][d] >= dim) {
          KILN_LOG(Error, "bundled input %zu: dim order entry %d is out of range", i,
                   static_cast<int>(storage.dim_orders[i][d]));
          return Error::BundledProgramInvalid;
        }
      }
      // The method only reads its inputs (a planned input is copied into its buffer).
      void* data = const_cast<uint8_t*>(bundled->data()->data());
      Tensor* tensor = new (storage.tensors[i])
          Tensor(static_cast<ScalarType>(bundled->scalar_type()), dim, storage.sizes[i], storage.dim_orders[i],
                 storage.strides[i], data);
      error = method.set_input(EValue(tensor), i);
    } else if (const kiln_bundled::Int* number = value->val_as_Int()) {
      error = method.set_input(EValue(static_cast<int64_t>(number->int_val())), i);
    } else if (const kiln_bundled::Double* real = value->val_as_Double()) {
      error = method.set_input(EValue(real->double_val()), i);
    } else if (const kiln_bundled::Bool* flag = value->val_as_Bool()) {
      error = method.set_input(EValue(flag->bool_val()), i);
    } else {
      KILN_LOG(Error, "bundled input %zu of test case %zu holds no value", i, index);
      return Error::BundledProgramInvalid;
    }
    if (error != Error::Ok) {
      KILN_LOG(Error, "bundled input %zu of test case %zu does not fit method '%s'", i, index, method_name);
      return error;
    }
  }
  return Error::Ok;
}

namespace {

Error compare_tensor(const Tensor& actual, const kiln_bundled::Tensor& expected, size_t output, double rtol,
                     double atol, BundledOutputCheck* check) {
  KILN_TRY_ASSIGN(const size_t numel, checked_numel(expected, "expected output", output));
  const ScalarType dtype = static_cast<ScalarType>(expected.scalar_type());
  bool same_shape = actual.scalar_type() == dtype && static_cast<size_t>(actual.dim()) == length(expected.sizes());
  for (int32_t d = 0; same_shape && d < actual.dim(); ++d) {
    same_shape = actual.sizes()[d] == expected.sizes()->Get(static_cast<flatbuffers::uoffset_t>(d));
  }
  if (!same_shape) {
    KILN_LOG(Error, "output %zu is %s of %zu elements (rank %d); the bundle expects %s of %zu (rank %zu)", output,
             scalar_type_name(actual.scalar_type()), actual.numel(), static_cast<int>(actual.dim()),
             scalar_type_name(dtype), numel, length(expected.sizes()));
    return Error::BundledProgramInvalid;
  }
  BundledOutputCheck result;
  result.numel = numel;
  const void* expected_data = expected.data()->data();
  for (size_t i = 0; i < numel; ++i) {
    double a = 0.0;
    double e = 0.0;
    if (!element_as_double(dtype, actual.const_data_ptr(), i, &a) ||
        !element_as_double(dtype, expected_data, i, &e)) {
      KILN_LOG(Error, "output %zu: %s outputs cannot be compared", output, scalar_type_name(dtype));
      return Error::BundledProgramInvalid;
    }
    if (std::isnan(a) && std::isnan(e)) continue;
    const double error = std::fabs(a - e);
    if (!(error <= atol + rtol * std::fabs(e))) ++result.mismatches;  // NaN against a number fails
    if (error > result.max_abs_error || std::isnan(error)) result.max_abs_error = error;
  }
  result.passed = result.mismatches == 0;
  *check = result;
  return Error::Ok;
}

}  // namespace

Error BundledProgram::verify_outputs(const Method& method, const char* method_name, size_t index, double rtol,
                                     double atol, Span<BundledOutputCheck> checks) const {
  const kiln_bundled::BundledMethodTestCase* test = test_case(method_name, index);
  if (test == nullptr) return Error::BundledProgramInvalid;
  const size_t count = test->expected_outputs() != nullptr ? test->expected_outputs()->size() : 0;
  if (count != method.outputs_size()) {
    KILN_LOG(Error, "bundled test case %zu expects %zu outputs; method '%s' has %zu", index, count, method_name,
             method.outputs_size());
    return Error::BundledProgramInvalid;
  }
  bool all_passed = true;
  for (size_t i = 0; i < count; ++i) {
    const kiln_bundled::Value* expected = test->expected_outputs()->Get(static_cast<flatbuffers::uoffset_t>(i));
    const EValue& actual = method.get_output(i);
    BundledOutputCheck check;
    if (const kiln_bundled::Tensor* tensor = expected->val_as_Tensor()) {
      if (!actual.is_tensor()) {
        KILN_LOG(Error, "output %zu is a %s; the bundle expects a tensor", i, tag_name(actual.tag()));
        return Error::BundledProgramInvalid;
      }
      KILN_TRY(compare_tensor(actual.to_tensor(), *tensor, i, rtol, atol, &check));
    } else if (const kiln_bundled::Int* number = expected->val_as_Int()) {
      check.numel = 1;
      check.passed = actual.is_int() && actual.to_int() == number->int_val();
    } else if (const kiln_bundled::Bool* flag = expected->val_as_Bool()) {
      check.numel = 1;
      check.passed = actual.is_bool() && actual.to_bool() == flag->bool_val();
    } else if (const kiln_bundled::Double* real = expected->val_as_Double()) {
      check.numel = 1;
      check.max_abs_error = actual.is_double() ? std::fabs(actual.to_double() - real->double_val()) : 0.0;
      check.passed = actual.is_double() && check.max_abs_error <= atol + rtol * std::fabs(real->double_val());
    } else {
      KILN_LOG(Error, "expected output %zu of test case %zu holds no value", i, index);
      return Error::BundledProgramInvalid;
    }
    if (!check.passed && check.mismatches == 0) check.mismatches = 1;
    if (i < checks.size()) checks[i] = check;
    all_passed = all_passed && check.passed;
  }
  return all_passed ? Error::Ok : Error::BundledProgramOutputMismatch;
}

}  // namespace kiln
