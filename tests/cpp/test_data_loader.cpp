// BufferDataLoader and FileDataLoader.
#include "runtime/executor/data_loader.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "runtime/executor/buffer_data_loader.h"
#include "runtime/executor/file_data_loader.h"

namespace {

using kiln::Error;

TEST(BufferDataLoader, ServesRangesInPlace) {
  const uint8_t data[] = {1, 2, 3, 4, 5};
  kiln::BufferDataLoader loader(data, sizeof(data));
  EXPECT_EQ(loader.size(), 5u);
  auto range = loader.load(1, 3);
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(range->data(), data + 1);
  EXPECT_EQ(range->size(), 3u);
  EXPECT_TRUE(loader.load(5, 0).ok());
  EXPECT_EQ(loader.load(3, 3).error(), Error::ProgramTruncated);
  EXPECT_EQ(loader.load(6, 0).error(), Error::ProgramTruncated);
  EXPECT_EQ(loader.load(2, SIZE_MAX).error(), Error::ProgramTruncated);
}

class FileDataLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "kiln_file_loader_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".bin";
    contents_.resize(1000);
    for (size_t i = 0; i < contents_.size(); ++i) contents_[i] = static_cast<uint8_t>(i * 7);
    FILE* f = std::fopen(path_.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(contents_.data(), 1, contents_.size(), f), contents_.size());
    std::fclose(f);
  }
  void TearDown() override { std::remove(path_.c_str()); }

  std::string path_;
  std::vector<uint8_t> contents_;
};

TEST_F(FileDataLoaderTest, ReadsTheWholeFileAligned) {
  auto loader = kiln::FileDataLoader::from(path_.c_str());
  ASSERT_TRUE(loader.ok());
  EXPECT_EQ(loader->size(), contents_.size());
  auto all = loader->load(0, contents_.size());
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(all->data()) % 16, 0u);
  EXPECT_EQ(std::memcmp(all->data(), contents_.data(), contents_.size()), 0);
  EXPECT_EQ(loader->load(999, 2).error(), Error::ProgramTruncated);
  EXPECT_EQ(loader->load(SIZE_MAX, 2).error(), Error::ProgramTruncated);
}

TEST_F(FileDataLoaderTest, MovesOwnership) {
  auto loader = kiln::FileDataLoader::from(path_.c_str());
  ASSERT_TRUE(loader.ok());
  kiln::FileDataLoader moved(std::move(*loader));
  EXPECT_EQ(moved.size(), contents_.size());
  EXPECT_EQ(loader->size(), 0u);
  EXPECT_EQ(loader->load(0, 1).error(), Error::InvalidState);
  auto other = kiln::FileDataLoader::from(path_.c_str());
  ASSERT_TRUE(other.ok());
  *other = std::move(moved);
  EXPECT_EQ((*other->load(10, 1))[0], contents_[10]);
}

TEST(FileDataLoader, ReportsAMissingFile) {
  auto loader = kiln::FileDataLoader::from("/nonexistent/kiln/program.pte");
  EXPECT_EQ(loader.error(), Error::AccessFailed);
  EXPECT_EQ(kiln::FileDataLoader::from(nullptr).error(), Error::InvalidArgument);
  // A directory opens on Linux but cannot be read as a file.
  EXPECT_EQ(kiln::FileDataLoader::from("/").error(), Error::AccessFailed);
}

}  // namespace
