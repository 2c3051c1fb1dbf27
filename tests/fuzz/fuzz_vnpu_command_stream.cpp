// libFuzzer target: command streams through the public VirtualNpu::run API.
//
// Input: a 13-byte header — target index (fuzz_inputs.h), the stream's length in 32-bit
// words, the scratch (region 1) and fast scratch (region 2) sizes, little-endian u32s,
// each capped — then the stream (a COP1 payload or bare commands), then region 0 (the
// weights, read-only). make_seeds.py writes real Vela output in this form. Any result is
// fine except a crash, a hang or a sanitizer report.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/fuzz/fuzz_inputs.h"

namespace {

constexpr size_t kHeaderBytes = 13;
constexpr uint32_t kMaxScratchBytes = 1u << 20;
constexpr uint32_t kMaxFastScratchBytes = 512u << 10;

uint32_t read_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kiln::fuzz::quiet_log();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kiln;
  if (size < kHeaderBytes) return 0;
  const vnpu::Config config = fuzz::limited_config(fuzz::target_of(data[0]));
  const size_t available_words = (size - kHeaderBytes) / 4;
  const size_t words = read_u32(data + 1) < available_words ? read_u32(data + 1) : available_words;
  const uint32_t scratch_bytes = read_u32(data + 5) % (kMaxScratchBytes + 1);
  const uint32_t fast_bytes = read_u32(data + 9) % (kMaxFastScratchBytes + 1);
  // Copies: the stream must be word-aligned, and regions are the NPU's to write.
  std::vector<uint32_t> stream(words);
  if (words > 0) std::memcpy(stream.data(), data + kHeaderBytes, words * 4);
  const uint8_t* weights_begin = data + kHeaderBytes + words * 4;
  std::vector<uint8_t> weights(weights_begin, data + size);
  std::vector<uint8_t> scratch(scratch_bytes);
  std::vector<uint8_t> fast_scratch(fast_bytes);
  static std::vector<uint8_t> work(fuzz::kWorkMemoryBytes);

  vnpu::Region regions[3];
  regions[0] = {weights.data(), weights.size(), /*read_only=*/true};
  regions[1] = {scratch.data(), scratch.size()};
  regions[2] = {fast_scratch.data(), fast_scratch.size()};
  vnpu::VirtualNpu npu(config, {work.data(), work.size()});
  vnpu::Counters counters;
  vnpu::OpRecord records[8];
  size_t num_records = 0;
  // Hostile command streams fail by design; only a crash is a finding.
  (void)npu.run({stream.data(), stream.size()}, {regions, 3}, &counters, {records, 8},
                &num_records);
  return 0;
}
