// EtdumpWriter on a real Method: every instruction of every run recorded, the written
// ETDump verified by FlatBuffers' own verifier, a full buffer that stops recording and
// counts what it dropped without writing past its end, and intermediate values in the
// debug buffer equal to the method's output; the writer sharing the method's one tracing
// hook with a profiler (EventTracerPair) records what it records alone.
#include "runtime/etdump/etdump_writer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <vector>

#include "kiln_schema/etdump_generated.h"
#include "program_builder.h"
#include "runtime/executor/event_tracer_pair.h"
#include "test_support.h"

namespace {

using kiln::EtdumpWriter;
using kiln::EValue;
using kiln::Error;
using kiln_test::FloatTensor;

class EtdumpWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kiln_test::register_test_kernels();
    harness_.emplace(kiln_test::build_program(kiln_test::add_program_spec()));
    ASSERT_EQ(harness_->load_program(), Error::Ok);
    ASSERT_EQ(harness_->load_method("forward"), Error::Ok);
    ASSERT_EQ(method().set_input(EValue(&x_.tensor), 0), Error::Ok);
  }
  kiln::Method& method() { return harness_->method(); }

  /// Runs the method `runs` times with `writer` attached.
  void run(EtdumpWriter& writer, int runs) {
    method().set_event_tracer(&writer);
    for (int i = 0; i < runs; ++i) ASSERT_EQ(method().execute(), Error::Ok);
    method().set_event_tracer(nullptr);
  }

  /// The verified root of a written dump.
  static const kiln_etdump::ETDump* verified(kiln::Span<const uint8_t> dump) {
    flatbuffers::Verifier verifier(dump.data(), dump.size());
    if (!kiln_etdump::VerifySizePrefixedETDumpBuffer(verifier)) return nullptr;
    return kiln_etdump::GetSizePrefixedETDump(dump.data());
  }

  std::optional<kiln_test::Harness> harness_;
  FloatTensor x_{{2, 3}, {1.5f, -2.f, 0.f, 7.f, 8.25f, -100.f}};
};

TEST_F(EtdumpWriterTest, RecordsEveryInstructionOfEveryRun) {
  alignas(8) static uint8_t buffer[64 * 1024];
  EtdumpWriter writer({buffer, sizeof(buffer)});
  run(writer, 3);
  EXPECT_EQ(writer.dropped_events(), 0u);
  kiln::Result<kiln::Span<const uint8_t>> dump = writer.write();
  ASSERT_TRUE(dump.ok());
  ASSERT_GE(dump->size(), 12u);
  EXPECT_EQ(std::memcmp(dump->data() + 8, "ED00", 4), 0);
  const kiln_etdump::ETDump* root = verified(*dump);
  ASSERT_NE(root, nullptr);
  ASSERT_EQ(root->run_data()->size(), 3u);
  for (const kiln_etdump::RunData* run : *root->run_data()) {
    std::vector<int32_t> instructions;
    for (const kiln_etdump::Event* event : *run->events()) {
      const kiln_etdump::ProfileEvent* profile = event->profile_event();
      if (profile == nullptr) continue;
      EXPECT_GE(profile->end_time(), profile->start_time());
      if (profile->instruction_id() >= 0) instructions.push_back(profile->instruction_id());
    }
    EXPECT_EQ(instructions.size(), method().method_meta().num_instructions());
    for (size_t i = 0; i < instructions.size(); ++i) EXPECT_EQ(instructions[i], static_cast<int32_t>(i));
  }
}

TEST_F(EtdumpWriterTest, FullBufferStopsRecordingAndCountsDrops) {
  // Guard bytes after the buffer the writer is given: it must never touch them.
  alignas(8) static uint8_t memory[8192 + 64];
  std::memset(memory, 0xA5, sizeof(memory));
  EtdumpWriter writer({memory, 8192});
  run(writer, 100);
  EXPECT_GT(writer.recorded_events(), 0u);
  EXPECT_GT(writer.dropped_events(), 0u);
  kiln::Result<kiln::Span<const uint8_t>> dump = writer.write();
  ASSERT_TRUE(dump.ok());
  EXPECT_LE(dump->data() + dump->size(), memory + 8192);
  EXPECT_NE(verified(*dump), nullptr);
  for (size_t i = 8192; i < sizeof(memory); ++i) ASSERT_EQ(memory[i], 0xA5) << "byte " << i;
}

TEST_F(EtdumpWriterTest, TooSmallBufferRecordsNothingAndStillWritesNothingOutOfBounds) {
  alignas(8) static uint8_t memory[16 + 64];
  std::memset(memory, 0xA5, sizeof(memory));
  EtdumpWriter writer({memory, 16});
  run(writer, 2);
  EXPECT_EQ(writer.recorded_events(), 0u);
  EXPECT_GT(writer.dropped_events(), 0u);
  for (size_t i = 16; i < sizeof(memory); ++i) ASSERT_EQ(memory[i], 0xA5) << "byte " << i;
}

TEST_F(EtdumpWriterTest, IntermediateValuesGoToTheDebugBuffer) {
  alignas(8) static uint8_t buffer[64 * 1024];
  alignas(16) static uint8_t debug[4096];
  EtdumpWriter writer({buffer, sizeof(buffer)});
  writer.set_debug_buffer({debug, sizeof(debug)});
  run(writer, 1);
  EXPECT_EQ(writer.dropped_values(), 0u);
  kiln::Result<kiln::Span<const uint8_t>> dump = writer.write();
  ASSERT_TRUE(dump.ok());
  const kiln_etdump::ETDump* root = verified(*dump);
  ASSERT_NE(root, nullptr);
  const kiln_etdump::Tensor* last = nullptr;
  for (const kiln_etdump::Event* event : *root->run_data()->Get(0)->events()) {
    if (event->debug_event() != nullptr && event->debug_event()->debug_entry()->tensor() != nullptr) {
      last = event->debug_event()->debug_entry()->tensor();
    }
  }
  ASSERT_NE(last, nullptr);
  const kiln::Tensor& out = method().get_output(0).to_tensor();
  ASSERT_LE(static_cast<size_t>(last->offset()) + out.nbytes(), writer.debug_buffer_used());
  EXPECT_EQ(std::memcmp(debug + last->offset(), out.const_data_ptr<float>(), out.nbytes()), 0);
}

// A profiler that keeps only the instructions' begin and end.
class CountingProfiler : public kiln::EventTracer {
 public:
  void begin_instruction(uint32_t, uint32_t, const char*) override { ++begun; }
  void end_instruction() override { ++ended; }
  int begun = 0;
  int ended = 0;
};

TEST_F(EtdumpWriterTest, SharesTheTracingHookWithAProfiler) {
  alignas(8) static uint8_t alone_buffer[64 * 1024];
  alignas(8) static uint8_t paired_buffer[64 * 1024];
  alignas(16) static uint8_t alone_debug[4096];
  alignas(16) static uint8_t paired_debug[4096];
  EtdumpWriter alone({alone_buffer, sizeof(alone_buffer)});
  alone.set_debug_buffer({alone_debug, sizeof(alone_debug)});
  run(alone, 2);

  EtdumpWriter paired({paired_buffer, sizeof(paired_buffer)});
  paired.set_debug_buffer({paired_debug, sizeof(paired_debug)});
  CountingProfiler profiler;
  kiln::EventTracerPair both(&profiler, &paired);
  EXPECT_TRUE(both.logs_values());  // the writer's wish, through the pair
  method().set_event_tracer(&both);
  for (int i = 0; i < 2; ++i) ASSERT_EQ(method().execute(), Error::Ok);
  method().set_event_tracer(nullptr);

  EXPECT_GT(profiler.begun, 0);
  EXPECT_EQ(profiler.begun, profiler.ended);
  EXPECT_EQ(paired.recorded_events(), alone.recorded_events());
  ASSERT_EQ(paired.debug_buffer_used(), alone.debug_buffer_used());
  EXPECT_EQ(std::memcmp(paired_debug, alone_debug, alone.debug_buffer_used()), 0);
  kiln::Result<kiln::Span<const uint8_t>> dump = paired.write();
  ASSERT_TRUE(dump.ok());
  EXPECT_NE(verified(*dump), nullptr);
}

}  // namespace
