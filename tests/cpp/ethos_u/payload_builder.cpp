#include "tests/cpp/ethos_u/payload_builder.h"

#include <cstring>

namespace kiln_test {
namespace {

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

std::vector<uint8_t> word_bytes(const std::vector<uint32_t>& words) {
  std::vector<uint8_t> out;
  for (uint32_t w : words) put_u32(out, w);
  return out;
}

// Command word layout (Ethos-U55 TRM): code in bits 0-9, 0x4000 marks a payload word,
// parameter in bits 16-31.
uint32_t cmd0(uint32_t code, uint32_t param) { return code | (param << 16); }

}  // namespace

std::vector<uint8_t> io_block(const std::vector<IoSpec>& ios) {
  std::vector<uint8_t> out;
  put_u32(out, static_cast<uint32_t>(ios.size()));
  for (const IoSpec& io : ios) {
    for (int32_t d : io.shape) put_u32(out, static_cast<uint32_t>(d));
    put_u32(out, static_cast<uint32_t>(io.element_size));
    put_u32(out, static_cast<uint32_t>(io.offset));
    put_u32(out, static_cast<uint32_t>(io.region));
  }
  return out;
}

std::vector<BlockSpec> payload_blocks(const std::vector<uint32_t>& command_words,
                                      const std::vector<uint8_t>& weights, uint32_t scratch_size,
                                      const std::vector<IoSpec>& inputs,
                                      const std::vector<IoSpec>& outputs) {
  std::vector<uint8_t> scratch;
  put_u32(scratch, scratch_size);
  return {{"vela_bin_stream", {}},
          {"cmd_data", word_bytes(command_words)},
          {"weight_data", weights},
          {"scratch_size", scratch},
          {"inputs", io_block(inputs)},
          {"outputs", io_block(outputs)},
          {"vela_end_stream", {}}};
}

std::vector<uint8_t> pack_blocks(const std::vector<BlockSpec>& blocks) {
  std::vector<uint8_t> out;
  for (const BlockSpec& block : blocks) {
    uint8_t name[16] = {};
    std::memcpy(name, block.name.data(), block.name.size() < 16 ? block.name.size() : 16);
    out.insert(out.end(), name, name + 16);
    put_u32(out, block.length_override >= 0 ? static_cast<uint32_t>(block.length_override)
                                            : static_cast<uint32_t>(block.data.size()));
    out.push_back(block.external_flag);
    out.insert(out.end(), 11, 0);
    out.insert(out.end(), block.data.begin(), block.data.end());
    while (out.size() % 16 != 0) out.push_back(0);
  }
  return out;
}

std::vector<uint32_t> dma_copy_stream(uint32_t src, uint32_t dst, uint32_t length) {
  constexpr uint32_t kPayload = 0x4000;
  return {cmd0(0x130, 1),              // NPU_SET_DMA0_SRC_REGION: region 1
          cmd0(0x131, 1),              // NPU_SET_DMA0_DST_REGION: region 1
          0x030 | kPayload, src,       // NPU_SET_DMA0_SRC
          0x031 | kPayload, dst,       // NPU_SET_DMA0_DST
          0x032 | kPayload, length,    // NPU_SET_DMA0_LEN
          cmd0(0x010, 0),              // NPU_OP_DMA_START
          cmd0(0x011, 0),              // NPU_OP_DMA_WAIT
          cmd0(0x000, 0xffff)};        // NPU_OP_STOP
}

}  // namespace kiln_test
