// Builds Ethos-U delegate payloads (ExecuTorch's block format) for the C++ tests, from
// plain values, so that a test can take a valid payload and break one thing.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln_test {

struct IoSpec {
  std::array<int32_t, 6> shape = {1, 1, 1, 1, 1, 1};
  int32_t element_size = 1;
  int32_t offset = 0;
  int32_t region = 1;
};

struct BlockSpec {
  std::string name;
  std::vector<uint8_t> data;
  uint8_t external_flag = 0;
  /// Written as the length instead of data.size() when >= 0.
  int64_t length_override = -1;
};

/// The blocks of a payload, in order (vela_bin_stream ... vela_end_stream).
std::vector<BlockSpec> payload_blocks(const std::vector<uint32_t>& command_words,
                                      const std::vector<uint8_t>& weights, uint32_t scratch_size,
                                      const std::vector<IoSpec>& inputs,
                                      const std::vector<IoSpec>& outputs);

/// Serializes blocks: 16-byte name, uint32 length, flag, 11 reserved bytes, data padded to 16.
std::vector<uint8_t> pack_blocks(const std::vector<BlockSpec>& blocks);

/// The bytes of an "inputs"/"outputs" block.
std::vector<uint8_t> io_block(const std::vector<IoSpec>& ios);

/// Bare Ethos-U register commands that copy `length` bytes inside region 1 from `src` to
/// `dst` with one DMA, then stop (a real stream the virtual NPU runs).
std::vector<uint32_t> dma_copy_stream(uint32_t src, uint32_t dst, uint32_t length);

}  // namespace kiln_test
