#include "runtime/platform/log.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

struct Captured {
  std::vector<std::string> messages;
  std::vector<kiln::LogLevel> levels;
};

void capture(kiln::LogLevel level, const char* message, size_t length, void* user) {
  auto* c = static_cast<Captured*>(user);
  EXPECT_EQ(message[length], '\0');
  c->messages.emplace_back(message, length);
  c->levels.push_back(level);
}

TEST(Log, FormatsIntoTheSink) {
  Captured captured;
  kiln::set_log_sink(capture, &captured);
  KILN_LOG(Error, "asked for %zu bytes, %d free", size_t{12}, 3);
  kiln::set_log_sink(nullptr, nullptr);
  KILN_LOG(Error, "not captured");
  ASSERT_EQ(captured.messages.size(), 1u);
  EXPECT_EQ(captured.messages[0], "asked for 12 bytes, 3 free");
  EXPECT_EQ(captured.levels[0], kiln::LogLevel::Error);
}

TEST(Log, TruncatesLongMessagesSafely) {
  Captured captured;
  kiln::set_log_sink(capture, &captured);
  const std::string long_text(1000, 'x');
  KILN_LOG(Error, "%s", long_text.c_str());
  kiln::set_log_sink(nullptr, nullptr);
  ASSERT_EQ(captured.messages.size(), 1u);
  EXPECT_EQ(captured.messages[0].size(), 255u);
  EXPECT_EQ(captured.messages[0].substr(252), "...");
}

TEST(Log, DebugIsCompiledOutAtTheDefaultLevel) {
  Captured captured;
  kiln::set_log_sink(capture, &captured);
  KILN_LOG(Debug, "verbose");
  KILN_LOG(Info, "progress");
  kiln::set_log_sink(nullptr, nullptr);
  ASSERT_EQ(captured.messages.size(), KILN_MIN_LOG_LEVEL <= 0 ? 2u : 1u);
  EXPECT_EQ(captured.messages.back(), "progress");
}

}  // namespace
