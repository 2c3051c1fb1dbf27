// Random byte flips of valid programs: load, init and execute must return (an error or
// success) without crashing or reading out of bounds (run under ASan + UBSan).
#include <gtest/gtest.h>

#include <random>

#include "program_builder.h"
#include "runtime/executor/program.h"
#include "test_support.h"

namespace {

using kiln::Error;

/// Pools above this are not worth allocating in a test; the program asked for them
/// because a size field was flipped.
constexpr int64_t kMaxPoolBytes = 1 << 20;

struct Outcome {
  size_t loaded = 0;
  size_t initialized = 0;
  size_t executed = 0;
};

void run_mutated(std::vector<uint8_t> bytes, Outcome& outcome) {
  kiln_test::Harness harness(std::move(bytes));
  if (harness.load_program() != Error::Ok) return;
  ++outcome.loaded;
  for (size_t m = 0; m < harness.program().num_methods(); ++m) {
    auto name = harness.program().get_method_name(m);
    if (!name.ok()) continue;
    auto meta = harness.program().method_meta(*name);
    if (!meta.ok()) continue;
    auto pool = meta->method_allocator_size();
    if (!pool.ok() || *pool > static_cast<size_t>(kMaxPoolBytes)) continue;
    bool sizes_ok = true;
    for (size_t i = 0; i < meta->num_memory_planned_buffers(); ++i) {
      auto size = meta->memory_planned_buffer_size(i);
      sizes_ok = sizes_ok && size.ok() && *size <= kMaxPoolBytes;
    }
    if (!sizes_ok || harness.load_method(*name) != Error::Ok) continue;
    ++outcome.initialized;
    kiln::Method& method = harness.method();
    for (size_t i = 0; i < method.inputs_size(); ++i) {
      auto info = meta->input_tensor_meta(i);
      if (!info.ok() || info->nbytes > static_cast<size_t>(kMaxPoolBytes)) continue;
      // A zero-filled input with exactly the declared shape.
      std::vector<int32_t> sizes(info->sizes.begin(), info->sizes.end());
      std::vector<uint8_t> order(info->dim_order.begin(), info->dim_order.end());
      std::vector<int32_t> strides(sizes.size());
      std::vector<uint8_t> data(info->nbytes + 16);
      kiln::Tensor t(info->scalar_type, static_cast<int32_t>(sizes.size()), sizes.data(),
                     order.data(), strides.data(), data.data());
      // A mutated program may refuse the input: that refusal is what is tested, not the call.
      (void)method.set_input(kiln::EValue(&t), i);
      // Unplanned inputs point at `data`, which dies here: execute below only runs for
      // planned inputs, which were copied.
      if (!info->is_memory_planned) return;
    }
    if (method.execute() == Error::Ok) ++outcome.executed;
  }
}

void fuzz(const kiln_test::ProgramSpec& spec, uint32_t seed, int iterations) {
  kiln_test::register_test_kernels();
  const std::vector<uint8_t> valid = kiln_test::build_program(spec);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<size_t> position(0, valid.size() - 1);
  std::uniform_int_distribution<int> flips(1, 4);
  std::uniform_int_distribution<int> byte(0, 255);
  Outcome outcome;
  for (int it = 0; it < iterations; ++it) {
    std::vector<uint8_t> mutated = valid;
    const int n = flips(rng);
    for (int k = 0; k < n; ++k) mutated[position(rng)] = static_cast<uint8_t>(byte(rng));
    run_mutated(std::move(mutated), outcome);
  }
  // The mutations must leave enough programs intact to exercise init and execute.
  EXPECT_GT(outcome.loaded, 0u);
  EXPECT_GT(outcome.initialized, 0u);
  EXPECT_GT(outcome.executed, 0u);
  std::printf("loaded %zu, initialized %zu, executed %zu of %d\n", outcome.loaded,
              outcome.initialized, outcome.executed, iterations);
}

TEST(ProgramFuzz, RandomByteFlipsOfTheAddProgram) { fuzz(kiln_test::add_program_spec(), 1234, 2000); }

/// The add program plus an IntList kernel, a TensorList and a conditional jump.
kiln_test::ProgramSpec lists_and_jumps_spec() {
  kiln_test::ProgramSpec spec = kiln_test::add_program_spec();
  auto& plan = spec.plans[0];
  plan.values.push_back(kiln_test::int_value(2));                 // 4
  plan.values.push_back(kiln_test::int_list_value({2, 4}));       // 5
  plan.values.push_back(kiln_test::tensor_list_value({0, 3}));    // 6
  plan.values.push_back(kiln_test::bool_value(true));             // 7
  kiln_test::TensorSpec sum;
  sum.scalar_type = 4;
  sum.sizes = {1};
  sum.planned = true;
  sum.memory_offset = 56;
  plan.values.push_back(kiln_test::tensor_value(sum));            // 8
  plan.operators.push_back({"test::sum_ints", "out"});
  kiln_test::InstructionSpec jump;
  jump.kind = kiln_test::InstructionSpec::Kind::JumpFalse;
  jump.a = 7;
  jump.b = 0;
  plan.instructions.push_back(kiln_test::kernel_call(1, {5, 8, 8}));
  plan.instructions.push_back(jump);
  plan.buffer_sizes = {0, 64};
  return spec;
}

TEST(ProgramFuzz, RandomByteFlipsOfAProgramWithListsAndJumps) {
  fuzz(lists_and_jumps_spec(), 99, 2000);
}

/// Small edits keep the flatbuffer structure more often than random bytes, so they
/// reach init and execute with odd indices, sizes and offsets.
void edit_every_byte(const kiln_test::ProgramSpec& spec) {
  kiln_test::register_test_kernels();
  const std::vector<uint8_t> valid = kiln_test::build_program(spec);
  Outcome outcome;
  for (size_t p = 0; p < valid.size(); ++p) {
    const uint8_t b = valid[p];
    for (uint8_t v : {uint8_t(0), uint8_t(1), uint8_t(0x7f), uint8_t(0x80), uint8_t(0xff),
                      uint8_t(b + 1), uint8_t(b - 1)}) {
      if (v == b) continue;
      std::vector<uint8_t> mutated = valid;
      mutated[p] = v;
      run_mutated(std::move(mutated), outcome);
    }
  }
  EXPECT_GT(outcome.executed, 0u);
  std::printf("loaded %zu, initialized %zu, executed %zu\n", outcome.loaded, outcome.initialized,
              outcome.executed);
}

TEST(ProgramFuzz, EverySingleByteEditOfTheAddProgram) {
  edit_every_byte(kiln_test::add_program_spec());
}

TEST(ProgramFuzz, EverySingleByteEditOfAProgramWithListsAndJumps) {
  edit_every_byte(lists_and_jumps_spec());
}

}  // namespace
