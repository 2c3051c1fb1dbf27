// The NPU register file as the command stream sets it. Values persist across operations
// (Vela omits writes whose value did not change), so an operation reads whatever the stream
// wrote last, or the reset value 0. Storage is by raw code; each architecture's decoder
// (u55/decode.cpp, u85/decode.cpp) gives the codes their meaning.
#pragma once

#include <cstdint>

namespace kiln::vnpu {

class RegisterFile final {
 public:
  /// Every register back to its reset value (0).
  void clear() { *this = RegisterFile(); }

  void set_cmd0(uint32_t code, uint16_t param) { cmd0_[code & 0xff] = param; }
  void set_cmd1(uint32_t code, uint16_t param, uint32_t payload) {
    cmd1_param_[code & 0xff] = param;
    cmd1_[code & 0xff] = payload;
  }

  /// The 16-bit parameter of the cmd0 register `code` (0x100-0x1ff).
  uint16_t cmd0(uint32_t code) const { return cmd0_[code & 0xff]; }
  /// The payload word of the cmd1 register `code` (0x000-0x0ff).
  uint32_t cmd1(uint32_t code) const { return cmd1_[code & 0xff]; }
  /// The 16-bit parameter that came with a cmd1 register (e.g. the OFM_SCALE shift).
  uint16_t cmd1_param(uint32_t code) const { return cmd1_param_[code & 0xff]; }
  /// A cmd1 address register: the payload, with bits 32-39 from the parameter's low byte
  /// (always 0 in Ethos-U55/U65 streams).
  uint64_t address(uint32_t code) const {
    return uint64_t{cmd1_[code & 0xff]} | (uint64_t{cmd1_param_[code & 0xff] & 0xffu} << 32);
  }

 private:
  uint16_t cmd0_[256] = {};
  uint32_t cmd1_[256] = {};
  uint16_t cmd1_param_[256] = {};
};

/// Typed accessors for one architecture's code enums (Cmd0/Cmd1 of u55:: or u85::).
template <typename Cmd0, typename Cmd1>
struct Registers {
  const RegisterFile& file;
  uint16_t get(Cmd0 reg) const { return file.cmd0(static_cast<uint32_t>(reg)); }
  int32_t get_signed(Cmd0 reg) const { return static_cast<int16_t>(get(reg)); }
  uint32_t get(Cmd1 reg) const { return file.cmd1(static_cast<uint32_t>(reg)); }
  uint16_t param(Cmd1 reg) const { return file.cmd1_param(static_cast<uint32_t>(reg)); }
  uint64_t address(Cmd1 reg) const { return file.address(static_cast<uint32_t>(reg)); }
};

}  // namespace kiln::vnpu
