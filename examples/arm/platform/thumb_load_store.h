// Decoding the one kind of instruction a trapped device register sees: a 32-bit load or
// store of one word (LDR/STR), in the Thumb encodings compilers emit for a volatile
// uint32_t access — 16-bit immediate and register offset, 32-bit imm12, imm8 with pre/post
// indexing and write-back, and register offset with a shift. Everything else (byte and
// halfword accesses, LDRD/STRD, LDM/STM, unprivileged LDRT/STRT, literal loads, a PC or SP
// transfer register) is refused: the register trap names it instead of guessing.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One decoded LDR/STR of a word.
typedef struct {
  /// 1 for LDR (device -> register), 0 for STR.
  int is_load;
  /// The transfer register (0-12 or 14).
  uint32_t rt;
  /// The base register; with write-back it becomes base_after.
  uint32_t rn;
  /// 1 when the instruction updates Rn (pre- or post-indexed with W=1).
  int writeback;
  /// Signed change of Rn on write-back (the immediate; pre/post-indexed forms only).
  int32_t writeback_delta;
  /// 2 or 4 bytes: how far the PC moves past it.
  uint32_t length;
} thumb_load_store;

/// Decodes the instruction whose first halfword is `hw1` (and, for a 32-bit encoding,
/// second `hw2`) into `*out`. Returns 1 when it is a supported word LDR/STR, 0 otherwise.
int thumb_decode_load_store(uint16_t hw1, uint16_t hw2, thumb_load_store* out);

/// True for a first halfword that starts a 32-bit Thumb instruction.
static inline int thumb_is_32bit(uint16_t hw1) { return (hw1 >> 11) >= 0x1d; }

/// xPSR after one instruction of an IT block has executed (the architecture's ITAdvance):
/// the IT bits (xPSR[26:25] and [15:10]) move on, or clear after the block's last one.
uint32_t thumb_it_advance(uint32_t xpsr);

#ifdef __cplusplus
}  // extern "C"
#endif
