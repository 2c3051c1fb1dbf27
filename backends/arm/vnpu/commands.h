// The Ethos-U command word format shared by every architecture, and the COP1 driver payload
// that wraps a command stream. A command is one 32-bit word: bits 0-9 the command code, bits
// 10-13 zero, bits 14-15 the control field (0: cmd0, the word alone; 1: cmd1, one payload word
// follows), bits 16-31 a 16-bit parameter. cmd0 codes below 0x100 start operations, the
// others set registers; cmd1 codes set 32-bit registers from the payload word (an Ethos-U85
// also takes address bits 32-39 from the parameter, and its cmd1 codes from 0x100 are
// operations: BRANCH). The codes of each architecture live in u55/commands.h and
// u85/commands.h; tests/python/arm/vnpu/test_definitions.py checks them against Vela's.
#pragma once

#include <cstdint>

namespace kiln::vnpu {

/// Bit that marks a command with one payload word.
constexpr uint32_t kPayloadFlag = 0x4000;
/// Mask of the command code.
constexpr uint32_t kCodeMask = 0x03ff;
/// Bits 10-13: must be zero in every command.
constexpr uint32_t kReservedMask = 0x3c00;
/// cmd0 codes from here on set registers; below it they start operations.
constexpr uint32_t kFirstCmd0Register = 0x100;
/// cmd1 codes from here on are operations (Ethos-U85 NPU_OP_BRANCH); below it registers.
constexpr uint32_t kFirstCmd1Operation = 0x100;

/// A command code and the name the register description gives it (for logs and tests).
struct CommandName {
  uint16_t code;
  const char* name;
};

/// The name of `code` in a table of CommandName, or nullptr.
template <unsigned N>
constexpr const char* find_command_name(const CommandName (&table)[N], uint32_t code) {
  for (const CommandName& entry : table) {
    if (entry.code == code) return entry.name;
  }
  return nullptr;
}

/// COP1 driver payload ("custom operator payload") action ids: low 8 bits of a tag word,
/// bits 8-15 reserved (CmdStream: length bits 16-23), bits 16-31 the parameter.
enum class DriverAction : uint8_t { Reserved = 0, Config = 1, CmdStream = 2, ReadApb = 3,
                                    DumpShram = 4, Nop = 5 };
/// "COP1" as a little-endian word.
constexpr uint32_t kCop1Magic = 0x31504f43;

/// Rounding of a scaling step (neutral names; each architecture maps its register values).
enum class RoundMode : uint8_t {
  /// TOSA/TFLite double rounding: half away from zero at the shift, plus the extra half step
  /// at bit 30 (or 30 - dbl_rnd) for shifts above 31.
  DoubleSymmetric = 0,
  /// Round half up (add 2^(shift-1), floor).
  Natural = 1,
  /// Double rounding without the sign: the extra step is always added.
  DoubleAsymmetric = 2,
  /// Round half away from zero.
  Symmetric = 3,
  /// Toward zero.
  TruncateToZero = 4,
  /// Toward minus infinity (floor).
  TruncateToLower = 5,
};

/// Feature map layout.
enum class DataFormat : uint8_t { Nhwc = 0, Nhcwb16 = 1 };
/// IFM upscaling (nearest: each value repeated 2x2; zeros: value then three zeros).
enum class UpscaleMode : uint8_t { None = 0, Nearest = 1, Zeros = 2 };

}  // namespace kiln::vnpu
