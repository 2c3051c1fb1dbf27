// Per-operator test cases of the cortex_m:: kernels: reads a case file written by
// tests/python/cortex_m/make_kernel_cases.py (its docstring describes the format), runs
// each case's kernel through the operator registry and compares the output with the
// expected one, which ExecuTorch's Python reference implementation computed.
//
// Shared by the host GoogleTest (test_kernel_cases.cpp, the portable flavour) and the
// QEMU firmware (tests/firmware/cortex_m_kernels, the MVE or DSP flavour): no heap, no
// exceptions; the caller gives the memory. A malformed file is refused with
// Error::InvalidProgram and a log line, never read out of bounds.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/error.h"

namespace kiln_test {
namespace cortex_m_cases {

/// What one case did.
struct CaseOutcome {
  uint32_t index = 0;
  const char* name = nullptr;  // not NUL-terminated: name_length bytes
  size_t name_length = 0;
  const char* op = nullptr;  // e.g. "cortex_m::quantized_conv2d", op_length bytes
  size_t op_length = 0;
  kiln::Error error = kiln::Error::Ok;  // the kernel's failure state (or the harness's)
  size_t elements = 0;        // output elements compared
  size_t differing = 0;       // elements beyond the tolerance
  int64_t max_difference = 0;  // largest |got - expected| (output steps; ULPs for float)
  int32_t tolerance = 0;
  int64_t first_index = -1;   // first element beyond the tolerance, -1 if none
  uint64_t kernel_ticks = 0;  // the kernel call's duration by CaseMemory::clock (0 without one)
  bool passed() const { return error == kiln::Error::Ok && differing == 0; }
};

using CaseCallback = void (*)(void* context, const CaseOutcome& outcome);

/// Memory the cases run in: `work` holds each case's outputs and scratch tensors,
/// `temp` is the kernels' temp allocator (both reused from case to case).
struct CaseMemory {
  uint8_t* work = nullptr;
  size_t work_bytes = 0;
  uint8_t* temp = nullptr;
  size_t temp_bytes = 0;
  /// Optional: a tick counter, read around each kernel call (CaseOutcome::kernel_ticks).
  uint64_t (*clock)() = nullptr;
};

/// Number of cases in the file, or an error (InvalidProgram) for a bad header.
kiln::Error count_cases(const uint8_t* file, size_t size, uint32_t* count);

/// Runs every case, calling `callback` after each. Returns InvalidProgram if the file is
/// malformed (cases up to that point have run), Ok otherwise, whatever the outcomes.
kiln::Error run_cases(const uint8_t* file, size_t size, const CaseMemory& memory,
                      CaseCallback callback, void* context);

}  // namespace cortex_m_cases
}  // namespace kiln_test
