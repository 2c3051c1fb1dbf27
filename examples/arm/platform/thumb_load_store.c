// Thumb LDR/STR (word) decoding for the register trap. Encodings from the Armv8-M
// Architecture Reference Manual: LDR/STR (immediate) T1, T3, T4 and (register) T1, T2.
#include "thumb_load_store.h"

/// The 16-bit forms: immediate (T1, 0110 L imm5 Rn Rt) and register offset (T1,
/// 0101 L00 Rm Rn Rt). Only r0-r7.
static int decode_16bit(uint16_t hw1, thumb_load_store* out) {
  if ((hw1 & 0xF000u) == 0x6000u) {
    out->is_load = (hw1 >> 11) & 1u;
  } else if ((hw1 & 0xF600u) == 0x5000u) {
    out->is_load = (hw1 >> 11) & 1u;
  } else {
    return 0;
  }
  out->rt = hw1 & 7u;
  out->rn = (hw1 >> 3) & 7u;
  out->length = 2;
  return 1;
}

/// The 32-bit forms: 1111 1000 1L00 Rn (imm12, T3) and 1111 1000 0L00 Rn (imm8 with
/// P/U/W, T4; or register offset with a shift of 0-3, T2).
static int decode_32bit(uint16_t hw1, uint16_t hw2, thumb_load_store* out) {
  const uint32_t op = hw1 & 0xFFE0u;
  if (op != 0xF8C0u && op != 0xF840u) return 0;
  out->is_load = (hw1 >> 4) & 1u;
  out->rn = hw1 & 0xFu;
  out->rt = hw2 >> 12;
  out->length = 4;
  if (out->rn == 15u) return 0;  // a literal load: never a device register
  if (op == 0xF8C0u) return 1;   // imm12
  if ((hw2 & 0x800u) != 0) {     // imm8
    const uint32_t p = (hw2 >> 10) & 1u, u = (hw2 >> 9) & 1u, w = (hw2 >> 8) & 1u;
    if (p != 0 && u != 0 && w == 0) return 0;  // LDRT/STRT: unprivileged, not a driver's access
    if (p == 0 && w == 0) return 0;            // undefined
    const int32_t imm8 = (int32_t)(hw2 & 0xFFu);
    out->writeback = (int)w;
    out->writeback_delta = u != 0 ? imm8 : -imm8;
    if (out->writeback && out->rn == out->rt) return 0;  // unpredictable
    return 1;
  }
  if ((hw2 & 0xFC0u) == 0) {  // register offset, LSL #0-3
    const uint32_t rm = hw2 & 0xFu;
    return rm != 13u && rm != 15u;
  }
  return 0;
}

int thumb_decode_load_store(uint16_t hw1, uint16_t hw2, thumb_load_store* out) {
  out->is_load = 0;
  out->rt = 0;
  out->rn = 0;
  out->writeback = 0;
  out->writeback_delta = 0;
  out->length = 0;
  const int ok = thumb_is_32bit(hw1) ? decode_32bit(hw1, hw2, out) : decode_16bit(hw1, out);
  // PC and SP as the transfer register are a branch and a stack switch: not register I/O.
  return ok && out->rt != 13u && out->rt != 15u;
}

uint32_t thumb_it_advance(uint32_t xpsr) {
  const uint32_t it = ((xpsr >> 8) & 0xFCu) | ((xpsr >> 25) & 0x3u);
  uint32_t next = 0;
  if ((it & 0x7u) != 0) next = (it & 0xE0u) | ((it << 1) & 0x1Fu);
  return (xpsr & ~((0x3Fu << 10) | (0x3u << 25))) | ((next & 0xFCu) << 8) | ((next & 0x3u) << 25);
}
