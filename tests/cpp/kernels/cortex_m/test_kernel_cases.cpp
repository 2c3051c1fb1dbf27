// Every cortex_m:: kernel (portable flavour, the host build) on the cases of
// tests/python/cortex_m/make_kernel_cases.py: odd sizes, channel counts that are not
// multiples of the vector widths, padding, strides, dilation and each activation clamp,
// against the outputs ExecuTorch 1.5.1's Python reference implementations compute
// (generated at build time in the ExecuTorch venv; KILN_CORTEX_M_CASES_FILE).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kernels/cortex_m/register_cortex_m_kernels.h"
#include "kernels/cortex_m/util/flavour.h"
#include "tests/cpp/kernels/cortex_m/kernel_cases.h"

namespace {

using kiln::Error;
namespace cases = kiln_test::cortex_m_cases;

/// The case file's bytes, 16-byte aligned as the reader requires.
struct CaseFile {
  std::unique_ptr<uint8_t[]> storage;
  uint8_t* data = nullptr;
  size_t size = 0;
};

/// The case file: KILN_CORTEX_M_CASES (environment) if set, else the one made at build time.
const char* case_file_path() {
  const char* path = std::getenv("KILN_CORTEX_M_CASES");
  return path != nullptr ? path : KILN_CORTEX_M_CASES_FILE;
}

CaseFile read_case_file(const char* path) {
  CaseFile file;
  std::FILE* f = std::fopen(path, "rb");
  if (f == nullptr) return file;
  std::fseek(f, 0, SEEK_END);
  const long size = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  file.storage.reset(new uint8_t[static_cast<size_t>(size) + 16]);
  file.data = file.storage.get() + (16 - reinterpret_cast<uintptr_t>(file.storage.get()) % 16) % 16;
  file.size = std::fread(file.data, 1, static_cast<size_t>(size), f);
  std::fclose(f);
  return file;
}

struct Collected {
  std::vector<cases::CaseOutcome> outcomes;
};

void collect(void* context, const cases::CaseOutcome& outcome) {
  static_cast<Collected*>(context)->outcomes.push_back(outcome);
}

TEST(CortexMKernelCases, EveryCaseMatchesExecuTorchsReference) {
  const Error registered = kiln::register_cortex_m_kernels();
  ASSERT_TRUE(registered == Error::Ok || registered == Error::RegistrationAlreadyRegistered);
  CaseFile file = read_case_file(case_file_path());
  ASSERT_NE(file.data, nullptr) << "cannot read " << case_file_path();
  std::vector<uint8_t> work(4 << 20), temp(1 << 20);
  Collected collected;
  const cases::CaseMemory memory{work.data(), work.size(), temp.data(), temp.size()};
  ASSERT_EQ(cases::run_cases(file.data, file.size, memory, collect, &collected), Error::Ok);
  uint32_t count = 0;
  ASSERT_EQ(cases::count_cases(file.data, file.size, &count), Error::Ok);
  ASSERT_EQ(collected.outcomes.size(), count);
  std::set<std::string> operators;
  for (const cases::CaseOutcome& o : collected.outcomes) {
    const std::string name(o.name, o.name_length);
    operators.insert(std::string(o.op, o.op_length));
    EXPECT_EQ(o.error, Error::Ok) << name << " (" << kiln::cortex_m::kernel_flavour() << "): the kernel failed";
    EXPECT_EQ(o.differing, 0u) << name << ": " << o.differing << " of " << o.elements
                               << " elements differ from ExecuTorch's reference (max difference "
                               << o.max_difference << ", first at " << o.first_index << ", tolerance "
                               << o.tolerance << ")";
  }
  // Every cortex_m:: operator of ExecuTorch 1.5.1 has cases, and so does Kiln's own
  // kiln::quantized_layer_norm.
  EXPECT_EQ(operators.size(), 24u);
}

TEST(CortexMKernelCases, AMalformedCaseFileIsRefused) {
  CaseFile file = read_case_file(case_file_path());
  ASSERT_NE(file.data, nullptr);
  std::vector<uint8_t> work(4 << 20), temp(1 << 20);
  const cases::CaseMemory memory{work.data(), work.size(), temp.data(), temp.size()};
  Collected collected;
  // Cut inside the first record: the reader stops there, naming it, and reads nothing beyond.
  const size_t cut = 16 + 40;
  std::unique_ptr<uint8_t[]> copy(new uint8_t[cut + 16]);
  uint8_t* aligned = copy.get() + (16 - reinterpret_cast<uintptr_t>(copy.get()) % 16) % 16;
  std::copy(file.data, file.data + cut, aligned);
  EXPECT_EQ(cases::run_cases(aligned, cut, memory, collect, &collected), Error::InvalidProgram);
  EXPECT_TRUE(collected.outcomes.empty());
}

}  // namespace
