// Module: a program's methods by name, loaded on first use, state kept until reset.
#include "runtime/host/module.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "program_builder.h"
#include "runtime/executor/buffer_data_loader.h"
#include "test_support.h"

namespace {

using kiln::Error;
using kiln::EValue;
using kiln::Module;
using kiln_test::FloatTensor;

/// The stateful test program with a second method, "reset", that adds nothing.
std::vector<uint8_t> two_method_program() {
  kiln_test::ProgramSpec spec = kiln_test::state_program_spec();
  kiln_test::PlanSpec reset = spec.plans[0];
  reset.name = "reset";
  reset.instructions.clear();
  spec.plans.push_back(reset);
  return kiln_test::build_program(spec);
}

std::string write_temp_file(const std::vector<uint8_t>& bytes) {
  // One file per test: ctest runs the test cases in parallel processes.
  const std::string path = ::testing::TempDir() + "kiln_module_test_" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".pte";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                               static_cast<std::streamsize>(bytes.size()));
  return path;
}

float first_output(const std::vector<EValue>& outputs) {
  return outputs.at(0).to_tensor().const_data_ptr<float>()[0];
}

class ModuleTest : public ::testing::Test {
 protected:
  void SetUp() override { kiln_test::register_test_kernels(); }
};

TEST_F(ModuleTest, RunsMethodsByNameAndKeepsTheirState) {
  const std::string path = write_temp_file(two_method_program());
  auto module = Module::load(path.c_str());
  ASSERT_TRUE(module.ok()) << kiln::error_name(module.error());
  Module& m = **module;
  ASSERT_EQ(m.num_methods(), 2u);
  EXPECT_STREQ(*m.method_name(0), "forward");
  EXPECT_STREQ(*m.method_name(1), "reset");
  EXPECT_FALSE(m.is_method_loaded("forward"));
  ASSERT_TRUE(m.method_meta("forward").ok());

  const float initial = kiln_test::state_program_initial()[0];
  FloatTensor x({2, 3}, std::vector<float>(6, 2.f));
  const EValue inputs[] = {EValue(&x.tensor)};
  for (int call = 1; call <= 3; ++call) {
    auto outputs = m.forward({inputs, 1});
    ASSERT_TRUE(outputs.ok()) << kiln::error_name(outputs.error());
    EXPECT_FLOAT_EQ(first_output(*outputs), initial + 2.f * call);
  }
  EXPECT_TRUE(m.is_method_loaded("forward"));
  // Each method has its own memory: "reset" sees the program's initial state.
  auto reset = m.execute("reset", {inputs, 1});
  ASSERT_TRUE(reset.ok());
  EXPECT_FLOAT_EQ(first_output(*reset), initial);
  // Loading "forward" again brings its state back to the initial values.
  ASSERT_EQ(m.reset_method("forward"), Error::Ok);
  auto after_reset = m.forward({inputs, 1});
  ASSERT_TRUE(after_reset.ok());
  EXPECT_FLOAT_EQ(first_output(*after_reset), initial + 2.f);
  std::remove(path.c_str());
}

TEST_F(ModuleTest, NamesBadMethodsAndInputs) {
  const std::vector<uint8_t> bytes = two_method_program();
  auto module = Module::load(std::make_unique<kiln::BufferDataLoader>(bytes.data(), bytes.size()));
  ASSERT_TRUE(module.ok());
  Module& m = **module;
  FloatTensor x({2, 3}, std::vector<float>(6, 1.f));
  const EValue inputs[] = {EValue(&x.tensor), EValue(&x.tensor)};
  EXPECT_EQ(m.execute("step", {inputs, 1}).error(), Error::NotFound);
  EXPECT_EQ(m.load_method("step"), Error::NotFound);
  EXPECT_EQ(m.reset_method("step"), Error::NotFound);
  EXPECT_EQ(m.method_meta("step").error(), Error::NotFound);
  EXPECT_EQ(m.forward({inputs, 2}).error(), Error::InputCountMismatch);
  FloatTensor wrong({3, 2}, std::vector<float>(6, 1.f));
  const EValue wrong_inputs[] = {EValue(&wrong.tensor)};
  EXPECT_EQ(m.forward({wrong_inputs, 1}).error(), Error::InputShapeMismatch);
}

TEST_F(ModuleTest, ReportsAnUnreadableFile) {
  EXPECT_EQ(Module::load("/nonexistent/kiln/model.pte").error(), Error::AccessFailed);
  EXPECT_EQ(Module::load(static_cast<const char*>(nullptr)).error(), Error::InvalidArgument);
  const std::vector<uint8_t> garbage(64, 0xAB);
  EXPECT_EQ(Module::load(std::make_unique<kiln::BufferDataLoader>(garbage.data(), garbage.size())).error(),
            Error::ProgramBadIdentifier);
}

}  // namespace
