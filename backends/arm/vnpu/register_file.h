// The NPU register file as the command stream sets it. Values persist across operations
// (Vela omits writes whose value did not change), so an operation reads whatever the stream
// wrote last, or the reset value 0.
#pragma once

#include <cstdint>

#include "backends/arm/vnpu/commands.h"

namespace kiln::vnpu {

class RegisterFile final {
 public:
  /// Every register back to its reset value (0).
  void clear();

  void set_cmd0(uint32_t code, uint16_t param) { cmd0_[code & 0xff] = param; }
  void set_cmd1(uint32_t code, uint16_t param, uint32_t payload) {
    cmd1_param_[code & 0xff] = param;
    cmd1_[code & 0xff] = payload;
  }

  /// The 16-bit parameter of a cmd0 register.
  uint16_t get(Cmd0 reg) const { return cmd0_[static_cast<uint32_t>(reg) & 0xff]; }
  /// The same parameter read as a signed 16-bit value (zero points, activation limits).
  int32_t get_signed(Cmd0 reg) const { return static_cast<int16_t>(get(reg)); }
  /// The payload word of a cmd1 register.
  uint32_t get(Cmd1 reg) const { return cmd1_[static_cast<uint32_t>(reg) & 0xff]; }
  /// The 16-bit parameter that came with a cmd1 register (e.g. the OFM_SCALE shift).
  uint16_t param(Cmd1 reg) const { return cmd1_param_[static_cast<uint32_t>(reg) & 0xff]; }

 private:
  uint16_t cmd0_[kNumCmd0Registers] = {};
  uint32_t cmd1_[kNumCmd1Registers] = {};
  uint16_t cmd1_param_[kNumCmd1Registers] = {};
};

inline void RegisterFile::clear() { *this = RegisterFile(); }

}  // namespace kiln::vnpu
