#include "runtime/kernel/operator_registry.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using kiln::Error;
using kiln::Kernel;

void kernel_a(kiln::KernelContext&, kiln::Span<kiln::EValue*>) {}
void kernel_b(kiln::KernelContext&, kiln::Span<kiln::EValue*>) {}

TEST(OperatorRegistry, FindsKernelsByNameAndOverload) {
  const Kernel kernels[] = {{"aten::add.out", kernel_a}, {"aten::add.Scalar_out", kernel_b},
                            {"kiln::plain", kernel_b}};
  ASSERT_EQ(kiln::register_kernels(kernels), Error::Ok);
  EXPECT_EQ(kiln::get_op_function("aten::add", "out"), &kernel_a);
  EXPECT_EQ(kiln::get_op_function("aten::add", "Scalar_out"), &kernel_b);
  EXPECT_EQ(kiln::get_op_function("kiln::plain", ""), &kernel_b);
  EXPECT_EQ(kiln::get_op_function("kiln::plain", nullptr), &kernel_b);
  EXPECT_EQ(kiln::get_op_function("aten::add", ""), nullptr);
  EXPECT_EQ(kiln::get_op_function("aten::ad", "out"), nullptr);
  EXPECT_EQ(kiln::get_op_function("aten::add", "ou"), nullptr);
  EXPECT_EQ(kiln::get_op_function("aten::add.out", ""), &kernel_a);
  EXPECT_EQ(kiln::get_op_function(nullptr, "out"), nullptr);
  EXPECT_GE(kiln::registered_kernels().size(), 3u);
}

TEST(OperatorRegistry, RejectsDuplicatesWithoutAddingAnything) {
  const Kernel first[] = {{"dup::x.out", kernel_a}};
  ASSERT_EQ(kiln::register_kernels(first), Error::Ok);
  const size_t before = kiln::registered_kernels().size();
  const Kernel again[] = {{"dup::y.out", kernel_a}, {"dup::x.out", kernel_b}};
  EXPECT_EQ(kiln::register_kernels(again), Error::RegistrationAlreadyRegistered);
  const Kernel twice_in_batch[] = {{"dup::z.out", kernel_a}, {"dup::z.out", kernel_b}};
  EXPECT_EQ(kiln::register_kernels(twice_in_batch), Error::RegistrationAlreadyRegistered);
  EXPECT_EQ(kiln::registered_kernels().size(), before);
  EXPECT_EQ(kiln::get_op_function("dup::y", "out"), nullptr);
  const Kernel unnamed[] = {{nullptr, kernel_a}};
  EXPECT_EQ(kiln::register_kernels(unnamed), Error::InvalidArgument);
  const Kernel no_function[] = {{"dup::f.out", nullptr}};
  EXPECT_EQ(kiln::register_kernels(no_function), Error::InvalidArgument);
}

TEST(OperatorRegistry, StopsAtItsCapacity) {
  std::vector<std::string> names;
  for (int i = 0; i < KILN_MAX_KERNELS + 1; ++i) names.push_back("cap::k" + std::to_string(i) + ".out");
  Error last = Error::Ok;
  size_t added = 0;
  for (const std::string& name : names) {
    const Kernel one[] = {{name.c_str(), kernel_a}};
    last = kiln::register_kernels(one);
    if (last != Error::Ok) break;
    ++added;
  }
  EXPECT_EQ(last, Error::RegistrationExceedingMax);
  EXPECT_EQ(kiln::registered_kernels().size(), static_cast<size_t>(KILN_MAX_KERNELS));
  EXPECT_LE(added, static_cast<size_t>(KILN_MAX_KERNELS));
  // `names` must outlive the registry's pointers: keep it alive to the end of the process.
  static std::vector<std::string> keep;
  keep = std::move(names);
}

}  // namespace
