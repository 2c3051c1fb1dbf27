// BundledProgram: a verified view of a bundled program (.bpte, "BP08": a .pte plus test
// cases — inputs and expected outputs per method; runtime/schema/bundled_program.fbs),
// and the two steps of running a test case: give a method the case's inputs, then check
// its outputs against the expected ones.
//
// Nothing is allocated: the view points into the caller's bytes, input tensors are built
// in a caller's BundledInputs, and comparison results go into a caller's span. Portable:
// the firmware runner (kiln-deploy --bundleio) and kiln-run use the same code.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor.h"
#include "runtime/executor/method.h"

namespace kiln_bundled {
struct BundledProgram;
struct BundledMethodTestSuite;
struct BundledMethodTestCase;
}  // namespace kiln_bundled

namespace kiln {

/// Storage for the input tensors of one test case; must outlive the method's execution.
struct BundledInputs {
  static constexpr size_t kMaxInputs = 16;
  alignas(Tensor) uint8_t tensors[kMaxInputs][sizeof(Tensor)];
  SizesType sizes[kMaxInputs][kTensorMaxDim];
  DimOrderType dim_orders[kMaxInputs][kTensorMaxDim];
  StridesType strides[kMaxInputs][kTensorMaxDim];
};

/// How one output of a test case compared with its expected value.
struct BundledOutputCheck {
  /// Elements of the output, and how many lie beyond the tolerance.
  size_t numel = 0;
  size_t mismatches = 0;
  /// The largest |actual - expected| (floats and integers alike, as doubles).
  double max_abs_error = 0.0;
  bool passed = false;
};

class BundledProgram final {
 public:
  /// True if `data` carries the "BP08" identifier (nothing else is checked).
  static bool has_identifier(Span<const uint8_t> data);

  /// Verifies `data` (the whole file, 32-byte aligned so that the embedded program's
  /// aligned data stay aligned; it must outlive the view). BundledProgramTruncated for
  /// fewer bytes than a flatbuffer header, BundledProgramBadIdentifier without "BP08",
  /// BundledProgramInvalid if the flatbuffer fails verification or holds no program,
  /// InvalidArgument for misaligned data. Each is logged with the numbers.
  static Result<BundledProgram> load(Span<const uint8_t> data);

  /// The embedded .pte file.
  Span<const uint8_t> program() const { return program_; }

  /// Test cases for `method_name` (0 when the bundle has none for it).
  size_t num_test_cases(const char* method_name) const;

  /// Sets every input of `method` (whose name is `method_name`) from test case `index`:
  /// tensors are built in `storage` over the bundle's data. BundledProgramInvalid for a
  /// missing method or case, a wrong number or kind of inputs, or a tensor the method
  /// cannot take (more inputs than BundledInputs holds, rank above kTensorMaxDim,
  /// sizes and data disagreeing); otherwise Method::set_input's errors.
  Error set_inputs(Method& method, const char* method_name, size_t index, BundledInputs& storage) const;

  /// Compares `method`'s outputs with test case `index`'s expected outputs: an element
  /// passes when |actual - expected| <= atol + rtol * |expected| (NaN equals NaN).
  /// `checks` receives one entry per output (up to its size). Ok when every output
  /// passes, BundledProgramOutputMismatch when some element does not,
  /// BundledProgramInvalid when the outputs cannot be compared (count, dtype, shape).
  Error verify_outputs(const Method& method, const char* method_name, size_t index, double rtol,
                       double atol, Span<BundledOutputCheck> checks) const;

 private:
  explicit BundledProgram(const kiln_bundled::BundledProgram* root, Span<const uint8_t> program)
      : root_(root), program_(program) {}
  const kiln_bundled::BundledMethodTestCase* test_case(const char* method_name, size_t index) const;

  const kiln_bundled::BundledProgram* root_;
  Span<const uint8_t> program_;
};

}  // namespace kiln
